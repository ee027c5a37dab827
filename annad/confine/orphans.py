"""Step processes a dead daemon left running: recognised across pid reuse, killed by group.

A step runs in its own session, so its pid is its process group. The executor records the
pid with the process's start time when the step is spawned; a restarted daemon kills that
group before it undoes anything, and only when both still match: a reused pid is never
signalled.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path


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
