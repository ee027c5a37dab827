"""Every preview has a memory cap (issue 35 item 6): a step that allocates past a small cap
stops the preview with ``PREVIEW_MEMORY_EXCEEDED`` — under the preview's cgroup (a root
daemon) and, where no cgroup can be made (a per-user daemon), under its helper's watch of
the processes' memory together — while a step within the cap is previewed as before."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from anna_common.errors import ErrorCode
from anna_common.protocol.models import SessionEnv
from annad.confine import cgroups
from annad.confine.memwatch import Watch, descendants, resident
from annad.journal.records import who_of
from annad.preview import overlay
from tests.daemon.test_preview import SYSTEM_PYTHON

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces and overlays as root")

CAP = 64 * 1024 ** 2
HOG = ("python3 -c \"import time; b = bytearray({mib} * 2**20); print('held'); "
       "time.sleep(5)\"")
"""Allocates (and touches: bytearray zero-fills) ``mib`` MiB and holds it."""


def _root_preview(tmp_path: Path, mib: int) -> overlay.OverlayRun:
    who = who_of(0, str(tmp_path), SessionEnv())
    command = HOG.format(mib=mib) + f" && echo done > {tmp_path}/out"
    return overlay.run([overlay.FileStep(0, command, True)], who,
                       limits=overlay.Limits(memory_bytes=CAP, timeout_s=60))


def test_a_root_preview_past_its_cgroup_cap_stops_with_a_code(tmp_path: Path) -> None:
    if cgroups.prepare() is not None:
        pytest.skip("no cgroup leaf can be made here (a root preview is then refused)")
    run = _root_preview(tmp_path, 100)  # past the cap, within RLIMIT_DATA (twice the cap)
    assert run.code is ErrorCode.PREVIEW_MEMORY_EXCEEDED, (run.error, run.output)
    assert run.error is not None and "64 MiB" in run.error
    assert not run.steps  # no preview of the step: it never finished
    assert not (tmp_path / "out").exists()


def test_a_root_preview_within_its_cap_is_previewed(tmp_path: Path) -> None:
    if cgroups.prepare() is not None:
        pytest.skip("no cgroup leaf can be made here (a root preview is then refused)")
    run = _root_preview(tmp_path, 8)
    assert run.error is None and run.code is None, run.error
    assert run.steps[0].exit_code == 0, run.steps[0].output
    assert "held" in run.steps[0].output


_OWNER_DRIVER = """
import json, os, sys, tempfile, shutil
sys.path.insert(0, sys.argv[1])
from annad.confine.runner import run_overlay
from annad.capture.layers import mount_plan
from annad.preview.overlay import below_root
base = tempfile.mkdtemp(prefix="anna-preview-memory-")
try:
    step = {"uid": os.getuid(), "gid": os.getgid(), "groups": "", "cwd": base,
            "env": {"PATH": "/usr/bin:/bin", "HOME": base}, "command": sys.argv[2]}
    plan, _ = below_root(*mount_plan(open("/proc/self/mountinfo").read(), "/dev/shm"))
    spec = {"steps": [step], "plan": plan, "userns": True,
            "limits": {"file": 65536, "total": 1 << 20, "entries": 100, "tmpfs": 1 << 24,
                       "output": 4096}}
    result, report = run_overlay(json.dumps(spec), timeout=60, max_output=4096,
                                 python=sys.executable, memory=int(sys.argv[3]))
    print(json.dumps({"error": result.error, "over": result.over_memory,
                      "report": report.decode()}))
finally:
    shutil.rmtree(base)
"""


def _owner_preview(command: str) -> dict[str, object]:
    probe = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534",
                            "--clear-groups", "unshare", "-Ur", "true"], check=False,
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unprivileged user namespaces are not allowed here: {probe.stderr!r}")
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
                           SYSTEM_PYTHON, "-c", _OWNER_DRIVER, str(repo), command, str(CAP)],
                          check=False, capture_output=True, text=True, cwd="/", timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.splitlines()[-1]))


def _parsed(report: str) -> overlay.OverlayRun:
    out = overlay.OverlayRun()
    overlay._parse(report.encode(), [overlay.FileStep(0, "x", False)], out)
    return out


def test_a_per_user_preview_past_its_cap_is_stopped_by_the_watch() -> None:
    # as a per-user daemon (uid 65534, no cgroup of its own): four processes of 24 MiB
    # each, every one within its own limits, 96 MiB together
    hogs = " & ".join([HOG.format(mib=24)] * 4) + "; wait"
    found = _owner_preview(hogs)
    assert found["error"] is None, found
    run = _parsed(str(found["report"]))
    assert run.code is ErrorCode.PREVIEW_MEMORY_EXCEEDED, found
    assert run.error is not None and "64 MiB" in run.error
    assert not run.steps


def test_a_per_user_preview_within_its_cap_is_previewed() -> None:
    found = _owner_preview(HOG.format(mib=8).replace("time.sleep(5)", "time.sleep(0.3)"))
    assert found["error"] is None, found
    run = _parsed(str(found["report"]))
    assert run.code is None and run.error is None, found
    assert run.steps[0].exit_code == 0 and "held" in run.steps[0].output


def test_the_watch_sums_a_process_tree() -> None:
    child = subprocess.Popen([SYSTEM_PYTHON, "-c", "import time; b = bytearray(32 * 2**20); "
                              "print('x', flush=True); time.sleep(30)"],
                             stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"x\n"
        assert child.pid in descendants(os.getpid())
        assert resident([child.pid]) >= 32 * 1024 ** 2
        with pytest.raises(Exception, match="past the cap of 16 MiB"):
            Watch(16 * 1024 ** 2).check()
        Watch(1024 ** 4).check()  # far above: nothing raised
    finally:
        child.kill()
        child.wait()


def test_the_real_daemon_reports_the_code_in_the_preview_and_keeps_the_plan() -> None:
    """Through the real daemon (its setting ``preview_memory``): the step's preview says
    PREVIEW_MEMORY_EXCEEDED with its code; the plan is stored and the daemon answers on."""
    import contextlib

    from anna_common.plan import ActionPlan
    from tests.daemonfix import make_plan, running_daemon

    if cgroups.prepare() is not None:
        pytest.skip("no cgroup leaf can be made here (a root preview is then refused)")
    with running_daemon(user_mode=False, env={"ANNAD_PREVIEW_MEMORY": str(CAP)}) as daemon:
        target = daemon.base / "out"
        plan = ActionPlan.model_validate(make_plan([
            ("hog", HOG.format(mib=100) + f" && echo done > {target}", "MEDIUM")]))
        with contextlib.closing(daemon.client()) as client:
            submitted = client.submit(plan)
            assert submitted.preview is not None
            step = submitted.preview.steps[0]
            assert step.code == "PREVIEW_MEMORY_EXCEEDED", step
            assert "64 MiB" in (step.reason or ""), step
            assert client.get_plan(submitted.plan_id).status == "submitted"
            assert client.health() is not None
        assert not target.exists()
