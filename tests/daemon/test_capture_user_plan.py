"""The mount plan of a per-user daemon's capture (annad/execution/unprivileged.py), on this
machine's real mount table, as the unprivileged uid that would use it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from annad.backups.trash import remove_tree
from tests.daemonfix import REPO

NOBODY = 65534
_PLAN = """
import json, sys
sys.path.insert(0, sys.argv[1])
from annad.execution.capture import mount_plan
from annad.execution.unprivileged import user_plan
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
