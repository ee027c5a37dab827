"""A uid no other test process on this machine uses at the same time.

RLIMIT_NPROC counts a uid's tasks machine-wide, and a confined run's cap is the uid's tasks
when it starts plus its headroom. A test that fills that headroom on purpose (a fork bomb, a
crowd of waiting children) as a shared uid such as ``nobody`` would take it from every other
run of that uid — another worker's, or a second suite's beside this one — and their steps
would fail to fork. Such tests take a uid of their own: one of a range no account uses,
claimed with a lock the kernel drops when the process holding it ends (a crashed run leaves
no stale claim).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import tempfile
from collections.abc import Iterator
from pathlib import Path

FIRST, LAST = 61000, 61999
"""The range: above Debian's dynamic and system uids, below ``nobody``, no account there."""

LOCKS = Path("/run/lock") if os.access("/run/lock", os.W_OK) else Path(tempfile.gettempdir())
"""Where the claims live: one directory for every test process on the machine."""
_held: dict[int, int] = {}


def _unused(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return True
    return False


def private_uid() -> int:
    """A uid claimed by this process until it ends (the same one on every call)."""
    if _held:
        return next(iter(_held))
    for uid in range(FIRST, LAST + 1):
        if not _unused(uid):
            continue
        fd = os.open(LOCKS / f"anna-test-uid-{uid}", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC,
                     0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        _held[uid] = fd
        return uid
    raise RuntimeError(f"every uid from {FIRST} to {LAST} is claimed by a running test")


@contextlib.contextmanager
def machine_wide(name: str) -> Iterator[None]:
    """Hold the machine-wide lock ``name`` (waiting for it) while the block runs.

    For tests whose subject is the whole machine's state, such as the process table: a
    stand-in ``hyprpaper`` of one test is in every other test's view, this suite's or a
    second suite's beside it, so such tests take turns.
    """
    fd = os.open(LOCKS / f"anna-test-{name}", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
