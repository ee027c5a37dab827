"""Sessions of the confinement helper: one process per confinement, reused run after run.

Starting a Python helper costs tens of milliseconds of CPU; an INFO step of ``true`` costs
one. So a helper (:mod:`annad.confine.helper`) is started once per confinement — the same
owner, the same masks, the same socket view — and kept while runs keep coming: every step
and check of a plan goes to the same process, which forks, walls in and executes each
command (a few milliseconds). A helper idle for :data:`IDLE_S` is closed; closing its
socket makes it kill whatever it runs and exit. One run at a time per helper: a second
concurrent run with the same confinement gets a second helper.

The process itself is started by :mod:`annad.confine.runner` (the one place that spawns),
which hands :class:`Pool` its start function.
"""

from __future__ import annotations

import logging
import os
import selectors
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable

    from annad.confine.spec import RunLimits

log = logging.getLogger(__name__)

IDLE_S = 5.0
"""Seconds an unused helper is kept: a plan's steps and checks follow each other within
milliseconds; a new round of checks after the model answered may start a new one (tens of ms)."""
STOP_GRACE_S = 2.0
"""After a stop was asked: how long before the helper itself is killed."""


class Process(Protocol):
    """What the pool needs of a started helper (a ``subprocess.Popen``)."""

    pid: int

    def poll(self) -> int | None:
        """Exit status, or None while it runs."""

    def wait(self, timeout: float | None = None) -> int:
        """Wait for it to end."""

    def kill(self) -> None:
        """SIGKILL it."""


@dataclass(slots=True)
class Outcome:
    """What one run through a helper left."""

    exit_code: int | None = None
    """Exit status (negative: a signal); None when it never started."""
    output: list[bytes] = field(default_factory=list)
    """Output chunks in order (the caller keeps the tail)."""
    error: str | None = None
    """Why it did not run."""
    timed_out: bool = False
    """Stopped for running past its deadline."""
    cancelled: bool = False
    """Stopped because a cancel was requested."""
    started: bool = False
    """The helper said the command runs (``R``): an error after it is not a refusal."""


class Helper:
    """One running helper and the daemon's end of its socket."""

    def __init__(self, argv_for: Callable[[int], list[str]], start: Callable[..., Process],
                 deadline: float) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock = ours
        self.broken = False
        self.last_used = time.monotonic()
        try:
            self.proc = start(argv_for(theirs.fileno()), (theirs.fileno(),))
        except Exception as exc:  # OSError, ValueError, SubprocessError: it never started
            ours.close()
            raise HelperError(f"cannot start: {exc}") from None
        finally:
            theirs.close()
        reply = self._reply(deadline)
        if reply != b"S":
            self.close()
            why = reply[2:].decode("utf-8", "replace") if reply.startswith(b"E:") else \
                f"the helper ended (status {self.proc.poll()}) before the command started"
            raise HelperError(why)

    def _reply(self, deadline: float) -> bytes:
        self.sock.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            return self.sock.recv(65536)
        except (TimeoutError, OSError):
            return b""
        finally:
            self.sock.settimeout(None)

    def alive(self) -> bool:
        """Whether the helper still runs."""
        return self.proc.poll() is None

    def close(self) -> None:
        """Close the socket (the helper kills what it runs and exits) and reap it."""
        self.sock.close()
        try:
            self.proc.wait(timeout=STOP_GRACE_S)
        except Exception:
            self.proc.kill()
            self.proc.wait()

    def run(self, request: bytes, *, deadline: float, cancel: threading.Event | None,
            on_output: Callable[[bytes], None] | None, on_spawn: Callable[[int], None] | None,
            fds: tuple[int, ...] = ()) -> Outcome:
        """Send one request and follow it to its end (the helper's ``X``). ``fds`` go with
        it after the output pipe: the run's cgroup (:mod:`annad.confine.cgroups`)."""
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        outcome = Outcome()
        try:
            try:
                socket.send_fds(self.sock, [request], [out_w, *fds])
            finally:
                os.close(out_w)
            with selectors.DefaultSelector() as selector:
                selector.register(out_r, selectors.EVENT_READ)
                selector.register(self.sock, selectors.EVENT_READ)
                self._follow(selector, out_r, outcome, deadline, cancel, on_output, on_spawn)
        except (HelperError, OSError) as exc:
            outcome.error = f"the confinement failed during the run: {exc}"
            self.broken = True
        finally:
            os.close(out_r)
        self.last_used = time.monotonic()
        return outcome

    def _follow(self, selector: selectors.BaseSelector, out_r: int, outcome: Outcome,
                deadline: float, cancel: threading.Event | None,
                on_output: Callable[[bytes], None] | None,
                on_spawn: Callable[[int], None] | None) -> None:
        ended = eof = stopping = False
        stop_at = None
        while not (ended and eof):
            for key, _ in selector.select(timeout=0.05):
                if key.fd == out_r:
                    chunk = os.read(out_r, 65536)
                    if not chunk:
                        eof = True
                        selector.unregister(out_r)
                    else:
                        outcome.output.append(chunk)
                        if on_output is not None:
                            on_output(chunk)
                    continue
                reply = self.sock.recv(65536)
                if not reply:
                    raise HelperError("the helper ended during a run")
                if reply.startswith(b"R"):
                    outcome.started = True
                    if on_spawn is not None:
                        on_spawn(int(reply[1:]))
                elif reply.startswith(b"E:"):
                    outcome.error = reply[2:].decode("utf-8", "replace")
                    ended = True
                elif reply.startswith(b"X"):
                    outcome.exit_code = os.waitstatus_to_exitcode(int(reply[1:]))
                    ended = True
            now = time.monotonic()
            if not stopping and not ended:
                outcome.cancelled = cancel is not None and cancel.is_set()
                outcome.timed_out = not outcome.cancelled and now >= deadline
                if outcome.cancelled or outcome.timed_out:
                    stopping, stop_at = True, now
                    self.sock.send(b"K")  # the helper kills the run and all it left
                    # the stop may cross the command's own end and stay unread: a helper
                    # asked to stop serves nothing after this run
                    self.broken = True
            if stop_at is not None and now - stop_at > STOP_GRACE_S * 2:
                raise HelperError("the helper did not stop the run")


class HelperError(Exception):
    """The helper could not be started, or failed during a run (it is then discarded)."""


class Pool:
    """Idle helpers by confinement; a background thread closes those idle too long."""

    def __init__(self, start: Callable[..., Process]) -> None:
        self._start = start
        self._lock = threading.Lock()
        self._idle: dict[tuple[object, ...], list[Helper]] = {}
        self._reaper: threading.Thread | None = None

    def run(self, key: tuple[object, ...], request: bytes,
            argv_for: Callable[[int], list[str]], *, deadline: float,
            cancel: threading.Event | None,
            on_output: Callable[[bytes], None] | None,
            on_spawn: Callable[[int], None] | None, reuse: bool = True,
            fds: tuple[int, ...] = ()) -> Outcome:
        """Run one request with a helper started for ``key`` (reused or new; the key says
        everything its command line holds: the confinement, the interpreter, the ABI).
        ``reuse=False``: the helper is closed after the run and never serves another (its
        scratch tmpfs must be gone when the command ends). ``fds``: see :meth:`Helper.run`."""
        reused = self._take(key) if reuse else None
        if reused is not None:
            outcome = self._once(key, reused, request, reuse, deadline, cancel, on_output,
                                 on_spawn, fds)
            stopped = outcome.cancelled or outcome.timed_out
            if stopped or not reused.broken or outcome.started:
                return outcome
            # an idle helper that died unseen (killed, out of memory): replaced, once
        try:
            helper = Helper(argv_for, self._start, deadline)
        except HelperError as exc:
            return Outcome(error=f"confinement could not be set up: {exc}")
        return self._once(key, helper, request, reuse, deadline, cancel, on_output, on_spawn,
                          fds)

    def _once(self, key: tuple[object, ...], helper: Helper, request: bytes, reuse: bool,
              deadline: float, cancel: threading.Event | None,
              on_output: Callable[[bytes], None] | None,
              on_spawn: Callable[[int], None] | None, fds: tuple[int, ...]) -> Outcome:
        outcome = helper.run(request, deadline=deadline, cancel=cancel, on_output=on_output,
                             on_spawn=on_spawn, fds=fds)
        if reuse and not helper.broken:
            self._give(key, helper)
        else:
            helper.close()
        return outcome

    def _take(self, key: tuple[object, ...]) -> Helper | None:
        with self._lock:
            idle = self._idle.get(key, [])
            while idle:
                helper = idle.pop()
                if helper.alive():
                    return helper
                helper.close()
        return None

    def _give(self, key: tuple[object, ...], helper: Helper) -> None:
        with self._lock:
            self._idle.setdefault(key, []).append(helper)
            if self._reaper is None:
                self._reaper = threading.Thread(target=self._reap, name="confine-reaper",
                                                daemon=True)
                self._reaper.start()

    def _reap(self) -> None:
        while True:
            time.sleep(IDLE_S / 3)
            now = time.monotonic()
            stale: list[Helper] = []
            with self._lock:
                for idle in self._idle.values():
                    stale += [h for h in idle if now - h.last_used > IDLE_S]
                    idle[:] = [h for h in idle if now - h.last_used <= IDLE_S]
            for helper in stale:
                helper.close()

    def close_all(self) -> None:
        """Close every idle helper (tests, shutdown)."""
        with self._lock:
            helpers = [h for idle in self._idle.values() for h in idle]
            self._idle.clear()
        for helper in helpers:
            helper.close()


def encode(command: str, cwd: str, env: dict[str, str], limits: RunLimits) -> bytes:
    """The request the helper reads (:class:`annad.confine.helper.Request`)."""
    fields = [cwd, command, str(limits.memory), str(limits.processes), str(limits.cpu_s),
              *(f"{k}={v}" for k, v in env.items())]
    if any("\0" in f for f in fields):
        raise ValueError("a NUL byte in a command or its environment")
    return "\0".join(fields).encode("utf-8", "surrogateescape")
