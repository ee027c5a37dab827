"""What a kernel without a wall, and a member with hanging previews, get: refusals, at once.

- A Landlock ABI below what the guarantees need (asked for here by raising the demanded ABI
  above this kernel's): the check and the preview do not run, and say why.
- No seccomp binding: no filter, no run (the filter is what the helpers load).
- A member with :data:`annad.confine.previews.PER_OWNER` previews hanging: their next one is
  refused at once, another member's runs.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from annad.confine import landlock
from annad.confine.credentials import Identity
from annad.confine.previews import PER_OWNER, PREVIEWS
from annad.confine.runner import RunResult, run_confined, run_overlay
from annad.confine.spec import RunLimits
from annad.preview.overlay import tree_plan
from tests.uids import private_uid
from tests.waiting import wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces as root")
NOBODY = 65534


@pytest.fixture
def home() -> Iterator[Path]:
    """A directory ``nobody`` owns (a write there would succeed unconfined)."""
    path = Path(f"/tmp/anna-limits-{secrets.token_hex(4)}")
    path.mkdir(mode=0o755)
    os.chown(path, NOBODY, NOBODY)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _owner(home: Path) -> Identity:
    return Identity(uid=NOBODY, gid=NOBODY, groups=(NOBODY,), home=str(home), user="nobody")


def _spec(uid: int, command: str, overlay: Path) -> str:
    step = {"uid": uid, "gid": uid, "groups": "", "env": {"PATH": "/usr/bin:/bin"},
            "cwd": "/", "command": command, "validate": []}
    return json.dumps({"steps": [step], "plan": tree_plan(userns=False)[0], "userns": False,
                       "limits": {"file": 4096, "total": 65536, "entries": 10,
                                  "tmpfs": 1 << 20, "output": 4096}})


def test_this_kernel_has_the_landlock_abi_the_walls_need() -> None:
    assert landlock.abi_version() >= landlock.REQUIRED_ABI


def test_a_kernel_without_the_landlock_abi_runs_nothing(home: Path) -> None:
    marker = home / "ran"
    too_new = landlock.abi_version() + 1
    check = run_confined(f"echo ran; echo x > {marker}", _owner(home), required_abi=too_new,
                         timeout=30)
    assert check.exit_code is None and "ran" not in check.output and check.refused
    assert check.error is not None and f"needs ABI >= {too_new}" in check.error
    preview, report = run_overlay(_spec(NOBODY, f"echo ran > {home}/x", home), timeout=30,
                                  max_output=4096, required_abi=too_new)
    assert preview.exit_code is None and report == b"" and preview.refused
    assert preview.error is not None and f"needs ABI >= {too_new}" in preview.error
    assert list(home.iterdir()) == []


def test_hanging_previews_of_one_member_never_hold_another(home: Path) -> None:
    # the step hangs until the test ends ``holder`` (the machine's /proc is the preview's:
    # a file made on the real tree would not do, the preview overlays the whole tree)
    holder = subprocess.Popen(["sleep", "600"])
    overlay = home / "overlaid"
    overlay.mkdir()
    hanging: list[tuple[RunResult, bytes]] = []

    def hang() -> None:
        hanging.append(run_overlay(_spec(NOBODY, f"while [ -e /proc/{holder.pid} ]; do "
                                         "sleep 0.05; done; echo released", overlay),
                                   timeout=60, max_output=4096, owner=1234))

    threads = [threading.Thread(target=hang) for _ in range(PER_OWNER)]
    for thread in threads:
        thread.start()
    try:
        wait_until(lambda: PREVIEWS.running(1234) == PER_OWNER, "the member's previews running")
        refused, _ = run_overlay(_spec(NOBODY, "echo ran", overlay), timeout=60,
                                 max_output=4096, owner=1234)
        assert refused.error is not None and "already running" in refused.error
        other, report = run_overlay(_spec(NOBODY, "echo other", overlay), timeout=60,
                                    max_output=4096, owner=4321)
        assert other.error is None
        assert json.loads(report.splitlines()[0])["output"] == "other\n"
    finally:
        holder.kill()
        holder.wait()
        for thread in threads:
            thread.join(timeout=60)
    assert len(hanging) == PER_OWNER and all(r.error is None for r, _ in hanging)
    assert all(json.loads(report)["output"] == "released\n" for _, report in hanging)
    assert PREVIEWS.running(1234) == 0


def test_the_process_cap_counts_what_the_owner_already_runs(home: Path) -> None:
    """RLIMIT_NPROC counts a uid's tasks machine-wide: an owner already running more than the
    cap's headroom still runs a check and a preview (whose PID namespace hides their tasks)."""
    uid = private_uid()  # of its own, so no other run (a second suite beside) blurs the count
    busy = [subprocess.Popen(["sleep", "300"], user=uid, group=uid, extra_groups=[])
            for _ in range(RunLimits().processes + 20)]
    who = Identity(uid=uid, gid=uid, groups=(uid,), home=str(home), user="busy")
    (home / "o").mkdir()
    try:
        check = run_confined("true | true; echo forked", who, timeout=60)
        assert check.error is None and check.output == "forked\n", check
        preview, report = run_overlay(_spec(uid, "true | true; echo forked", home / "o"),
                                      timeout=60, max_output=4096)
        assert preview.error is None, preview.error
        assert json.loads(report.splitlines()[0])["output"] == "forked\n"
    finally:
        for proc in busy:
            proc.kill()
        for proc in busy:
            proc.wait()


def test_a_preview_step_that_cannot_start_says_why(home: Path) -> None:
    """A step whose start fails in the helper (here an environment value execve refuses)
    ended with status 125 and nothing else; the reason is now in its output, which the
    preview shows."""
    spec = json.loads(_spec(NOBODY, "echo ran", home))
    spec["steps"][0]["env"]["BAD"] = "a\x00b"
    preview, report = run_overlay(json.dumps(spec), timeout=30, max_output=4096)
    assert preview.error is None, preview.error
    step = json.loads(report.splitlines()[0])
    assert step["exit"] == 125, step
    assert "the step could not start" in step["output"] and "null" in step["output"], step
