"""Reading what was piped into ``annactl ask``, without ever stalling on it.

stdin is read only when it is a pipe, a socket or a redirected regular file: a terminal
(the person typing) and character devices such as ``/dev/null`` are never read. Reading
is bounded twice: by size (:data:`annactl.planning.piped.MAX_READ_BYTES`, then Anna stops)
and by time: a writer that keeps its end open (``tail -f log | annactl ask …``) is waited
for at most :data:`WAIT_S` seconds, then Anna goes on with what arrived and says so.
"""

from __future__ import annotations

import os
import select
import stat
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from annactl.planning.piped import Piped

PIPED_EXAMPLE = 'journalctl -b -p err | annactl "what is wrong?"'
"""How to ask about piped text (said wherever piped text cannot be used as it is)."""
WAIT_S = 20.0
"""Longest wait for the writer to close stdin (a slow ``journalctl`` takes seconds)."""
_CHUNK = 65536


def piped_fd(fd: int) -> bool:
    """``fd`` is a pipe, socket or regular file (never a terminal or a device)."""
    try:
        if os.isatty(fd):
            return False
        mode = os.fstat(fd).st_mode
    except OSError:  # closed or invalid: nothing was piped
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISREG(mode)


def read_piped(fd: int | None = None, *, wait_s: float = WAIT_S) -> Piped | None:
    """What was piped on ``fd`` (stdin by default), bounded and redacted; None when stdin
    is a terminal or a device, or nothing but blank space arrived."""
    if fd is None:
        if sys.stdin is None:
            return None
        try:
            fd = sys.stdin.fileno()
        except (OSError, ValueError):  # replaced by something without a descriptor
            return None
    if not piped_fd(fd):
        return None
    # only now: the redaction patterns compile on import (no cost for `annactl ask` typed)
    from annactl.planning.piped import MAX_READ_BYTES, bounded

    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + wait_s
    unread = still_open = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            still_open = True
            break
        try:
            ready, _, _ = select.select([fd], [], [], left)
        except (OSError, ValueError):
            break
        if not ready:
            continue  # the deadline is checked at the top
        try:
            chunk = os.read(fd, min(_CHUNK, MAX_READ_BYTES - size))
        except BlockingIOError:
            continue
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size >= MAX_READ_BYTES:
            unread = _more_waiting(fd)
            break
    return bounded(b"".join(chunks), unread=unread, still_open=still_open)


def _more_waiting(fd: int) -> bool:
    """After the size bound: whether stdin holds more (not at its end). A writer that is
    still busy counts as more; only an end of file read at once says there is none."""
    try:
        ready, _, _ = select.select([fd], [], [], 0)
        if not ready:
            return True
        return bool(os.read(fd, 1))
    except OSError:
        return True


def need_terminal(what: str, *, otherwise: str) -> None:
    """A usage error unless stdin is a terminal (``what`` needs one): piped, the hint says how
    to ask about piped text; else ``otherwise``. stdin is never read: no wait on a writer."""
    try:
        fd = sys.stdin.fileno() if sys.stdin is not None else -1
    except (OSError, ValueError):  # closed, or replaced by something without a descriptor
        fd = -1
    if fd >= 0 and os.isatty(fd):
        return
    from anna_common.errors import UsageError

    piped = fd >= 0 and piped_fd(fd)
    raise UsageError(f"{what}, and stdin is " + ("a pipe" if piped else "not a terminal"),
                     hint=f"to ask about piped text: {PIPED_EXAMPLE}" if piped else otherwise)
