"""Directory trees thrown away off a step's path: renamed into the trash, removed beside it.

A captured step leaves a small tree behind whatever it did (its upper and work directories,
the directories copied up on the way to what it changed). Removing a directory costs a few
milliseconds on some file systems (measured on ext4 mounted with ``discard``: ~3 ms per
``rmdir``, against ~0.01 ms for a rename), which would be most of a small step's overhead.
So :meth:`Trash.throw` renames the tree into the trash (one rename, on the same file
system) and one background thread removes what the trash holds. Nothing in the trash is ever
read again; what a daemon that died left there goes when the next daemon starts
(:meth:`Trash.resume`).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import shutil
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

log = logging.getLogger(__name__)

TAKEN = "taken-"
"""Prefix of a tree an undo removed from its place (:meth:`Trash.take`)."""


class Trash:
    """A directory on the state disk whose contents a background thread removes."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._names = itertools.count()
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    def throw(self, path: Path) -> None:
        """Take ``path`` (a tree that must go) off the caller's hands: renamed into the trash,
        or removed here when it cannot be (another file system). A missing path is fine."""
        target = self.directory / f"{os.getpid()}-{next(self._names)}-{path.name}"
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            path.rename(target)
        except FileNotFoundError:
            if path.exists():
                remove_tree(path)
            return
        except OSError:
            remove_tree(path)
            return
        self._start()

    def take(self, parent: int, name: str) -> bool:
        """Take the directory ``name`` below the directory descriptor ``parent`` (an undo
        removing a tree the step made): renamed into the trash at once, removed in the
        background. False when it cannot be (another file system: the caller removes it)."""
        target = self.directory / f"{TAKEN}{os.getpid()}-{next(self._names)}-{name[:100]}"
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.rename(name, target, src_dir_fd=parent)
        except OSError:
            return False
        self._start()
        return True

    def resume(self) -> None:
        """Empty, in the background, what a daemon that died left in the trash. Waiting for
        the next throw kept it there for as long as no step was captured (a kill -9 during
        an undo's removal left a made tree there after the recovery finished the undo)."""
        try:
            left = any(self.directory.iterdir())
        except OSError:
            return
        if left:
            self._start()

    def _start(self) -> None:
        with self._lock:
            if self._worker is None:
                self._worker = threading.Thread(target=self._run, name="trash", daemon=True)
                self._worker.start()
        self._wake.set()

    def empty(self) -> None:
        """Remove everything in the trash now (the background thread's one task)."""
        try:
            entries = list(self.directory.iterdir())
        except OSError:
            return
        for entry in entries:
            # a tree taken from someone's place may still be reached by one of their
            # processes (its working directory): root never opens it up (a chmod of a path a
            # link was swapped in for would follow the link)
            remove_tree(entry, open_up=not (entry.name.startswith(TAKEN) and
                                            os.geteuid() == 0))

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            try:
                self.empty()
            except Exception:  # never let the thread die: the trash would only grow
                log.exception("emptying the trash failed")


def remove_tree(path: Path, *, open_up: bool = True) -> None:
    """Remove ``path`` and all below it, as far as can be. A directory this uid may not
    list or empty (overlayfs leaves its work directory ``work/work`` with mode 000; a step
    may leave a read-only directory in an upper layer) is opened up first (unless not
    ``open_up``): root never needs it, a per-user daemon does."""
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        return
    except NotADirectoryError:
        path.unlink(missing_ok=True)
        return
    except OSError:
        if open_up:
            _open_up(str(path))
        shutil.rmtree(path, ignore_errors=True)


def _open_up(directory: str) -> None:
    """Give this uid rwx on ``directory`` and every directory below it (links not followed)."""
    with contextlib.suppress(OSError):
        os.chmod(directory, 0o700)  # noqa: PTH101 - a str walk
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False):
                _open_up(entry.path)
