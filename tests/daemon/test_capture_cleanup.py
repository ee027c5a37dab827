"""What a captured step leaves is thrown away off its path, and an undo that cannot be
verified ends ``rollback_incomplete`` with its paths (real directories, no mocks)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from anna_common.errors import ErrorCode
from anna_common.protocol.models import PlanStatus, UndoResult
from annad.backups.trash import Trash
from annad.capture.layers import upper_problem
from annad.execution.undostatus import undone_status
from tests.waiting import wait_until


def _tree(top: Path) -> Path:
    (top / "0" / "u" / "etc" / "x").mkdir(parents=True)
    (top / "0" / "w" / "work").mkdir(parents=True)
    (top / "0" / "w" / "work").chmod(0)  # as overlayfs leaves it
    (top / "0" / "u" / "etc" / "x" / "f").write_text("upper")
    return top


def test_a_thrown_tree_leaves_at_once_and_is_removed_beside(tmp_path: Path) -> None:
    trash = Trash(tmp_path / "state" / "trash")
    layers = _tree(tmp_path / "step" / "layers")
    trash.throw(layers)
    assert not layers.exists()  # off the caller's path by the time throw returns
    wait_until(lambda: not any((tmp_path / "state" / "trash").iterdir()),
               "the trash to be emptied by its thread")


def test_what_a_dead_daemon_left_in_the_trash_goes_with_the_next_throw(tmp_path: Path) -> None:
    left = _tree(tmp_path / "state" / "trash" / "1-0-layers")
    trash = Trash(tmp_path / "state" / "trash")
    trash.throw(tmp_path / "missing")  # nothing there: nothing to do, no error
    trash.throw(_tree(tmp_path / "step" / "layers"))
    wait_until(lambda: not left.exists() and not any((tmp_path / "state" / "trash").iterdir()),
               "the old and the new trash to be removed")


def test_a_tree_on_another_file_system_is_removed_in_place(tmp_path: Path) -> None:
    if not Path("/dev/shm").is_dir() or os.stat("/dev/shm").st_dev == tmp_path.stat().st_dev:
        pytest.skip("no second file system to try it on (the rename path is tested above)")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as other:
        layers = _tree(Path(other) / "layers")
        Trash(tmp_path / "trash").throw(layers)
        assert not layers.exists()


def _result(action: str, ok: bool, target: str = "") -> UndoResult:
    return UndoResult(step_id="s", action=action, target=target, ok=ok, message="")


def test_an_unverified_undo_is_incomplete_with_its_paths() -> None:
    status, code, paths = undone_status([
        _result("restore", True, "/etc/a"), _result("verify", False, "/etc/a"),
        _result("conflict", False, "/etc/b"), _result("verify", False, "/etc/c")])
    assert (status, code, paths) == (PlanStatus.ROLLBACK_INCOMPLETE,
                                     ErrorCode.ROLLBACK_INCOMPLETE, ["/etc/a", "/etc/c"])


def test_a_failed_undo_without_a_verify_difference_stays_rollback_failed() -> None:
    status, code, paths = undone_status([_result("conflict", False, "/etc/b"),
                                         _result("rollback_command", False)])
    assert (status, code, paths) == (PlanStatus.ROLLBACK_FAILED, ErrorCode.ROLLBACK_FAILED, [])


def test_old_journals_keep_their_word_and_the_new_one_is_a_state() -> None:
    assert PlanStatus("rollback_failed") is PlanStatus.ROLLBACK_FAILED
    assert PlanStatus("rollback_incomplete") is PlanStatus.ROLLBACK_INCOMPLETE


CONTAINER = """\
21 1 0:40 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
22 21 0:21 / /proc rw - proc proc rw
23 21 254:1 / /srv/data rw,relatime - ext4 /dev/vdb rw
"""


def test_a_state_dir_on_overlayfs_is_refused_before_anything_runs() -> None:
    problem = upper_problem(Path("/var/lib/anna/backups/p/000"), CONTAINER)
    assert problem is not None and "overlay" in problem and "state directory" in problem
    assert upper_problem(Path("/srv/data/anna/backups/p/000"), CONTAINER) is None



@pytest.mark.skipif(os.geteuid() != 0, reason="a captured step needs root")
def test_a_mount_gone_since_the_plan_was_read_does_not_stop_the_capture(tmp_path: Path) -> None:
    """Between reading the mount table and building the capture, a mount went away (another
    program's scratch mount, a stick pulled out): the step still runs captured, and a write
    at its path lands in the parent file system's layer (seen in two suites side by side:
    one test's daemon unmounted and removed its state dir while another captured)."""
    import json

    from annad.capture.layers import mount_plan
    from annad.confine import capture_filter
    from annad.confine.capture_run import run_capture

    state = tmp_path / "state"
    (state / "layers" / "root").mkdir(parents=True)
    gone = tmp_path / "gone"  # never there: as if unmounted and removed meanwhile
    plan, layers = mount_plan(Path("/proc/self/mountinfo").read_text(), str(state))
    plan.append(["overlay", str(gone), len(layers)])
    spec = {"root": str(state / "layers" / "root"), "layers": str(state / "layers"),
            "plan": plan, "uid": 0, "gid": 0, "groups": [], "cwd": "/",
            "env": {"PATH": "/usr/bin:/bin"},
            "command": f"mkdir -p {gone} && echo made > {gone}/f && cat {gone}/f",
            "seccomp": capture_filter.program().hex()}
    result = run_capture(json.dumps(spec), timeout=60, max_output=4096)
    assert result.error is None and result.exit_code == 0, result
    assert result.output.strip() == "made"
    assert not gone.exists()  # captured, not landed
    uppers = [p for p in (state / "layers").glob("*/u") if (p / str(gone)[1:] / "f").exists()]
    assert len(uppers) == 1, sorted(str(p) for p in (state / "layers").rglob("f"))
