"""Flushing whole file systems: one ``syncfs`` barrier for everything written there.

Writing many files and flushing each (an ``fsync`` per file and per directory) costs a disk
barrier apiece: thousands of them for a tree, seconds on a busy disk. Where what matters is
an order — these files on disk before that rename — one ``syncfs`` of each file system
involved gives it at the cost of one barrier (the capture's commit,
:mod:`annad.capture.commit`; the restore of a tree, :mod:`annad.backups.restore`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from pathlib import Path

_libc = ctypes.CDLL(None, use_errno=True)


def syncfs(fd: int, what: str) -> None:
    """Flush the file system holding the open descriptor ``fd`` (OSError naming ``what``)."""
    if _libc.syncfs(fd) < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), what)


def flush_filesystems(paths: list[str], *, besides: str | None = None) -> None:
    """Flush each file system holding one of ``paths``, once (``syncfs``: one barrier for
    everything written there, not one fsync per file); OSError when one cannot be. A path
    that does not exist had nothing written to it. ``besides``: its file system is left
    alone."""
    seen: set[int] = set()
    if besides is not None:
        with contextlib.suppress(OSError):
            seen.add(Path(besides).stat().st_dev)
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        try:
            device = os.fstat(fd).st_dev
            if device not in seen:
                seen.add(device)
                syncfs(fd, path)
        finally:
            os.close(fd)
