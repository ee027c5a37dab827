"""A per-user daemon that is not root captures its steps too: in a user namespace of its own.

The real daemon (tests/daemonfix.py) runs as an unprivileged uid (:data:`OWNER`) with
everything in a temporary directory owned by that uid; its owner's requests are made as that
uid (tests/daemon/capture_user_driver.py). Each case is a writer Anna cannot predict: it is
applied, what it really changed is judged, and the rollback puts back every byte. Where the
capture cannot be built (``capture_userns = false``, as on a kernel that forbids user
namespaces), the file step is HIGH, "runs live; Anna cannot undo it", and its rollback never
says ``rolled_back``.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.daemonfix import (
    REPO,
    START_TIMEOUT_S,
    RunningDaemon,
    layers_left,
    new_daemon,
    stop_and_remove,
)
from tests.treeprint import fingerprint
from tests.waiting import wait_until

OWNER = 65534
"""The daemon's uid and gid (nobody: a uid with nothing of its own on the machine)."""
SYSTEM_PYTHON = "/usr/bin/python3"
DRIVER = REPO / "tests" / "daemon" / "capture_user_driver.py"


def _as_owner(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["setpriv", "--reuid", str(OWNER), "--regid", str(OWNER),
                           "--clear-groups", *argv], check=False, capture_output=True,
                          text=True, cwd="/", **kwargs)


@functools.cache
def _owner_python() -> tuple[str, str] | None:
    """An interpreter the owner may run that imports Anna's dependencies, and its
    PYTHONPATH: the system one with the tests' site-packages (the same version: the venv's
    interpreter may be somewhere the owner cannot reach, such as root's home), or the tests'
    own, or None."""
    site = sysconfig.get_paths()["purelib"]
    for python, path in ((SYSTEM_PYTHON, f"{REPO}:{site}"), (sys.executable, str(REPO))):
        done = _as_owner([python, "-c", "import starlette, uvicorn, annad.main, annactl"],
                         env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin"})
        if done.returncode == 0:
            return python, path
    return None


@functools.cache
def _skip_reason() -> str | None:
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return "needs root and setpriv to run a daemon as another uid"
    probe = _as_owner(["unshare", "-Urm", "true"])
    if probe.returncode != 0:
        return f"unprivileged user namespaces are not allowed here: {probe.stderr!r}"
    if _owner_python() is None:
        return "no interpreter with Anna's dependencies that an unprivileged uid can run"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


def _owned_daemon(env: dict[str, str] | None = None) -> RunningDaemon:
    """A per-user daemon set up to run as :data:`OWNER`, everything of it owned by that uid."""
    found = _owner_python()
    assert found is not None
    python, path = found
    daemon = new_daemon(user_mode=True, env=env)
    daemon.argv = ["setpriv", "--reuid", str(OWNER), "--regid", str(OWNER), "--clear-groups",
                   python, *daemon.argv[1:]]
    daemon.env["PYTHONPATH"] = path
    daemon.extra["python"] = python
    for top, dirs, files in os.walk(daemon.base):
        for name in [*dirs, *files]:
            os.lchown(Path(top) / name, OWNER, OWNER)
    os.chown(daemon.base, OWNER, OWNER)
    return daemon


def start(daemon: RunningDaemon) -> RunningDaemon:
    """Start the daemon and wait until it answers its owner (it serves no one else)."""
    log = daemon.log.open("ab")
    try:
        daemon.proc = subprocess.Popen(daemon.argv, env=daemon.env, stdin=subprocess.DEVNULL,
                                       stdout=log, stderr=log, cwd=str(daemon.base))
    finally:
        log.close()

    def answers() -> bool:
        if daemon.proc is not None and daemon.proc.poll() is not None:
            raise RuntimeError(f"annad exited ({daemon.proc.returncode}):\n{daemon.output()}")
        return daemon.socket.exists() and _as_owner(
            [str(daemon.extra["python"]), str(DRIVER), str(daemon.socket), "health"],
            env=_owner_env(daemon), timeout=120).returncode == 0

    wait_until(answers, "the owner's daemon to answer", timeout=START_TIMEOUT_S,
               saw=lambda: daemon.output()[-4000:])
    return daemon


def _owner_env(daemon: RunningDaemon) -> dict[str, str]:
    return {"PYTHONPATH": daemon.env["PYTHONPATH"], "PATH": "/usr/bin:/bin"}


@pytest.fixture(scope="module")
def owner() -> Iterator[RunningDaemon]:
    """The per-user daemon of an unprivileged uid."""
    daemon = _owned_daemon()
    try:
        yield start(daemon)
    finally:
        stop_and_remove(daemon)


def call(daemon: RunningDaemon, *args: str) -> dict[str, Any]:
    """One request of the owner (the driver, as the owner's uid)."""
    done = _as_owner([str(daemon.extra["python"]), str(DRIVER), str(daemon.socket), *args],
                     env=_owner_env(daemon), timeout=300)
    assert done.returncode == 0, done.stderr + daemon.output()[-3000:]
    out: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return out


def workdir(daemon: RunningDaemon, name: str) -> Path:
    """A fresh tree of the owner's in its home, for one case."""
    top = daemon.home / "w" / name
    top.mkdir(parents=True)
    (top / "f").write_text("alpha\nbeta\ngamma\n")
    (top / "src").write_text("source text\n")
    (top / "sub").mkdir()
    (top / "sub" / "keep1").write_text("k1\n")
    (top / "sub" / "keep2").write_text("k2\n")
    for path in [daemon.home / "w", *top.rglob("*"), top]:
        os.lchown(path, OWNER, OWNER)
    return top


def finished(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The plan's last event."""
    return events[-1]


CASES: list[tuple[str, str]] = [
    ("python_aliased_open", "python3 -c \"f=open; f('{T}/new','w').write('x')\""),
    ("patch", "printf '%s\\n' '--- f' '+++ f' '@@ -1,3 +1,3 @@' ' alpha' '-beta' '+BETA' "
              "' gamma' > {T}/x.diff && patch {T}/f {T}/x.diff"),
    ("split", "split -b 4 {T}/src {T}/part_"),
    ("xz", "xz {T}/f"),
    ("nameref_subtree", "declare -n r=T; T={T}/sub; rm -rf \"$r\""),
    ("tilde_plus", "cd {T}/sub && rm -f ~+/keep2"),
    ("rename", "mv {T}/src {T}/moved"),
    ("delete", "rm {T}/f"),
    ("replace_tree", "rm -rf {T}/sub && mkdir {T}/sub && echo n > {T}/sub/new"),
    ("chmod", "chmod 600 {T}/f"),
    ("tilde_minus", "cd {T}/sub && cd {T} && rm -f ~-/keep1"),
    ("awk_system", "awk 'BEGIN {{ system(\"echo hi > {T}/a\") }}'"),
    ("python_rename", "python3 -c \"import os; r=os.rename; r('{T}/f', '{T}/g')\""),
    ("gzip", "gzip -9 {T}/src"),
    ("dd", "dd if={T}/src of={T}/f conv=notrunc status=none"),
    ("truncate", "truncate -s 3 {T}/f"),
    ("ln_symlink", "ln -sf {T}/src {T}/lnk"),
    ("hard_link", "ln {T}/src {T}/hard"),
    ("mkfifo", "mkfifo {T}/fifo"),
    ("touch_mtime", "touch -d 2001-01-01 {T}/f"),
]


@pytest.mark.parametrize(("name", "command"), CASES, ids=[c[0] for c in CASES])
def test_writer_is_captured_applied_and_undone(owner: RunningDaemon, name: str,
                                               command: str) -> None:
    top = workdir(owner, name)
    before = fingerprint(top)
    ran = call(owner, "run", json.dumps([["s", command.replace("{T}", str(top)), "HIGH"]]))
    assert finished(ran["events"])["status"] == "succeeded", ran["events"]
    assert not any("runs live" in r for r in ran["reasons"]), ran["reasons"]
    assert fingerprint(top) != before, "the step changed nothing"
    rolled = call(owner, "rollback", ran["plan_id"])
    assert rolled["status"] == "rolled_back", rolled["undo"]
    assert fingerprint(top) == before
    assert not layers_left(owner.state), "upper layers were left on the state disk"


def test_symlink_planted_under_tmp_redirects_into_the_home(owner: RunningDaemon) -> None:
    """A link planted under /tmp: the kernel resolves it in the capture, the change is seen
    at its real path in the home, landed there and undone."""
    top = workdir(owner, "planted")
    planted = owner.base / "planted-link"
    planted.symlink_to(top / "sub")
    os.lchown(planted, OWNER, OWNER)
    before = fingerprint(top)
    ran = call(owner, "run", json.dumps([["s", f"echo zz | tee {planted}/zz", "HIGH"]]))
    assert finished(ran["events"])["status"] == "succeeded", ran["events"]
    assert (top / "sub" / "zz").read_text() == "zz\n" and planted.is_symlink()
    rolled = call(owner, "rollback", ran["plan_id"])
    assert rolled["status"] == "rolled_back", rolled["undo"]
    assert fingerprint(top) == before


def test_write_the_uid_may_not_make_fails_as_live(owner: RunningDaemon) -> None:
    """A link planted toward a directory of root's: the write fails in the capture as it
    would live (the uid may not write there), and nothing lands."""
    decoy = owner.base / "roots"
    decoy.mkdir(mode=0o755)
    (decoy / "conf").write_text("root's\n")
    link = owner.base / "to-roots"
    link.symlink_to(decoy)
    os.lchown(link, OWNER, OWNER)
    before = fingerprint(decoy)
    ran = call(owner, "run", json.dumps([["s", f"echo x > {link}/conf; echo y > {link}/new",
                                          "HIGH"]]))
    assert finished(ran["events"])["status"] == "failed", ran["events"]
    assert fingerprint(decoy) == before


def test_no_write_escapes_through_another_process_root(owner: RunningDaemon) -> None:
    """``/proc/PID/root`` of the daemon's own processes (same uid) would be the real tree:
    the kernel refuses it from the step's user namespace, so every write the step made is
    one the capture saw, and the rollback removes all of them."""
    top = workdir(owner, "procroot")
    before = fingerprint(top)
    command = (f"for p in /proc/[0-9]*; do echo x > $p/root{top}/esc_${{p#/proc/}}; done "
               "2>/dev/null; true")
    ran = call(owner, "run", json.dumps([["s", command, "HIGH"]]))
    assert finished(ran["events"])["status"] == "succeeded", ran["events"]
    daemon_pid = owner.proc.pid if owner.proc is not None else -1
    names = {p.name for p in top.glob("esc_*")}
    assert f"esc_{daemon_pid}" not in names
    rolled = call(owner, "rollback", ran["plan_id"])
    assert rolled["status"] == "rolled_back", rolled["undo"]
    assert fingerprint(top) == before, "a write reached the real tree outside the capture"


@pytest.mark.parametrize(("env", "why"), [
    ({"ANNAD_CAPTURE_USERNS": "false"}, "turned off"),
    # the probe itself fails (no helper can start): detected, not configured
    ({"ANNAD_CONFINE_PYTHON": "/nonexistent/python3"}, "no overlay in a user namespace here"),
], ids=["setting", "probe"])
def test_without_the_capture_a_file_step_is_high_and_never_rolled_back(
        env: dict[str, str], why: str) -> None:
    """A daemon that cannot capture (``capture_userns = false``, or a probe that fails, as
    where the kernel forbids user namespaces): the step is HIGH, "runs live; Anna cannot undo
    it"; it runs, and its rollback says it is not undone."""
    daemon = _owned_daemon(env=env)
    try:
        start(daemon)
        top = workdir(daemon, "live")
        ran = call(daemon, "run", json.dumps([["s", f"python3 -c \"f=open; f('{top}/new','w')"
                                                    ".write('x')\"", "LOW"]]))
        assert ran["final_risk"] == "HIGH"
        assert any("runs live; Anna cannot undo it" in r and why in r
                   for r in ran["reasons"]), ran["reasons"]
        assert finished(ran["events"])["status"] == "succeeded", ran["events"]
        assert (top / "new").read_text() == "x"
        rolled = call(daemon, "rollback", ran["plan_id"])
        assert rolled["status"] != "rolled_back", rolled
        assert any(u["action"] == "uncaptured" and not u["ok"] for u in rolled["undo"]), rolled
        assert (top / "new").exists()
    finally:
        stop_and_remove(daemon)
