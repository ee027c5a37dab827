"""Issue 22 item 5: health tells the truth about the state disk. With the journal reserve in
place and the rest of the disk full, every submit is refused; health and ``annactl doctor``
say so (they said all was well before), and recover by themselves once there is room."""

from __future__ import annotations

import pytest

from anna_common.errors import AnnaError, ErrorCode
from tests.daemon.test_faults import (
    annactl_doctor,
    fill,
    full_disk_daemon,  # noqa: F401 - the fixture, by name
    small_plan,
    submit,
)
from tests.daemonfix import RunningDaemon
from tests.waiting import wait_until


def test_health_says_submits_fail_when_only_the_reserve_is_left(
        request: pytest.FixtureRequest) -> None:
    full: RunningDaemon = request.getfixturevalue("full_disk_daemon")
    daemon = full.start()
    client = daemon.client()
    assert client.health().state_problem is None
    assert (daemon.state / "journal.reserve").exists()
    filler = fill(daemon.state)
    assert (daemon.state / "journal.reserve").exists()  # the reserve alone said "fine"
    problem = client.health().state_problem
    assert problem is not None and "full" in problem and "BACKUP_REFUSED" in problem, problem
    with pytest.raises(AnnaError) as refused:
        submit(client, small_plan(daemon.home, "a.txt"))
    assert refused.value.code is ErrorCode.BACKUP_REFUSED, refused.value
    doctor = annactl_doctor(daemon)
    assert doctor["status"] == "warn" and "full" in doctor["detail"], doctor
    filler.unlink()
    wait_until(lambda: client.health().state_problem is None, "health to clear",
               saw=lambda: client.health().state_problem)
    submit(client, small_plan(daemon.home, "b.txt"))
