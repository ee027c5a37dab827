"""A real annad in a temporary directory, for every engineer's tests.

:func:`start_daemon` runs ``python -m annad.main`` as a real subprocess (uvicorn on a
real Unix socket) with everything inside one short temporary directory: the socket,
the state dir (journal, backups), the home used for user-scope steps
(``ANNAD_HOME_OVERRIDE``), the pacman database telemetry reads, and a config path
that does not exist (``ANNAD_CONFIG``), so the machine's ``/etc/anna`` is never read.
The directory is short (``/tmp/anna-d-XXXX``) because Unix socket paths are limited to
107 bytes.

Fixtures (import them into your conftest):
``user_daemon`` (a per-user daemon), ``system_daemon`` (the system daemon; the tests
run as root, so it runs as root — plans must only touch paths inside ``daemon.base``).

A daemon costs seconds to start. A test marked ``@pytest.mark.shared_daemon`` gets, as
``user_daemon``, one daemon shared by the marked tests of its module (``shared_user_daemon``,
module scope; import it into your conftest next to ``user_daemon``). Mark only a test that
leaves nothing another test looks at: not one that kills, restarts or reconfigures the
daemon, tampers with its journal or socket, or asserts the whole list of stored plans; such
a test (and every unmarked one) gets a fresh daemon of its own.
:func:`make_plan` builds ActionPlan JSON from ``(id, command, risk)`` tuples.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from annactl.core.daemon_client import DaemonClient
from tests.waiting import WAIT_S, wait_until

REPO = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 2 * WAIT_S
"""Bound on a daemon's start, a condition (it answers, or it exits) polled, never a pause:
generous, since a start under another full suite's load took more than 30 s."""
IS_ROOT = os.geteuid() == 0


@dataclass
class RunningDaemon:
    """A started annad and the temporary places it uses."""

    base: Path
    """The temporary directory holding everything below."""
    socket: Path
    state: Path
    home: Path
    """The home user-scope steps run in (``ANNAD_HOME_OVERRIDE``)."""
    log: Path
    """The daemon's stderr."""
    argv: list[str]
    env: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def client(self) -> DaemonClient:
        """A real client on this daemon's socket."""
        return DaemonClient(self.socket)

    def start(self) -> RunningDaemon:
        """Start (or restart) the daemon and wait until it answers."""
        log = self.log.open("ab")
        try:
            self.proc = subprocess.Popen(self.argv, env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=log, cwd=str(self.base))
        finally:
            log.close()
        from tests.waiting import wait_until

        def answers() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"annad exited ({self.proc.returncode}):\n{self.output()}")
            with contextlib.suppress(Exception):
                self.client().health()
                return True
            return False

        try:
            wait_until(answers, "annad to answer", timeout=START_TIMEOUT_S,
                       saw=lambda: self.output()[-4000:])
        except AssertionError:
            self.kill()
            raise
        return self

    def output(self) -> str:
        """What the daemon logged."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self, timeout: float = WAIT_S) -> int | None:
        """SIGTERM and wait; returns the exit status (None if it had to be killed)."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self) -> None:
        """SIGKILL (a crash), and reap it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def _clean_env(extra: dict[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANNA_", "ANNAD_"))}
    env.pop("NOTIFY_SOCKET", None)
    env["PYTHONPATH"] = str(REPO)
    env.update(extra or {})
    return env


def new_daemon(*, user_mode: bool, env: dict[str, str] | None = None,
               args: list[str] | None = None) -> RunningDaemon:
    """A daemon set up (not started) in a fresh short temporary directory."""
    base = Path(tempfile.mkdtemp(prefix="anna-d-", dir="/tmp"))
    home = base / "home"
    (home / ".config").mkdir(parents=True)
    dbpath = base / "pacman-db"
    (dbpath / "local").mkdir(parents=True)
    socket = base / "run" / "annad.sock"
    state = base / "state"
    full_env = _clean_env({
        "HOME": str(home), "XDG_RUNTIME_DIR": str(base / "run"),
        "XDG_STATE_HOME": str(base / "xdg-state"),
        "ANNAD_CONFIG": str(base / "no-such-annad.toml"),
        # never the machine's /etc/anna/policy.toml (tests/daemon/test_policy*.py write one here)
        "ANNAD_POLICY_FILE": str(base / "policy.toml"),
        "ANNAD_HOME_OVERRIDE": str(home),
        # judge plans as on Arch: pacman is the native package manager in these tests
        "ANNAD_DISTRO": "arch",
        # a plan still running at teardown is cancelled and undone after 5 s, not 90
        "ANNAD_STOP_GRACE_S": "5",
        # recipes and desktop notifications: never the machine's /etc or real sessions
        "ANNAD_RECIPES_DIR": str(base / "recipes.d"),
        "ANNAD_NOTIFY_COMMAND": str(base / "no-notify-send"),
        "ANNAD_NOTIFY_RUNTIME_ROOT": str(base / "no-run-user"),
        # never snapper or etckeeper on the machine's own / and /etc; lock-out checks look
        # at a scratch etc tree (tests that want snapshots turn them on)
        "ANNAD_SNAPSHOTS": "false",
        "ANNAD_ETC_ROOT": str(base / "etc"),
        **(env or {}),
    })
    argv = [sys.executable, "-m", "annad.main", "--socket", str(socket), "--state-dir",
            str(state), "--pacman-dbpath", str(dbpath), "--idle-exit", "0",
            *(["--user-mode"] if user_mode else []), *(args or [])]
    if not user_mode:
        full_env["ANNAD_USER_MODE"] = "false"
    return RunningDaemon(base=base, socket=socket, state=state, home=home,
                         log=base / "annad.log", argv=argv, env=full_env)


def step_processes(daemon: RunningDaemon) -> list[int]:
    """Live processes running with this daemon's HOME (its steps), zombies not counted."""
    home = f"HOME={daemon.home}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if home not in (proc / "environ").read_bytes().split(b"\0"):
                continue
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        if stat[stat.rfind(")") + 2] not in "ZX":
            found.append(int(proc.name))
    return found


def kill_left_steps(daemon: RunningDaemon) -> list[int]:
    """Kill the step processes a killed daemon left running, as its restart would
    (``annad.confine.orphans``): a test that kills the daemon mid-step and never restarts it would
    otherwise leave the step looping for the rest of the run. Then any process still
    running with the daemon's HOME: a daemon killed between spawning a step and recording
    its pid leaves no record (seen once in ~30 runs of those tests)."""
    from annad.confine.orphans import PROCESS_FILE, kill_orphan_group

    killed = []
    for path in daemon.base.rglob(PROCESS_FILE):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            info = json.loads(path.read_text())
            if kill_orphan_group(int(info["pid"]), int(info["start"])):
                killed.append(int(info["pid"]))
    if daemon.proc is None or daemon.proc.poll() is not None:  # never a live daemon's steps
        for pid in step_processes(daemon):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
    return killed


def decoy_etc_daemon(env: dict[str, str] | None = None) -> RunningDaemon:
    """A system daemon (not started) whose /etc is a copy in a private mount namespace
    (tests/decoyns.py): the real one is out of its reach. The copy is ``extra["etc"]``, with
    ``sudoers.d`` and an ``ssh/sshd_config`` for the writers to aim at."""
    daemon = new_daemon(user_mode=False, env=env)
    etc = daemon.base / "decoy-etc"
    shutil.copytree("/etc", etc, symlinks=True)
    (etc / "sudoers.d").mkdir(exist_ok=True)
    (etc / "ssh").mkdir(exist_ok=True)
    (etc / "ssh" / "sshd_config").write_text("PermitRootLogin no\n")
    daemon.argv = ["unshare", "-m", "--propagation", "private", sys.executable,
                   str(REPO / "tests" / "decoyns.py"), str(etc), "/etc", "--", *daemon.argv]
    daemon.extra["etc"] = etc
    return daemon


def layers_left(state: Path) -> list[Path]:
    """The capture's upper layers still on the state disk, once the daemon's trash thread
    has emptied the trash (it removes thrown-away layers in the background: a scan while it
    works would race with its deletions)."""
    trash = state / "trash"
    wait_until(lambda: not trash.is_dir() or not any(trash.iterdir()),
               "the daemon's trash to be emptied")
    return list(state.rglob("layers"))


def stop_and_remove(daemon: RunningDaemon) -> None:
    """Stop (SIGTERM, then SIGKILL), kill any step left running, delete the directory."""
    try:
        daemon.stop()
    finally:
        daemon.kill()
        kill_left_steps(daemon)
        shutil.rmtree(daemon.base, ignore_errors=True)


@contextlib.contextmanager
def running_daemon(*, user_mode: bool, env: dict[str, str] | None = None,
                   args: list[str] | None = None) -> Iterator[RunningDaemon]:
    """Start a daemon; stop it and delete its directory afterwards.

    The stop (SIGTERM, a clean shutdown: a second or two) and the removal finish in a
    thread while the next test starts: nothing after the test looks at this daemon, and
    the interpreter waits for the thread before it exits (it is not a daemon thread).
    """
    daemon = new_daemon(user_mode=user_mode, env=env, args=args)
    try:
        yield daemon.start()
    finally:
        threading.Thread(target=stop_and_remove, args=(daemon,),
                         name=f"stop {daemon.base.name}").start()


@pytest.fixture(scope="module")
def shared_user_daemon() -> Iterator[RunningDaemon]:
    """One per-user daemon for the ``shared_daemon`` tests of a module."""
    # (started before the first test's isolated_home; new_daemon points every place the
    # daemon reads — HOME, XDG_RUNTIME_DIR, XDG_STATE_HOME, its config — into its own base)
    with running_daemon(user_mode=True) as daemon:
        yield daemon


def _idle(daemon: RunningDaemon) -> RunningDaemon:
    """The shared daemon, alive and running no plan (a previous test may still be finishing
    an undo); fail saying what it logged otherwise."""
    from tests.waiting import wait_until

    def idle() -> bool:
        if daemon.proc is None or daemon.proc.poll() is not None:
            raise AssertionError(f"the shared daemon has exited:\n{daemon.output()[-4000:]}")
        with contextlib.suppress(Exception):
            return daemon.client().health().running_plan is None
        return False

    wait_until(idle, "the shared daemon to be idle", saw=lambda: daemon.output()[-4000:])
    return daemon


@pytest.fixture
def user_daemon(request: pytest.FixtureRequest) -> Iterator[RunningDaemon]:
    """A per-user daemon (``--user-mode``) in a temporary directory: the test's own, or the
    module's shared one for a test marked ``shared_daemon``."""
    if request.node.get_closest_marker("shared_daemon") is not None:
        yield _idle(request.getfixturevalue("shared_user_daemon"))
        return
    with running_daemon(user_mode=True) as daemon:
        yield daemon


@pytest.fixture
def system_daemon() -> Iterator[RunningDaemon]:
    """The system daemon (runs as root: the tests do); skipped when not root."""
    if not IS_ROOT:
        pytest.skip("the system daemon needs root")
    with running_daemon(user_mode=False) as daemon:
        yield daemon


def make_plan(steps: list[tuple[str, str, str]], *, rollback: dict[str, str] | None = None,
              checks: list[tuple[str, str]] | None = None, goal: str = "test plan"
              ) -> dict[str, Any]:
    """ActionPlan JSON: ``steps`` are (id, command, risk); ``rollback`` maps step id → command."""
    rollback = rollback or {}
    return {
        "analysis": "test",
        "goals": [goal],
        "necessary_checks": [
            {"id": cid, "description": cid, "command": cmd, "risk_level": "INFO",
             "required": False} for cid, cmd in (checks or [])],
        "command_plan": [
            {"id": sid, "description": sid, "command": cmd, "risk_level": risk,
             "rollback_id": f"undo-{sid}" if sid in rollback else None,
             "requires_confirmation": risk != "INFO"} for sid, cmd, risk in steps],
        "rollback_plan": [
            {"id": f"undo-{sid}", "description": f"undo {sid}", "command": cmd}
            for sid, cmd in rollback.items()],
        "notes_for_user": "",
        "meta": {"detection_results": {}, "template_used": None,
                 "llm_version": "anna_runtime_v3"},
    }


@contextlib.contextmanager
def netns_root_daemon(program: str) -> Iterator[RunningDaemon]:
    """A started root daemon in a network namespace of its own (``unshare -n``): what its
    live steps change in the network is that namespace's, never the machine's. Skips the
    test without root or ``program``."""
    if not IS_ROOT or shutil.which(program) is None:
        pytest.skip(f"needs root and {program}")
    daemon = new_daemon(user_mode=False)
    daemon.argv = ["unshare", "-n", *daemon.argv]
    try:
        yield daemon.start()
    finally:
        stop_and_remove(daemon)


def run_and_roll_back(client: DaemonClient, command: str, rollback: str | None) -> Any:
    """Submit a one-step plan (``command``, its ``rollback`` command if any), run it to
    success, roll it back; the RollbackResponse."""
    from anna_common.plan import ActionPlan
    from anna_common.risk import tiers

    response = client.submit(ActionPlan.model_validate(make_plan(
        [("s", command, "MEDIUM")], rollback={"s": rollback} if rollback else None)))
    annotated = response.annotated
    high = annotated.final_risk == "HIGH"
    events = list(client.execute(response.plan_id, response.digest, confirmed=True,
                                 high_confirmed=high,
                                 confirm_word=tiers.plan_word(annotated) if high else None))
    assert events[-1].status == "succeeded", [(e.type, e.message, e.output) for e in events]
    return client.rollback(response.plan_id, confirm_word=tiers.rollback_word(annotated))


def http(socket: Path, method: str, path: str, body: Any = None,
         headers: dict[str, str] | None = None, raw: bytes | None = None) -> tuple[int, Any]:
    """One raw HTTP request over the socket: (status, parsed JSON or text)."""
    import http.client
    import json
    import socket as socketmod

    conn = http.client.HTTPConnection("annad", timeout=60)
    sock = socketmod.socket(socketmod.AF_UNIX, socketmod.SOCK_STREAM)
    sock.connect(str(socket))
    conn.sock = sock
    payload = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    conn.request(method, path, body=payload,
                 headers={"Content-Type": "application/json", **(headers or {})})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    try:
        return response.status, json.loads(data)
    except ValueError:
        return response.status, data.decode(errors="replace")
