"""Health and ``annactl doctor`` say what a daemon cannot do with a step: capture its file
writes (then every file step is HIGH, "runs live"), or give a captured root step a network
walled off from this machine's own services (then such steps run with no network at all).
Before, only the daemon's log said either, once."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from annactl.commands.doctor import check_capture
from tests.daemon.test_faults import annactl_doctor
from tests.daemonfix import REPO, new_daemon, stop_and_remove

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a root daemon builds the wall")


def test_a_root_daemon_whose_wall_holds_says_nothing_is_missing() -> None:
    daemon = new_daemon(user_mode=False)
    try:
        health = daemon.start().client().health()
        assert health.capture_problem is None, health
        assert health.network_problem is None, health
        assert annactl_doctor(daemon, "capture")["status"] == "ok"
    finally:
        stop_and_remove(daemon)


def test_a_root_daemon_without_cgroup_v2_says_its_captured_steps_have_no_network() -> None:
    # an empty directory over /sys/fs/cgroup in the daemon's own mount namespace: a machine
    # where the wall cannot be hung anywhere (the real hierarchy is untouched)
    daemon = new_daemon(user_mode=False)
    empty = daemon.base / "no-cgroups"
    empty.mkdir()
    daemon.argv = ["unshare", "-m", "--propagation", "private", sys.executable,
                   str(REPO / "tests" / "decoyns.py"), str(empty), "/sys/fs/cgroup", "--",
                   *daemon.argv]
    try:
        health = daemon.start().client().health()
        assert health.network_problem is not None, health
        assert "loopback wall" in health.network_problem, health
        doctor = annactl_doctor(daemon, "capture")
        assert doctor["status"] == "warn", doctor
        assert "no network" in doctor["detail"] and "loopback wall" in doctor["detail"], doctor
    finally:
        stop_and_remove(daemon)


@pytest.mark.parametrize(("health", "status", "words"), [
    ({"capture_problem": "user namespaces are off (ANNAD_CAPTURE_USERNS=false)",
      "network_problem": None}, "warn", "file steps run live"),
    ({"capture_problem": None, "network_problem": "the loopback wall could not be set up: x"},
     "warn", "no network"),
    ({"capture_problem": None, "network_problem": None}, "ok", "captured"),
    ({"state_problem": None}, "skip", "does not say"),  # a daemon from before these fields
])
def test_the_doctor_line_for_each_answer(health: dict[str, Any], status: str,
                                         words: str) -> None:
    check = check_capture(health)
    assert check.status == status and words in check.detail, check


def test_the_fields_are_in_the_documented_health_example() -> None:
    text = Path(REPO / "docs" / "protocol.md").read_text()
    assert '"capture_problem":null' in text.replace(" ", "").replace("\n", "")
    assert "network_problem" in text
