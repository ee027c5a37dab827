"""A per-user daemon whose state directory is on overlayfs (a container booted on an image)
cannot capture, and says why in those words, not the probe mount's bare ``Invalid argument``.

The daemon of tests/daemon/test_capture_user.py (uid 65534), started in a private mount
namespace where its state directory is an overlay (tests/daemon/overlay_mount.sh): its file
step is HIGH, "runs live; Anna cannot undo it", with the reason naming the overlay.
"""

from __future__ import annotations

import json
import os

from tests.daemon.test_capture_user import (
    OWNER,
    REPO,
    _owned_daemon,
    call,
    finished,
    pytestmark,
    start,
    workdir,
)
from tests.daemonfix import stop_and_remove

__all__ = ["pytestmark"]

SCRIPT = REPO / "tests" / "daemon" / "overlay_mount.sh"


def test_a_state_dir_on_overlayfs_is_named_as_the_reason() -> None:
    daemon = _owned_daemon()
    try:
        layers = daemon.base / "state-layers"
        for name in ("l", "u", "w"):
            (layers / name).mkdir(parents=True)
        os.chown(layers / "u", OWNER, OWNER)  # the merged root shows the upper's owner
        daemon.state.mkdir(exist_ok=True)
        daemon.argv = ["unshare", "-m", "--propagation", "private", "sh", str(SCRIPT),
                       str(layers / "l"), str(layers / "u"), str(layers / "w"),
                       str(daemon.state), "--", *daemon.argv]
        start(daemon)
        top = workdir(daemon, "live")
        ran = call(daemon, "run", json.dumps([["s", f"echo x > {top}/new", "LOW"]]))
        assert ran["final_risk"] == "HIGH"
        assert any("runs live; Anna cannot undo it" in r and
                   "state directory is on overlay" in r for r in ran["reasons"]), ran["reasons"]
        assert finished(ran["events"])["status"] == "succeeded", ran["events"]
        assert (top / "new").read_text() == "x\n"
    finally:
        stop_and_remove(daemon)


def test_a_mount_the_daemon_cannot_reach_is_left_out_of_its_capture() -> None:
    daemon = _owned_daemon()
    try:
        locked = daemon.base / "locked"
        for name in ("l", "u", "w", "vol"):
            (locked / name).mkdir(parents=True)
        locked.chmod(0o700)  # root's: uid 65534 cannot search it
        daemon.argv = ["unshare", "-m", "--propagation", "private", "sh", str(SCRIPT),
                       str(locked / "l"), str(locked / "u"), str(locked / "w"),
                       str(locked / "vol"), "--", *daemon.argv]
        start(daemon)
        top = workdir(daemon, "beside")
        ran = call(daemon, "run", json.dumps([["s", f"echo x > {top}/new", "LOW"]]))
        assert not any("runs live" in r for r in ran["reasons"]), ran["reasons"]
        assert finished(ran["events"])["status"] == "succeeded", ran["events"]
        assert (top / "new").read_text() == "x\n"
        rolled = call(daemon, "rollback", ran["plan_id"])
        assert rolled["status"] == "rolled_back", rolled["undo"]
        assert not (top / "new").exists()
    finally:
        stop_and_remove(daemon)
