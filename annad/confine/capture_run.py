"""Approved steps with their file writes captured: the capture helpers' pool.

:func:`run_capture` hands a step's spec to a capture helper
(:mod:`annad.capture.helper`, one per plan running, kept from step to step), which
runs it in a private mount namespace over overlays whose upper layers are on the state disk;
:mod:`annad.capture.layers` reads those layers back as the step's real change set.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from annad.confine import loopback
from annad.confine.results import RunResult, Tail
from annad.confine.runner import collector, spawn_helper
from annad.confine.session import Pool, Process

CAPTURE_HELPER = Path(__file__).parent.parent / "capture" / "helper.py"
"""The script that runs an approved step with its file writes captured in overlays."""


def _spawn(argv: list[str], pass_fds: tuple[int, ...]) -> Process:
    """A capture helper, moved into the loopback wall's leaf at once (a root daemon's): the
    steps it forks are born there, instead of each moving itself — a move between cgroups
    waits for an RCU grace period, milliseconds per step on a loaded machine."""
    proc = spawn_helper(argv, pass_fds)
    loopback.adopt(proc.pid)
    return proc


CAPTURES = Pool(_spawn)
"""The capture helpers of this daemon, kept from step to step (one per plan running)."""


def run_capture(spec: str, *, timeout: float, max_output: int,
                on_output: Callable[[str], None] | None = None,
                cancel: threading.Event | None = None,
                on_spawn: Callable[[int], None] | None = None,
                python: str | None = None) -> RunResult:
    """Run an approved step (``spec``, JSON) through a capture helper: its file writes land
    in upper layers on the state disk; on return the step and all it started have ended. A
    capture that cannot be built runs nothing (never live instead): ``error`` says why."""
    started = time.monotonic()
    if cancel is not None and cancel.is_set():
        return RunResult(exit_code=None, output="", cancelled=True)
    tail = Tail(max_output)

    def argv_for(sock_fd: int) -> list[str]:
        return [python or sys.executable, "-I", "-S", str(CAPTURE_HELPER), "--", str(sock_fd)]

    spec = loopback.walled(spec)  # a root step reaches no service on this machine
    outcome = CAPTURES.run((python,), spec.encode("utf-8", "surrogateescape"), argv_for,
                           deadline=started + timeout, cancel=cancel,
                           on_output=collector(tail, on_output), on_spawn=on_spawn)
    result = RunResult(exit_code=outcome.exit_code, output=tail.text(), truncated=tail.dropped,
                       timed_out=outcome.timed_out, cancelled=outcome.cancelled,
                       duration_ms=(time.monotonic() - started) * 1000)
    if outcome.error is not None and not (outcome.timed_out or outcome.cancelled):
        result.exit_code = None
        result.error = outcome.error if outcome.started else \
            f"the capture could not be set up, so the step did not run: {outcome.error}"
    return result


def probe_userns(directory: Path, *, timeout: float, python: str | None = None) -> str | None:
    """Why this (non-root) uid cannot capture steps here, or None: a capture helper mounts an
    overlay in a user namespace in ``directory`` (a new, empty directory on the state disk,
    which the caller removes) and writes through it. A kernel without unprivileged user
    namespaces or overlays in them, or one that forbids them, answers with its reason."""
    result = run_capture(json.dumps({"probe": str(directory)}), timeout=timeout,
                         max_output=4096, python=python)
    if result.ok:
        return None
    return result.error or f"the probe exited with status {result.exit_code}"
