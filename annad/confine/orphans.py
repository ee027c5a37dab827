"""Step processes a dead daemon left running: recognised across pid reuse, killed by group.

A step runs in its own session, so its pid is its process group. The executor records the
pid with the process's start time when the step is spawned; a restarted daemon kills that
group before it undoes anything, and only when both still match: a reused pid is never
signalled.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import signal
from pathlib import Path

log = logging.getLogger(__name__)


PROCESS_FILE = "process.json"
"""In a step's backup dir: the pid and start time of its running process (a step's, or its
rollback command's), written by :func:`record_process`, read by the executor's orphan sweep."""


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


def record_process(path: Path, pid: int) -> None:
    """Record a spawned step (pid and start time) at ``path`` for a restarted daemon.

    A full state disk does not stop the step: the record is a few bytes written while the
    step already runs (its output may be on the way), and failing the step for it would undo
    a plan because another program filled the disk. It is logged instead — a daemon that dies
    before the step ends then leaves that step to run to its end.
    """
    started_at = process_start_time(pid)
    if started_at is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.write_text(json.dumps({"pid": pid, "start": started_at}))
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        path.unlink(missing_ok=True)
        log.warning("cannot record step process %d (%s): a daemon that dies before the step "
                    "ends does not stop it", pid, exc.strerror)


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
