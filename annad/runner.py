"""The only place annad spawns a process.

Steps run as ``bash --noprofile --norc -c COMMAND`` with standard input from
/dev/null and no terminal, in a new session (so a timeout or a cancel kills the
whole process group, not just bash), with a minimal environment: a fixed PATH,
``PAGER=cat``, ``SYSTEMD_PAGER=`` and ``GIT_PAGER=cat`` so nothing waits for a
person, and for user-scope steps the caller's uid, gid, groups, home and
whitelisted session variables. Output is capped: the tail is kept, because the
end of a failing command's output is what explains the failure.

Helper programs the daemon itself needs (``systemctl``, ``pacman -Q``) run
through :func:`run_argv`: no shell, a short timeout, the same caps.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import pwd
import re
import signal
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from annad.confine import Confinement, helper_argv
from annad.credentials import Identity

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 300.0
"""Per-step timeout."""
DEFAULT_MAX_OUTPUT = 64 * 1024
"""Bytes of output kept per step (the tail)."""
KILL_GRACE_S = 2.0
"""Seconds between SIGTERM and SIGKILL for a process group that overran."""
STEP_UMASK = 0o022
"""File creation mask of every spawned process."""
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""PATH for every step: never inherited from a caller."""


def sudo_shims() -> dict[str, str]:
    """Bash functions (exported through the environment) standing in for ``sudo`` and ``doas``.

    A root step and a confined command run ``sudo CMD`` as ``CMD``: the step is already root,
    with the HOME Anna judged (real sudo would reset HOME to /root, and ``sudo sh -c 'echo >
    ~/f'`` would write where nobody looked); a confined command gains nothing from sudo (no new
    privileges) but would only print an error. Options other than plain flags (``-u USER``,
    ``-i``, ``-s``, ``-l``…) go to the real program unchanged.
    """
    shims = {}
    for name in ("sudo", "doas"):
        shims[f"BASH_FUNC_{name}%%"] = (
            '() { local a=("$@"); while [ "$#" -gt 0 ]; do case "$1" in --) shift; break;; '
            f'-*[!nEHSkbP]*) command {name} "${{a[@]}}"; return;; -*) shift;; *) break;; '
            'esac; done; "$@"; }')
    return shims


_PLAIN_LOCALE = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
SESSION_KEYS = ("XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "LANG",
                "HYPRLAND_INSTANCE_SIGNATURE", "SWAYSOCK")
"""Session variables passed to user-scope steps (compositor sockets included: hyprctl and
swaymsg need them to reach the session)."""


@dataclass(slots=True)
class RunResult:
    """What a finished process left behind."""

    exit_code: int | None
    """Exit status; negative for a signal; None if it never started."""
    output: str
    """Combined stdout and stderr (the tail, decoded as UTF-8 with replacement)."""
    truncated: bool = False
    """Whether earlier output was dropped."""
    timed_out: bool = False
    """Killed for running past its timeout."""
    cancelled: bool = False
    """Killed because a cancel was requested."""
    duration_ms: float = 0.0
    """Wall time."""
    error: str | None = None
    """Why it could not be started."""

    @property
    def ok(self) -> bool:
        """Exited 0 on its own."""
        return self.exit_code == 0 and not self.timed_out and not self.cancelled


@dataclass
class _Tail:
    limit: int
    chunks: deque[bytes] = field(default_factory=deque)
    size: int = 0
    dropped: bool = False

    def add(self, data: bytes) -> None:
        self.chunks.append(data)
        self.size += len(data)
        while self.size > self.limit and self.chunks:
            head = self.chunks.popleft()
            excess = self.size - self.limit
            self.dropped = True
            if len(head) > excess:
                self.chunks.appendleft(head[excess:])
                self.size -= excess
            else:
                self.size -= len(head)

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")


def step_environment(identity: Identity | None, session: Mapping[str, str | None] | None,
                     *, home: str | None = None) -> dict[str, str]:
    """The environment of a step: fixed basics, the identity's home, whitelisted session vars.

    A root step (no identity) gets ``home`` as HOME: the home Anna judged ``~`` to be (the plan
    owner's, from passwd), never the daemon's own HOME, which systemd may leave unset.
    """
    env = {
        "PATH": SAFE_PATH,
        "PAGER": "cat",
        "SYSTEMD_PAGER": "",
        "GIT_PAGER": "cat",
        "TERM": "dumb",
        "LC_ALL": "C.UTF-8",
        "SHELL": "/bin/bash",
        "DEBIAN_FRONTEND": "noninteractive",
    }
    if identity is not None:
        env.update(HOME=identity.home, USER=identity.user, LOGNAME=identity.user)
    else:
        env.update(HOME=home or _own_home(), USER="root", LOGNAME="root")
    for key in SESSION_KEYS:
        value = (session or {}).get(key)
        if not value:
            continue
        # A system-scope step runs as root for whoever asked: the caller's bus and runtime
        # addresses would point root's programs at sockets the caller controls, and a
        # locale name with a slash is a path glibc loads. Root gets a plain LANG only.
        if identity is None and (key != "LANG" or not _PLAIN_LOCALE.fullmatch(value)):
            continue
        env[key] = value
    if "LANG" in env:
        env.pop("LC_ALL", None)  # the person's language wins for messages
    return env


def _own_home() -> str:
    """The daemon's home from passwd (not ``$HOME``): a helper's fallback, never a step's."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_dir or "/"
    except KeyError:
        return "/"


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after a grace period."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=KILL_GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue


def _spawn(argv: list[str], *, identity: Identity | None, env: dict[str, str], cwd: str | None,
           pass_fds: tuple[int, ...] = ()) -> subprocess.Popen[bytes]:
    user = group = None
    extra_groups: list[int] | None = None
    if identity is not None and (identity.uid != os.geteuid() or identity.gid != os.getegid()):
        user, group, extra_groups = identity.uid, identity.gid, list(identity.groups)
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=cwd,
        start_new_session=True,  # own process group: timeouts kill children too
        close_fds=True,
        pass_fds=pass_fds,
        # the daemon's own umask is 077 (its journal and backups are private); steps get the
        # usual 022 so files they create have the permissions a shell would give them
        umask=STEP_UMASK,
        user=user,
        group=group,
        extra_groups=extra_groups,
    )


def _run(argv: list[str], *, timeout: float, max_output: int, identity: Identity | None,
         env: dict[str, str], cwd: str | None, on_output: Callable[[str], None] | None,
         cancel: threading.Event | None, on_spawn: Callable[[int], None] | None = None,
         pass_fds: tuple[int, ...] = ()) -> RunResult:
    started = time.monotonic()
    tail = _Tail(max_output)
    try:
        proc = _spawn(argv, identity=identity, env=env, cwd=cwd, pass_fds=pass_fds)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return RunResult(exit_code=None, output="", error=f"cannot start: {exc}")
    finally:
        for fd in pass_fds:
            os.close(fd)  # the child has its copy; ours would keep the pipe open
    if on_spawn is not None:
        try:
            on_spawn(proc.pid)  # the pid is also the process group id (new session)
        except Exception:
            log.exception("spawn listener failed")

    def pump() -> None:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        for chunk in iter(lambda: os.read(fd, 65536), b""):
            tail.add(chunk)
            if on_output is not None:
                try:
                    on_output(chunk.decode("utf-8", "replace"))
                except Exception:  # a broken listener must not stop the step
                    log.exception("output listener failed")

    reader = threading.Thread(target=pump, name="runner-output", daemon=True)
    reader.start()
    timed_out = cancelled = False
    deadline = started + timeout
    while True:
        try:
            proc.wait(timeout=0.05)
            break
        except subprocess.TimeoutExpired:
            if cancel is not None and cancel.is_set():
                cancelled = True
            elif time.monotonic() >= deadline:
                timed_out = True
            else:
                continue
            _kill_group(proc)
            break
    reader.join(timeout=KILL_GRACE_S)
    if proc.stdout is not None:
        proc.stdout.close()
    return RunResult(
        exit_code=proc.returncode,
        output=tail.text(),
        truncated=tail.dropped,
        timed_out=timed_out,
        cancelled=cancelled,
        duration_ms=(time.monotonic() - started) * 1000,
    )


def run_shell(
    command: str,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_output: int = DEFAULT_MAX_OUTPUT,
    identity: Identity | None = None,
    session: Mapping[str, str | None] | None = None,
    cwd: str | None = None,
    on_output: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    on_spawn: Callable[[int], None] | None = None,
    home: str | None = None,
) -> RunResult:
    """Run an approved step with ``bash --noprofile --norc -c``.

    ``on_spawn(pid)`` is called once the process exists (its pid is its process group).
    ``home`` is HOME of a root step (``identity`` None): the home Anna judged ``~`` to be.
    """
    env = step_environment(identity, session, home=home)
    if identity is None:
        env.update(sudo_shims())
    workdir = cwd or (identity.home if identity is not None else None)
    if workdir is not None and not Path(workdir).is_dir():
        workdir = "/"
    return _run(["/bin/bash", "--noprofile", "--norc", "-c", command], timeout=timeout,
                max_output=max_output, identity=identity, env=env, cwd=workdir,
                on_output=on_output, cancel=cancel, on_spawn=on_spawn)


def run_confined(
    command: str,
    identity: Identity,
    *,
    root_read: bool = False,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_output: int = DEFAULT_MAX_OUTPUT,
    session: Mapping[str, str | None] | None = None,
    cwd: str | None = None,
    on_output: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    on_spawn: Callable[[int], None] | None = None,
    scratch: tuple[str, ...] = (),
    python: str | None = None,
) -> RunResult:
    """Run ``command`` with bash inside the confinement of :mod:`annad.confine`.

    It runs as ``identity`` (the plan's owner), or — ``root_read``, system daemon only — as
    uid 0 without any capability, HOME still the owner's. ``scratch`` directories get a
    throw-away tmpfs (nothing else is writable). ``python`` is the interpreter of the helper
    (the daemon's own by default). When the confinement cannot be built the command does not
    run: ``error`` says why and ``exit_code`` is None. Never an unconfined fallback.
    """
    userns = os.geteuid() != 0
    if userns and (root_read or identity.uid != os.geteuid()):
        return RunResult(exit_code=None, output="",
                         error="confinement refused: a per-user daemon runs only its owner's "
                         "commands, never as root")
    if root_read:
        env = step_environment(None, session, home=identity.home)
        confinement = Confinement(uid=0, gid=0, env=env, cwd=cwd or "/")
    else:
        env = step_environment(identity, session)
        confinement = Confinement(uid=identity.uid, gid=identity.gid, groups=identity.groups,
                                  userns=userns, env=env, cwd=cwd or identity.home)
    env.update(sudo_shims())
    confinement = dataclasses.replace(confinement, scratch=scratch)
    status_r, status_w = os.pipe()
    try:
        argv = helper_argv(command, confinement, status_fd=status_w, python=python)
        result = _run(argv, timeout=timeout, max_output=max_output, identity=None,
                      env={"PATH": SAFE_PATH, "LC_ALL": "C.UTF-8"}, cwd="/",
                      on_output=on_output, cancel=cancel, on_spawn=on_spawn,
                      pass_fds=(status_w,))
        os.set_blocking(status_r, False)
        try:
            status = os.read(status_r, 4096)
        except BlockingIOError:
            status = b""
    finally:
        os.close(status_r)
    if result.cancelled or result.timed_out:
        return result  # stopped from outside, maybe before it started: that is the news
    if result.error is None and not status.startswith(b"R"):
        why = status[2:].decode("utf-8", "replace") if status.startswith(b"E:") else \
            f"the helper ended (status {result.exit_code}) before the command started"
        result.error = f"confinement could not be set up, so the command did not run: {why}"
        result.exit_code = None
    elif result.error is not None:
        result.error = f"confinement could not be started, so the command did not run: " \
            f"{result.error}"
    return result


def run_argv(
    argv: list[str],
    *,
    timeout: float = 10.0,
    max_output: int = DEFAULT_MAX_OUTPUT,
    identity: Identity | None = None,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Run a helper program without a shell (telemetry, pre-state queries)."""
    base = step_environment(identity, None)
    base.update(env or {})
    return _run(list(argv), timeout=timeout, max_output=max_output, identity=identity, env=base,
                cwd=None, on_output=None, cancel=None)


def process_start_time(pid: int) -> int | None:
    """A process's start time (clock ticks since boot, ``/proc/PID/stat`` field 22), or None.

    With the pid it identifies a process across pid reuse: a recorded (pid, start time)
    names the same process only if both still match.
    """
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2:].split()  # the name in parentheses may hold spaces
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def kill_orphan_group(pid: int, start_time: int) -> bool:
    """SIGKILL the process group of a step left running by a dead daemon.

    Only when ``pid`` is still the very process that was started (same start time) and
    still leads its group: a reused pid is never signalled.
    """
    if process_start_time(pid) != start_time:
        return False
    try:
        if os.getpgid(pid) != pid:
            return False
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True
