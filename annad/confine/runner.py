"""The only place annad spawns a process.

Steps run as ``bash --noprofile --norc -c COMMAND`` with standard input from /dev/null and no
terminal, in a new session (so a timeout or a cancel kills the whole process group, not just
bash), with a minimal environment: a fixed PATH, ``PAGER=cat``, ``SYSTEMD_PAGER=`` and
``GIT_PAGER=cat`` so nothing waits for a person, and for user-scope steps the caller's uid,
gid, groups, home and whitelisted session variables. Output is capped: the tail is kept,
because the end of a failing command's output is what explains the failure.

Helper programs the daemon itself needs (``systemctl``, ``pacman -Q``) run through
:func:`run_argv`: no shell, a short timeout, the same caps. The environment is built by
:mod:`annad.confine.stepenv`; step processes a dead daemon left are found and killed by
:mod:`annad.confine.orphans` (no spawning there).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from annad.confine import cgroups, previews
from annad.confine.credentials import Identity
from annad.confine.filters import FilterUnavailable, compiled
from annad.confine.landlock import REQUIRED_ABI
from annad.confine.previews import PER_OWNER, PREVIEWS, runs_as_root, walled_spec
from annad.confine.readverbs import bus_sockets, needs_bus
from annad.confine.results import RunResult as RunResult  # noqa: PLC0414 - its callers import it here
from annad.confine.results import Tail
from annad.confine.session import Pool, encode
from annad.confine.spec import Confinement, RunLimits, helper_argv, protected, root_secrets
from annad.confine.stepenv import SAFE_PATH, step_environment, sudo_shims

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
    tail = Tail(max_output)
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


def spawn_helper(argv: list[str], pass_fds: tuple[int, ...]) -> subprocess.Popen[bytes]:
    """Start a confinement helper (:mod:`annad.confine.session` keeps it)."""
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, env={"PATH": SAFE_PATH,
                            "LC_ALL": "C.UTF-8"}, cwd="/", start_new_session=True,
                            close_fds=True, pass_fds=pass_fds, umask=STEP_UMASK)


def collector(tail: Tail, on_output: Callable[[str], None] | None
               ) -> Callable[[bytes], None]:
    """A helper run's output: kept in ``tail`` and passed on as text."""

    def output(chunk: bytes) -> None:
        tail.add(chunk)
        if on_output is not None:
            try:
                on_output(chunk.decode("utf-8", "replace"))
            except Exception:  # a broken listener must not stop the step
                log.exception("output listener failed")

    return output


HELPERS = Pool(spawn_helper)
"""The confinement helpers of this daemon, one per confinement, reused run after run."""


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
    masked: tuple[str, ...] = (),
    limits: RunLimits | None = None,
    required_abi: int = REQUIRED_ABI,
) -> RunResult:
    """Run ``command`` with bash inside the confinement of :mod:`annad.confine.spec`.

    It runs as ``identity`` (the plan's owner), or — ``root_read``, system daemon only — as
    uid 0 without any capability, HOME still the owner's. ``scratch`` directories get a
    throw-away tmpfs (nothing else is writable). ``python`` is the interpreter of the helper
    (the daemon's own by default). Root's secrets (for a capless-root read), Anna's own state
    (:func:`annad.confine.spec.protect`) and ``masked`` (tests' decoys) are never seen.
    ``required_abi`` raises the Landlock ABI demanded (tests see the refusal with it).
    Each run has a cgroup of its own (:func:`annad.confine.cgroups.run_cgroup`). When the
    confinement cannot be built the command does not run: ``error`` says why, ``refused`` is
    set, ``exit_code`` is None. Never an unconfined fallback.
    """
    started = time.monotonic()
    userns = os.geteuid() != 0
    if userns and (root_read or identity.uid != os.geteuid()):
        return RunResult(exit_code=None, output="", refused=True,
                         error="confinement refused: a per-user daemon runs only its owner's "
                         "commands, never as root")
    hidden = {*protected(), *masked}
    if root_read:
        env = step_environment(None, session, home=identity.home)
        confinement = Confinement(uid=0, gid=0, env=env, cwd=cwd or "/",
                                  masked=tuple(sorted({*root_secrets(), *hidden})))
    else:
        env = step_environment(identity, session)
        bus = bus_sockets(identity.uid, env.get("XDG_RUNTIME_DIR")) \
            if needs_bus(command) else None
        confinement = Confinement(uid=identity.uid, gid=identity.gid, groups=identity.groups,
                                  userns=userns, env=env, cwd=cwd or identity.home,
                                  masked=tuple(sorted(hidden)), bus=bus)
    env.update(sudo_shims())
    confinement = dataclasses.replace(confinement, scratch=scratch)
    run_limits = limits or RunLimits(cpu_s=max(int(timeout) + 1, 1))
    try:
        program = compiled(unix=confinement.bus is not None)
        request = encode(command, confinement.cwd, env, run_limits)
    except (FilterUnavailable, ValueError) as exc:
        return RunResult(exit_code=None, output="", refused=True, error=f"confinement "
                         f"refused, so the command did not run: {exc}")
    tail = Tail(max_output)

    def argv_for(sock_fd: int) -> list[str]:
        return helper_argv(confinement, sock_fd=sock_fd, program=program, abi=required_abi,
                           python=python)

    if cancel is not None and cancel.is_set():
        return RunResult(exit_code=None, output="", cancelled=True)
    key = (*confinement.session_key(), python, required_abi)
    try:  # a uid-0 run must have its cgroup: the kernel does not count uid 0's processes
        with cgroups.run_cgroup(run_limits.processes, run_limits.run_memory,
                                required=confinement.uid == 0) as fds:
            outcome = HELPERS.run(key, request, argv_for, deadline=started + timeout,
                                  cancel=cancel, on_output=collector(tail, on_output),
                                  on_spawn=on_spawn,
                                  reuse=not scratch,  # a scratch tmpfs goes with its run
                                  fds=fds)
    except cgroups.Unavailable as exc:
        return RunResult(exit_code=None, output="", refused=True, error="confinement refused, "
                         f"so the command did not run: {exc}")
    result = RunResult(exit_code=outcome.exit_code, output=tail.text(), truncated=tail.dropped,
                       timed_out=outcome.timed_out, cancelled=outcome.cancelled,
                       duration_ms=(time.monotonic() - started) * 1000)
    if outcome.error is not None and not (outcome.timed_out or outcome.cancelled):
        result.exit_code = None
        result.refused = not outcome.started
        result.error = f"{outcome.error}; the command did not run" \
            if "did not run" not in outcome.error else outcome.error
    return result


PREVIEW_HELPER = Path(__file__).parent.parent / "preview" / "overlay_helper.py"
"""The script that runs a plan's file steps over a throw-away overlay."""
PREVIEWERS = Pool(spawn_helper)
"""The preview helpers of this daemon, kept from preview to preview (each forks a child per
preview: its cgroup, namespaces and overlays are the child's alone)."""
MAX_REPORT = 64 * 1024 * 1024
"""Bytes of a preview report read back (the helper caps contents far below this)."""


def run_overlay(spec: str, *, timeout: float, max_output: int, python: str | None = None,
                owner: int | None = None, required_abi: int = REQUIRED_ABI,
                memory: int = previews.MEMORY) -> tuple[RunResult, bytes]:
    """Run ``spec`` (JSON) with a preview helper (:mod:`annad.preview.overlay_helper`); its
    result and report.

    The report travels through a memfd (on no file system; close-on-exec, so the steps can
    neither see nor forge it). The steps get the walls of a check (``walled_spec``), and the
    whole preview a cgroup (:func:`annad.confine.cgroups.leaf_for`, joined by the helper's
    child before anything runs) capped at ``memory``: one with a root step is refused where
    none can be made (the kernel does not count uid 0's processes), the owner's own steps
    run bounded by their uid's RLIMIT_NPROC and the helper's watch of their memory
    (:mod:`annad.confine.memwatch`). ``over_memory``: the cgroup's cap killed it (the watch
    says so in the report). When the confinement cannot be built nothing ran: ``error``
    says why, ``refused`` is set, ``exit_code`` is None. ``owner``'s previews are capped
    (``PER_OWNER``): one member's hanging previews never hold another member's."""
    try:
        spec = walled_spec(spec, timeout=timeout, required_abi=required_abi, memory=memory)
        root = runs_as_root(spec)
    except (FilterUnavailable, ValueError) as exc:
        return RunResult(exit_code=None, output="", refused=True, error=f"the preview "
                         f"confinement could not be set up: {exc}"), b""
    with PREVIEWS.slot(owner) as admitted:
        if not admitted:
            return RunResult(exit_code=None, output="", refused=True, error=f"the preview "
                             f"confinement refused: {PER_OWNER} preview(s) of this member "
                             "already running"), b""
        try:
            with cgroups.leaf_for(previews.preview_limits(memory), required=root) as leaf:
                walled = spec if leaf is not None else previews.watched(spec, memory)
                result, report = _overlay(walled, timeout=timeout, max_output=max_output,
                                          python=python, leaf=leaf)
                result.over_memory = leaf is not None and previews.oom_killed(leaf)
                return result, report
        except (cgroups.Unavailable, OSError) as exc:
            return RunResult(exit_code=None, output="", refused=True, error="the preview "
                             f"confinement refused, so the preview did not run: {exc}"), b""


def _overlay(spec: str, *, timeout: float, max_output: int, python: str | None,
             leaf: cgroups.Leaf | None) -> tuple[RunResult, bytes]:
    started = time.monotonic()
    report = os.memfd_create("anna-preview", os.MFD_CLOEXEC)
    tail = Tail(max_output)
    try:
        fds = (report, *(leaf.procs_fds() if leaf is not None else ()))
        try:
            outcome = PREVIEWERS.run(
                (python,), spec.encode("utf-8", "surrogateescape"),
                lambda sock: [python or sys.executable, "-I", "-S", str(PREVIEW_HELPER), "--",
                              str(sock)],
                deadline=started + timeout, cancel=None, on_output=collector(tail, None),
                on_spawn=None, fds=fds)
        finally:
            for fd in fds[1:]:
                os.close(fd)
        os.lseek(report, 0, os.SEEK_SET)
        data = os.read(report, MAX_REPORT)
    finally:
        os.close(report)
    result = RunResult(exit_code=outcome.exit_code, output=tail.text(), truncated=tail.dropped,
                       timed_out=outcome.timed_out, cancelled=outcome.cancelled,
                       duration_ms=(time.monotonic() - started) * 1000)
    if outcome.error is not None and not outcome.timed_out:
        result.exit_code = None
        result.refused = not outcome.started
        result.error = f"the preview confinement could not be set up: {outcome.error}" \
            if not outcome.started else outcome.error
    return result, data


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
