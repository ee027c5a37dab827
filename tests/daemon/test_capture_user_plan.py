"""A per-user daemon's capture in parts: its mount plan (annad/capture/unprivileged.py) on
this machine's real mount table as the unprivileged uid that would use it, the cleanup of
what overlayfs leaves, and the fallback where it cannot capture (annad/execution/runs_live.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from anna_common.annotate import annotate
from anna_common.findings import AnnotatedPlan
from anna_common.levels import RiskLevel
from anna_common.plan import ActionPlan
from anna_common.risk.rules.base import AssessContext
from annad.backups.trash import remove_tree
from annad.execution.runs_live import RUNS_LIVE, mark_live, not_approved_live
from annad.journal.records import step_specs
from annad.stepspec import StepSpec
from tests.daemonfix import REPO, make_plan

NOBODY = 65534
_PLAN = """
import json, sys
sys.path.insert(0, sys.argv[1])
from annad.capture.layers import mount_plan
from annad.capture.unprivileged import user_plan
plan, layers = mount_plan(open("/proc/self/mountinfo").read(), "/nonexistent-state")
print(json.dumps(user_plan(plan, sys.argv[2])))
"""


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv")
                    or not Path("/usr/bin/python3").exists(),
                    reason="needs root and setpriv to act as another uid")
def test_the_owner_trees_get_overlays_of_their_own_parents_first() -> None:
    home = Path(tempfile.mkdtemp(prefix="anna-plan-home-", dir="/tmp"))
    try:
        os.chown(home, NOBODY, NOBODY)
        done = subprocess.run(["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY),
                               "--clear-groups", "/usr/bin/python3", "-I", "-c", _PLAN,
                               str(REPO), str(home)], check=False, capture_output=True,
                              text=True, cwd="/", timeout=60)
        assert done.returncode == 0, done.stderr
        plan, layers = json.loads(done.stdout)
    finally:
        shutil.rmtree(home)
    overlays = {int(k): v for k, v in layers.items()}
    points = [str(op[1]) for op in plan]
    assert str(home) in overlays.values() and "/tmp" in overlays.values()
    if Path("/var/tmp").is_dir():
        assert "/var/tmp" in overlays.values()
    assert plan[0] == ["bind", "/"], "/ itself is never a lower layer in a user namespace"
    others = {str(op[1]) for op in plan if op[0] != "overlay" and op[1] != "/"}
    for op in plan:
        if op[0] == "overlay":  # no other mount below a lower layer (overlayfs refuses it)
            point = str(op[1])
            assert overlays[int(op[2])] == point
            assert not any(p.startswith(point.rstrip("/") + "/") for p in others), point
    # a parent is mounted before what is mounted on top of it
    for index, point in enumerate(points):
        assert not any(point != "/" and p != point and point.startswith(p.rstrip("/") + "/")
                       and points.index(p) > index for p in points if p != "/"), point


def test_remove_tree_opens_up_what_this_uid_may_not_list() -> None:
    """overlayfs leaves ``work/work`` with mode 000: a non-root cleanup opens it up first."""
    top = Path(tempfile.mkdtemp(prefix="anna-trash-"))
    (top / "w" / "work" / "deep").mkdir(parents=True)
    (top / "w" / "work" / "deep" / "f").write_text("x")
    (top / "ro").mkdir()
    (top / "ro" / "g").write_text("y")
    os.chmod(top / "w" / "work" / "deep", 0o000)
    os.chmod(top / "w" / "work", 0o000)
    os.chmod(top / "ro", 0o500)
    if os.geteuid() == 0:  # root would remove it anyway: take the owner's part
        os.chown(top, NOBODY, NOBODY)
        for path in [*top.rglob("*")]:
            os.lchown(path, NOBODY, NOBODY)
        python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
        done = subprocess.run(["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY),
                               "--clear-groups", python, "-I", "-c",
                               "import sys; from pathlib import Path; sys.path.insert(0, "
                               "sys.argv[1]); from annad.backups.trash import remove_tree; "
                               "remove_tree(Path(sys.argv[2]))", str(REPO), str(top)],
                              check=False, capture_output=True, text=True, cwd="/", timeout=60)
        assert done.returncode == 0, done.stderr
    else:
        remove_tree(top)
    assert not top.exists()


def _annotated(steps: list[tuple[str, str, str]]) -> AnnotatedPlan:
    annotated, _, _ = annotate(ActionPlan.model_validate(make_plan(steps)),
                               AssessContext(home="/home/u"))
    return annotated


def test_without_capture_every_file_step_is_high_and_runs_live() -> None:
    """A daemon that cannot capture: file steps are HIGH with the words, marked
    ``uncaptured_write`` (their undo never claims them); INFO and live kinds are not."""
    plan = _annotated([("w", "echo x > ~/f", "LOW"), ("i", "cat ~/f", "INFO"),
                       ("u", "systemctl --user restart foo.service", "MEDIUM")])
    # a daemon that captures leaves file and read steps as they were; a restarted unit runs
    # its own programs unseen, so its undo is unverified whatever the daemon can capture
    captured = mark_live(plan, None)
    assert captured.steps[:2] == plan.steps[:2]
    assert "unverified_undo" in captured.steps[2].codes
    assert "uncaptured_write" not in captured.steps[2].codes
    marked = mark_live(plan, "user namespaces are disabled")
    write, read, unit = marked.steps
    assert write.final_risk == RiskLevel.HIGH and write.confirm_word
    assert any(r.startswith(RUNS_LIVE) and "user namespaces are disabled" in r
               for r in write.reasons)
    assert "uncaptured_write" in write.codes
    assert step_specs(marked)[0].uncaptured
    assert read == plan.steps[1] and unit == captured.steps[2]
    assert marked.final_risk == RiskLevel.HIGH and marked.rollback_status != "available"


def test_a_file_step_not_approved_live_never_runs_live() -> None:
    """Approved while the daemon could capture, run when it cannot: refused, never live."""
    step = StepSpec(index=0, step_id="s", command="echo x > ~/f", scope="user", tier="LOW")
    assert not_approved_live(step, None) is None
    refusal = not_approved_live(step, "user namespaces are disabled")
    assert refusal is not None and "did not run" in refusal
    assert not_approved_live(replace(step, uncaptured=True), "off") is None
    assert not_approved_live(replace(step, confined=True), "off") is None
    assert not_approved_live(replace(step, command="systemctl --user restart x"), "off") is None


def test_an_overlay_root_of_someone_else_shows_only_the_bits_this_uid_gets(
        tmp_path: Path) -> None:
    """The upper root of an overlay is this uid's own in a user namespace: it gets the real
    directory's owner bits replaced by what this uid may do there, so no write the real
    directory refuses is allowed in the capture."""
    from annad.capture.helper import _as_seen

    mine, theirs, group = tmp_path / "mine", tmp_path / "theirs", tmp_path / "group"
    for path, mode in ((mine, 0o700), (theirs, 0o1755), (group, 0o770)):
        path.mkdir()
        path.chmod(mode)
    other = os.getuid() + 4242
    if os.geteuid() == 0:  # (another uid's directories need root to make)
        os.chown(theirs, other, other)
        os.chown(group, other, os.getgid())
    seen = _as_seen([["overlay", str(mine), 0], ["overlay", str(theirs), 1],
                     ["overlay", str(group), 2], ["bind", "/"]])
    assert seen[str(mine)] == 0o700
    if os.geteuid() == 0:
        assert seen[str(theirs)] == 0o1555, oct(seen[str(theirs)])
        assert seen[str(group)] == 0o770, oct(seen[str(group)])
    assert "/" not in seen


def test_a_user_plan_is_reused_only_for_the_same_mounts_and_home(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from annad.capture import unprivileged

    made: list[str] = []
    real = unprivileged.user_plan

    def counted(plan: list[list[object]], home: str) -> tuple[list[list[object]], dict[int, str]]:
        made.append(home)
        return real(plan, home)

    monkeypatch.setattr(unprivileged, "user_plan", counted)
    monkeypatch.setattr(unprivileged, "_RECENT", {})
    plan: list[list[object]] = [["overlay", "/", 0], ["bind", "/proc"], ["dev", "/dev"]]
    first = unprivileged.recent_user_plan(plan, "/nonexistent-home")
    assert unprivileged.recent_user_plan(plan, "/nonexistent-home") == first
    assert len(made) == 1  # the same mounts and home: reused
    unprivileged.recent_user_plan([*plan, ["bind", "/sys"]], "/nonexistent-home")
    assert len(made) == 2  # a mount more: made again
    unprivileged.recent_user_plan(plan, "/other-home")
    assert len(made) == 3  # another home: made again
    monkeypatch.setattr(unprivileged, "REUSE_S", -1.0)
    unprivileged.recent_user_plan(plan, "/other-home")
    assert len(made) == 4  # too old: made again
