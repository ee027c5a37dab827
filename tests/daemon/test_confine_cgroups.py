"""Every confined run in a cgroup of its own: a fork bomb and a memory bomb as uid 0 are bounded.

The kernel exempts uid 0 from RLIMIT_NPROC, so only the run's cgroup
(:mod:`annad.confine.cgroups`) stops a capless-root fork bomb before its timeout; the memory
bomb here stays under its per-process limit (RLIMIT_DATA, 1 GiB) so that only the run's cgroup
cap can stop it. Each bomb is observed from the outside (the leaf's own counters while it
runs), and the leaf must be gone afterwards. Where this machine offers no cgroup for the runs
the uid-0 run must be refused instead, saying so — never run without the bound.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from annad.confine import cgroups, leafowner
from annad.confine.credentials import Identity
from annad.confine.runner import RunResult, run_confined, run_overlay
from annad.confine.spec import RunLimits
from annad.preview.overlay import tree_plan
from tests.waiting import WAIT_S, wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces as root")
NOBODY = 65534
MIB = 1 << 20


@pytest.fixture
def owner() -> Iterator[Identity]:
    """``nobody`` with a home of its own; the runs below read as capless root."""
    home = Path(f"/tmp/anna-cgroups-{secrets.token_hex(4)}")
    home.mkdir(mode=0o755)
    os.chown(home, NOBODY, NOBODY)
    try:
        yield Identity(uid=NOBODY, gid=NOBODY, groups=(NOBODY,), home=str(home), user="nobody")
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def leaves_here() -> None:
    """Skip where this machine gives no cgroup for runs (the refusal is tested below)."""
    why = cgroups.prepare()
    if why is not None:
        pytest.skip(f"no cgroup for confined runs here: {why}")


def _pids_dir(leaf: Path) -> bool:
    return (leaf / "pids.max").exists()


def _counter(path: Path, name: str) -> int:
    for line in path.read_text().splitlines():
        key, _, value = line.partition(" ")
        if key == name:
            return int(value)
    return 0


@pytest.mark.usefixtures("leaves_here")
def test_a_uid0_fork_bomb_is_bounded_and_its_cgroup_removed(owner: Identity) -> None:
    limit = 24
    cancel = threading.Event()
    done: list[RunResult] = []
    bomb = threading.Thread(target=lambda: done.append(run_confined(
        # the shell stays (exec: no fork needed) while the bomb goes on in its orphans
        "id -u; b() { b | b & }; b; exec sleep 3600", owner, root_read=True, timeout=300,
        cancel=cancel, limits=RunLimits(processes=limit, cpu_s=300))))
    bomb.start()
    try:
        leaf = wait_until(lambda: next(filter(_pids_dir, cgroups.leaves()), None),
                          "the run's cgroup", saw=cgroups.leaves)
        # forks were refused at the cap: the kernel counted uid 0's processes after all
        wait_until(lambda: _counter(leaf / "pids.events", "max") > 0,
                   "a fork refused at pids.max", saw=(leaf / "pids.events").read_text)
        assert int((leaf / "pids.current").read_text()) <= limit
        assert int((leaf / "pids.max").read_text()) == limit
    finally:
        cancel.set()
        bomb.join()
    result = done[0]
    assert result.cancelled and result.output.startswith("0\n"), result
    assert not leaf.exists() and cgroups.leaves() == []


@pytest.mark.usefixtures("leaves_here")
def test_a_uid0_memory_bomb_is_killed_at_the_runs_cap(owner: Identity) -> None:
    """256 MiB in one process: under its own limit (1 GiB), over the run's (64 MiB)."""
    result = run_confined(
        "id -u; python3 -c 'b = b\"x\" * (256 << 20); print(\"allocated\", len(b))'; "
        "echo status $?", owner, root_read=True, timeout=120,
        limits=RunLimits(memory=1024 * MIB, run_memory=64 * MIB, cpu_s=120))
    assert result.error is None, result.error
    assert result.output.splitlines()[0] == "0", result.output
    assert f"allocated {256 * MIB}" not in result.output, result.output
    assert "status 137" in result.output, result.output  # SIGKILL: the cgroup's OOM kill
    assert cgroups.leaves() == []


@pytest.mark.usefixtures("leaves_here")
def test_the_same_memory_without_the_cap_is_allocated(owner: Identity) -> None:
    """The counterpart: the bomb above fails because of the run's cap, not by itself."""
    result = run_confined(
        "python3 -c 'b = b\"x\" * (256 << 20); print(\"allocated\", len(b))'",
        owner, root_read=True, timeout=120,
        limits=RunLimits(memory=1024 * MIB, run_memory=512 * MIB, cpu_s=120))
    assert result.error is None and result.output.strip() == f"allocated {256 * MIB}", result


@pytest.mark.usefixtures("leaves_here")
def test_a_preview_runs_in_a_cgroup_of_its_own(owner: Identity) -> None:
    """The whole preview (its helper and a root step) in one leaf, removed afterwards."""
    step = {"uid": 0, "gid": 0, "groups": "", "env": {"PATH": "/usr/bin:/bin"}, "cwd": "/",
            "command": "cat /proc/self/cgroup", "validate": []}
    spec = {"steps": [step], "plan": tree_plan(userns=False)[0], "userns": False,
            "limits": {"file": 4096, "total": 65536, "entries": 10, "tmpfs": 1 << 20,
                       "output": 4096}}
    result, report = run_overlay(json.dumps(spec), timeout=60, max_output=4096)
    assert result.error is None, result.error
    output = json.loads(report.splitlines()[0])["output"]
    # the step's own cgroups: a leaf of this process's runs in the pids hierarchy (v1) or the
    # unified one (v2)
    joined = [line for line in output.splitlines()
              if f"/{cgroups.RUN_PREFIX}{os.getpid()}-" in line]
    assert any(":pids:" in line or line.startswith("0::") for line in joined), output
    assert cgroups.leaves() == []


def test_without_a_cgroup_a_uid0_run_is_refused_and_the_owners_runs(
        owner: Identity, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine whose cgroups give the daemon nothing: the capless-root read does not run
    (its processes would be unbounded); the owner's own run still does, bounded by its uid's
    RLIMIT_NPROC."""
    monkeypatch.setattr(cgroups, "_PREPARED", "no cgroup here (the test says so)")
    refused = run_confined("id -u", owner, root_read=True, timeout=30)
    assert refused.refused and refused.exit_code is None and refused.output == ""
    assert "uid-0 run needs a cgroup" in str(refused.error), refused.error
    assert "no cgroup here" in str(refused.error)
    ran = run_confined("id -u", owner, timeout=30)
    assert ran.error is None and ran.output.strip() == str(NOBODY), ran


def test_the_helper_itself_refuses_a_uid0_run_without_its_cgroup(
        owner: Identity, monkeypatch: pytest.MonkeyPatch) -> None:
    """Defence in depth: a daemon that failed to pass the cgroup gets a refusal, not a run."""

    @contextlib.contextmanager
    def nothing(*_: object, **__: object) -> Iterator[tuple[int, ...]]:
        yield ()

    monkeypatch.setattr(cgroups, "run_cgroup", nothing)
    refused = run_confined("id -u", owner, root_read=True, timeout=30)
    assert refused.refused and refused.exit_code is None and refused.output == ""
    assert "needs a cgroup of its own" in str(refused.error), refused.error


def _preview_spec(uid: int) -> str:
    step = {"uid": uid, "gid": uid, "groups": "", "env": {"PATH": "/usr/bin:/bin"},
            "cwd": "/", "command": "id -u", "validate": []}
    return json.dumps({"steps": [step], "plan": tree_plan(userns=False)[0], "userns": False,
                       "limits": {"file": 4096, "total": 65536, "entries": 10,
                                  "tmpfs": 1 << 20, "output": 4096}})


def test_without_a_cgroup_a_root_steps_preview_is_refused(
        owner: Identity, monkeypatch: pytest.MonkeyPatch) -> None:
    """Previews too: a root step's processes are not counted by the kernel, so without a
    cgroup the preview does not run (never silently less confined); an owner's step still
    previews, bounded by its uid's RLIMIT_NPROC."""
    del owner
    monkeypatch.setattr(cgroups, "_PREPARED", "no cgroup here (the test says so)")
    refused, report = run_overlay(_preview_spec(0), timeout=60, max_output=4096)
    assert refused.refused and refused.exit_code is None and report == b""
    assert "uid-0 run needs a cgroup" in str(refused.error), refused.error
    assert "no cgroup here" in str(refused.error)
    ran, report = run_overlay(_preview_spec(NOBODY), timeout=60, max_output=4096)
    assert ran.error is None, ran.error
    assert json.loads(report.splitlines()[0])["output"].strip() == str(NOBODY)


@pytest.mark.parametrize("uid", ["0", None, "root", 0.0, True])
def test_a_step_whose_uid_cannot_be_read_counts_as_root(uid: object) -> None:
    """Fail closed: a spec whose uid is a string, missing or not a number needs the bound."""
    from annad.confine.previews import runs_as_root

    step: dict[str, object] = {"command": "id -u"} if uid is None else {"uid": uid}
    assert runs_as_root(json.dumps({"steps": [{"uid": NOBODY}, step]}))
    assert not runs_as_root(json.dumps({"steps": [{"uid": NOBODY}, {"uid": str(NOBODY)}]}))


READONLY = Path(__file__).with_name("readonly_cgroups.sh")


def _submit_as_nobody(socket: Path, plan: dict[str, object]) -> dict[str, Any]:
    """POST /v1/plans as ``nobody`` (a member here: ANNAD_GROUP=nogroup), through curl."""
    proc = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "curl", "-s",
         "--unix-socket", str(socket), "-H", "Content-Type: application/json",
         "--data-binary", json.dumps({"plan": plan}), "http://annad/v1/plans"],
        capture_output=True, text=True, timeout=WAIT_S, check=True)
    answer: dict[str, Any] = json.loads(proc.stdout)
    return answer


@pytest.mark.skipif(not shutil.which("setpriv") or not shutil.which("curl"),
                    reason="needs setpriv and curl to act as a member")
def test_a_daemon_whose_cgroups_are_read_only_refuses_only_a_root_preview() -> None:
    """The real daemon, where no cgroup can be made (every hierarchy read-only in its own
    mount namespace, as in a container without delegation). A member's plan that writes
    in their home is previewed as before (their uid's RLIMIT_NPROC bounds it); one with a
    root step is not, saying why — and the daemon answers on."""
    from tests.daemonfix import make_plan, new_daemon, stop_and_remove

    daemon = new_daemon(user_mode=False, env={"ANNAD_GROUP": "nogroup"})
    daemon.argv = ["unshare", "-m", "--propagation", "private", "/bin/sh", str(READONLY),
                   *daemon.argv]
    try:
        os.chown(daemon.home, NOBODY, NOBODY)
        daemon.start()
        for directory in (daemon.base, daemon.socket.parent):
            directory.chmod(0o755)
        daemon.socket.chmod(0o666)
        own = _submit_as_nobody(daemon.socket, make_plan([
            ("s1", f"echo mine > {daemon.home}/mine.txt", "LOW")]))
        assert own["annotated"]["steps"][0]["scope"] == "user", own["annotated"]
        step = own["preview"]["steps"][0]
        assert [f["path"] for f in step["files"]] == [f"{daemon.home}/mine.txt"], step
        assert step["reason"] is None, step

        root = _submit_as_nobody(daemon.socket, make_plan([
            ("s1", "echo after > /etc/anna-cgroup-test", "MEDIUM")]))
        assert root["annotated"]["steps"][0]["scope"] == "system", root["annotated"]
        step = root["preview"]["steps"][0]
        assert step["files"] == [], step
        reason = step["reason"] or ""
        assert "confinement refused" in reason and "needs a cgroup" in reason, reason
        assert "may not make cgroups" in reason, reason  # the daemon's own finding
        assert daemon.client().health().mode == "system"
        assert not (daemon.home / "mine.txt").exists()
        assert not Path("/etc/anna-cgroup-test").exists()
    finally:
        stop_and_remove(daemon)


ESCAPE = """for f in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs; do
    [ -e "$f" ] && echo 0 > "$f" && echo "joined $f"
done
for p in $(sed -n 's/^[0-9]*:[a-z,]*pids[a-z,]*:\\(.*\\)$/pids\\1/p; s/^0::\\(.*\\)$/\\1/p' \\
           /proc/self/cgroup); do
    echo max > "/sys/fs/cgroup/${p#/}/pids.max" && echo "raised $p"
done
cat /proc/self/cgroup"""
"""A root step's attempts to leave its leaf (into any hierarchy's root) and to lift its own
``pids.max`` (v1 pids or v2 leaf), each saying so where it succeeds."""


@pytest.mark.usefixtures("leaves_here")
def test_a_root_preview_step_can_neither_leave_its_leaf_nor_lift_its_limit() -> None:
    step = {"uid": 0, "gid": 0, "groups": "", "env": {"PATH": "/usr/bin:/bin"}, "cwd": "/",
            "command": ESCAPE, "validate": []}
    spec = {"steps": [step], "plan": tree_plan(userns=False)[0], "userns": False,
            "limits": {"file": 4096, "total": 65536, "entries": 10, "tmpfs": 1 << 20,
                       "output": 8192}}
    result, report = run_overlay(json.dumps(spec), timeout=60, max_output=8192)
    assert result.error is None, result.error
    output = json.loads(report.splitlines()[0])["output"]
    assert "joined" not in output and "raised" not in output, output
    assert "cgroup.procs: Read-only file system" in output, output  # both were tried
    assert f"{cgroups.RUN_PREFIX}{os.getpid()}-1/pids.max: Read-only file system" in output \
        or "pids.max: Read-only file system" in output, output
    assert f"/{cgroups.RUN_PREFIX}{os.getpid()}-" in output, output  # still in its leaf
    assert cgroups.leaves() == []


SWEEP = """
from annad.confine import cgroups, leafowner
print(leafowner.owner(), cgroups.prepare())
"""


def test_a_daemon_in_a_pid_namespace_of_its_own_leaves_other_leaves_alone() -> None:
    """Two suites side by side: a daemon in a PID namespace of its own saw no process of this
    test's pid, removed its empty run leaf as a dead daemon's, and the run about to join it
    failed ("[Errno 19] No such device" on cgroup.procs). A sweep judges only the leaves of
    its own PID namespace now."""
    if cgroups.prepare() is not None:
        pytest.skip(f"no run leaves here: {cgroups.prepare()}")
    leaf = cgroups.make_leaf(16, 64 << 20)
    try:
        assert leafowner.owner() == str(os.getpid())  # the machine's own PID namespace
        done = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable,
                               "-c", SWEEP], capture_output=True, text=True, check=False,
                              cwd=Path(__file__).resolve().parents[2], timeout=WAIT_S)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split()[0].startswith("ns"), done.stdout
        assert all(d.is_dir() for d in leaf.dirs), leaf.dirs
    finally:
        assert leaf.remove()


NESTED = """
import select, sys
from annad.confine import cgroups, leafowner
why = cgroups.prepare()
if why is not None:
    print("unavailable", why, flush=True)
    sys.exit(0)
leaf = cgroups.make_leaf(16, 64 << 20)
mine = leafowner.owner()
namespace = mine.rpartition("-")[0]
print(mine, leafowner.gone(mine), leafowner.gone(namespace + "-77"), leafowner.gone(sys.argv[1]),
      *leaf.dirs, flush=True)
select.select([sys.stdin], [], [], float(sys.argv[2]))
print(leaf.remove(), flush=True)
"""


def test_a_daemon_in_another_pid_namespace_keeps_its_leaves_from_the_machines_sweep() -> None:
    """The other way round: a daemon in the machine's own PID namespace read a contained
    daemon's pid (a number of its namespace) against the machine's /proc, and where no such
    process ran took the live daemon's leaf for a dead one's. A leaf names its daemon's PID
    namespace now; each sweep judges its own namespace's leaves, by its own /proc."""
    if cgroups.prepare() is not None:
        pytest.skip(f"no run leaves here: {cgroups.prepare()}")
    dead = next(pid for pid in range(os.getpid() % 20000 + 10000, 32768)
                if not Path(f"/proc/{pid}").exists())
    assert leafowner.owner() == str(os.getpid())
    assert leafowner.gone(str(dead)), "a dead pid of this namespace is gone"
    assert not leafowner.gone(str(os.getpid()))
    nested = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", sys.executable,
                               "-c", NESTED, str(os.getpid()), str(WAIT_S)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[2])
    assert nested.stdin is not None and nested.stdout is not None
    try:
        wait_until(lambda: select.select([nested.stdout], [], [], 0)[0] != [],
                   what="the contained daemon's leaf")
        mine, alive, other_gone, host_gone, *dirs = nested.stdout.readline().split()
        assert mine.startswith("ns") and mine.endswith("-1"), mine
        assert (alive, other_gone, host_gone) == ("False", "True", "False")
        assert dirs and all(f"/{cgroups.RUN_PREFIX}{mine}-" in d for d in dirs), dirs
        # its pid, 1, and a dead one of the machine's: neither is this namespace's daemon
        assert not leafowner.gone(mine)
        assert not leafowner.gone(f"{mine.rpartition('-')[0]}-{dead}")
        assert isinstance(cgroups._PREPARED, list)
        cgroups._remove_stale(cgroups._PREPARED)  # the sweep a start runs
        assert all(Path(d).is_dir() for d in dirs), dirs
    finally:
        nested.stdin.close()
        nested.wait(timeout=WAIT_S)
    assert nested.stdout.read().split() == ["True"]
