"""A cancelled captured step ends ``rolled_back`` only when it acted on nothing outside its
layers: on the real root daemon, whose /run is a decoy (a scratch directory bound over it in a
private mount namespace, tests/decoyns.py) holding a FIFO the test reads, an approved step
that writes into that FIFO and then waits is cancelled. The write was refused by the kernel
(Landlock: the step's output says so), the reader got nothing, and only then is the plan's
``rolled_back`` true. Nothing here reaches the machine's own /run."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from anna_common.plan import ActionPlan
from anna_common.protocol.models import ExecEvent
from anna_common.risk import tiers
from tests.daemonfix import IS_ROOT, REPO, RunningDaemon, make_plan, new_daemon, stop_and_remove
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="the capture needs a root daemon")


@pytest.fixture
def decoy_run() -> Iterator[tuple[RunningDaemon, Path]]:
    """A system daemon whose /run is a scratch directory holding the FIFO ``initctl``."""
    daemon = new_daemon(user_mode=False)
    run = daemon.base / "decoy-run"
    run.mkdir()
    os.mkfifo(run / "initctl", 0o600)
    daemon.argv = ["unshare", "-m", "--propagation", "private", sys.executable,
                   str(REPO / "tests" / "decoyns.py"), str(run), "/run", "--", *daemon.argv]
    try:
        yield daemon.start(), run / "initctl"
    finally:
        stop_and_remove(daemon)


def test_a_cancelled_step_that_tried_a_fifo_ends_rolled_back_with_nothing_written(
        decoy_run: tuple[RunningDaemon, Path]) -> None:
    daemon, fifo = decoy_run
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a writer's open would not wait
    try:
        client = daemon.client()
        response = client.submit(ActionPlan.model_validate(make_plan([
            ("poke", "echo 6 > /run/initctl; echo tried; sleep 60", "HIGH")])))
        events: list[ExecEvent] = []
        stream = client.execute(response.plan_id, response.digest, confirmed=True,
                                high_confirmed=True,
                                confirm_word=tiers.plan_word(response.annotated))
        worker = threading.Thread(target=lambda: events.extend(stream))
        worker.start()

        def output() -> str:
            return "".join(e.output or "" for e in events if e.type == "step_output")

        wait_until(lambda: "tried" in output(), "the step to try the FIFO",
                   saw=lambda: (events, daemon.output()))
        record = client.cancel(response.plan_id)
        worker.join(timeout=30)
        assert "Permission denied" in output(), output()
        try:  # no writer left: end of file at once, or what a writer put there first
            got = os.read(reader, 64)
        except BlockingIOError:
            got = b""
        assert got == b"", got  # nothing reached the reader
        assert record.status == "rolled_back", record
        assert record.error is not None and record.error.code == "CANCELLED"
    finally:
        os.close(reader)
