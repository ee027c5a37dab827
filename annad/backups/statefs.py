"""Room on the state disk: free-space checks and the journal's reserve file.

A backup that cannot be written completely is worse than none (the step would run
with half an undo record), and a journal that cannot record a plan's end leaves it
``running`` forever. So the daemon keeps two promises about its state directory:

* a backup is written only when the disk holds its size plus :func:`margin` plus
  :data:`JOURNAL_FLOOR` (room for the journal to record what happens next); otherwise
  the step, or the whole plan before anything runs, is refused (``BACKUP_REFUSED``);
* :data:`RESERVE_NAME`, a preallocated file of :data:`RESERVE_BYTES`, holds room the
  journal alone may use: when SQLite finds the disk full while recording an outcome
  (a plan's final state, an undo result, start-up recovery), the reserve is deleted and
  the write retried. It is preallocated again once the disk has room.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

log = logging.getLogger(__name__)

RESERVE_NAME = "journal.reserve"
"""The reserve file, in the state directory."""
RESERVE_BYTES = 256 * 1024
"""Room kept for the journal (a few hundred event rows: many plan outcomes)."""
JOURNAL_FLOOR = 256 * 1024
"""Free space a backup must leave behind, beyond the reserve."""
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
"""An ``OSError`` with one of these means the disk (or the quota) is full."""


def free_bytes(directory: Path) -> int:
    """Bytes an unprivileged writer could still use below ``directory`` (0 when unknown).

    ``f_bavail``, not ``f_bfree``: the daemon should not eat the blocks reserved for root
    on an ext4 state disk, since that is what lets the rest of the system recover.
    """
    place = directory
    while not place.exists() and place != place.parent:
        place = place.parent  # a directory created on demand is on its parent's disk
    try:
        info = os.statvfs(place)
    except OSError:
        return 0
    return info.f_bavail * info.f_frsize


def margin(size: int, files: int = 1) -> int:
    """Room a backup of ``size`` bytes in ``files`` files needs beyond its bytes: block
    rounding (4 KiB per file) and 1/32 of the size for file system overhead."""
    return size // 32 + 4096 * max(files, 1)


def needed_for_backup(size: int, files: int = 1) -> int:
    """Free bytes a backup of ``size`` bytes needs before it may start."""
    return size + margin(size, files) + JOURNAL_FLOOR


def room_problem(directory: Path, size: int, files: int = 1) -> str | None:
    """Why a backup of ``size`` bytes cannot be written to ``directory``, or None."""
    free = free_bytes(directory)
    needed = needed_for_backup(size, files)
    if free >= needed:
        return None
    return (f"the state disk holding {directory} has {_mib(free)} free; backing up "
            f"{_mib(size)} needs {_mib(needed)} (the backup, a margin and room for the "
            "journal)")


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):.2f} MiB"


def is_full(exc: BaseException) -> bool:
    """``exc`` says the disk is full (an OSError, or SQLite's SQLITE_FULL)."""
    if isinstance(exc, OSError):
        return exc.errno in FULL_ERRNOS
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF == 13:  # SQLITE_FULL
        return True
    return "disk is full" in str(exc) or "No space left" in str(exc)


class Reserve:
    """The preallocated reserve file of one state directory."""

    def __init__(self, state_dir: Path, size: int = RESERVE_BYTES) -> None:
        self.path = state_dir / RESERVE_NAME
        self.size = size

    def present(self) -> bool:
        """The reserve is in place, at full size."""
        try:
            return self.path.stat().st_size >= self.size
        except OSError:
            return False

    def ensure(self) -> bool:
        """Preallocate the reserve if it is missing and the disk has room for it and the
        floor; True when it is in place afterwards."""
        if self.present():
            return True
        if free_bytes(self.path.parent) < self.size + JOURNAL_FLOOR:
            return False
        tmp = self.path.with_name(self.path.name + ".new")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            try:
                os.posix_fallocate(fd, 0, self.size)
            finally:
                os.close(fd)
            tmp.replace(self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            log.warning("cannot preallocate the journal reserve %s: %s", self.path, exc)
            return False
        return True

    def release(self) -> bool:
        """Delete the reserve to give its room to the journal; True if there was one."""
        had = self.path.exists()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        with contextlib.suppress(FileNotFoundError):
            self.path.with_name(self.path.name + ".new").unlink()
        if had:
            log.warning("the state disk is full: released the journal reserve %s (%d KiB) "
                        "so the journal can record what happened", self.path, self.size // 1024)
        return had

    def problem(self) -> str | None:
        """What the state disk lacks, for health and the log, or None when all is well."""
        if self.present():
            return None
        free = free_bytes(self.path.parent)
        needed = self.size + JOURNAL_FLOOR
        if free >= needed:
            return None
        return (f"the state disk holding {self.path.parent} is full ({_mib(free)} free); "
                f"annad needs at least {_mib(needed)} free there to keep its journal reserve "
                "and take backups; free space there (plans are refused meanwhile)")


def state_problem(state: Path) -> str | None:
    """What the state disk holding ``state`` lacks for a submit to succeed, or None.

    Observed, not inferred from the reserve alone: with the reserve in place and the rest of
    the disk full, SQLite cannot grow the journal and every submit is refused."""
    try:
        info = os.statvfs(state)
    except OSError as exc:
        return f"the state directory {state} cannot be examined ({exc.strerror})"
    if info.f_flag & os.ST_RDONLY:
        return (f"the state disk holding {state} is read-only: plans are refused "
                "(BACKUP_REFUSED) until it is writable")
    free = free_bytes(state)
    if free < JOURNAL_FLOOR:
        return (f"the state disk holding {state} is full ({free // 1024} KiB free beyond "
                f"the journal reserve); annad needs {JOURNAL_FLOOR // 1024} KiB there: "
                "plans are refused (BACKUP_REFUSED) until there is room; free space there")
    return None
