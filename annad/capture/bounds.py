"""How much a captured step may change before Anna refuses to check it.

A captured step's change set is everything in its upper layers; reading it back, judging it,
backing up its originals and committing it all cost time and memory in the daemon in
proportion to it, and the layers themselves take room on the state disk while the step runs.
A hostile step (a million files, a 20 GiB sparse file, a directory chain deeper than any path
the kernel resolves) must end in a coded refusal, quickly, with nothing landed. Two bounds:

- :class:`Watch`, while the step runs: the state disk's used blocks and inodes are read
  (``statvfs``, a few microseconds) every :data:`WATCH_PERIOD_S`; a step whose layers grew
  past the file limit by a quarter (at least 1,000), past twice the byte limit, or past half
  the disk's free room at its start, is stopped (its
  process tree killed by the capture helper) — so it cannot fill the disk the journal and
  the backups are on. A tmpfs upper would bound it by construction, but the upper layers
  must outlive a killed daemon (start-up recovery finishes a commit from them) and a tmpfs
  costs memory; a project quota needs a file system mounted with one.
- :class:`Tally`, while the layers are read back (:func:`annad.capture.layers.read_back`):
  every entry, every regular file's apparent size (a sparse file counts whole: the judge,
  the backups and the commit would read it whole) and every level of depth is counted before
  anything is compared; past a limit the read-back stops at once (:class:`TooMuch`), having
  held at most the limit's worth of entries.

Both end the same way: :class:`TooMuch`'s message, ``OBSERVED_CHANGE_TOO_LARGE``, the layers
thrown away, nothing landed.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from annad.stepspec import Bounds, size_words

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from pathlib import Path
    from types import TracebackType

WATCH_PERIOD_S = 0.05
"""How often the state disk is read while a captured step runs."""
PATH_MAX = 4096
"""Longest path (bytes, with its terminating NUL) the kernel resolves in one call."""



class TooMuch(Exception):
    """The step changes too much to check; the message says what and which limit."""


@dataclass(slots=True)
class Tally:
    """Counts of a read-back under way; :meth:`entry` raises :class:`TooMuch` past a limit."""

    bounds: Bounds
    files: int = 0
    size: int = 0

    def entry(self, path: str, depth: int) -> None:
        """Count one entry (its upper path, ``depth`` levels below the layer's top)."""
        self.files += 1
        if self.files > self.bounds.max_files:
            raise TooMuch(f"the step changes too much to check: more than "
                          f"{self.bounds.max_files} files (limit {self.bounds.words()})")
        if depth > self.bounds.max_depth or len(os.fsencode(path)) >= PATH_MAX:
            raise TooMuch(f"the step changes too much to check: a path {depth} levels deep "
                          f"({len(os.fsencode(path))} bytes; limit {self.bounds.words()}, "
                          f"paths under {PATH_MAX} bytes)")

    def sized(self, size: int) -> None:
        """Count a regular file's apparent size (a sparse file counts whole)."""
        self.size += size
        if self.size > self.bounds.max_bytes:
            raise TooMuch(f"the step changes too much to check: {self.files} files, "
                          f"{size_words(self.size)} or more (limit {self.bounds.words()})")


def _used(directory: Path) -> tuple[int, int, int, int]:
    """(bytes used, inodes used, bytes free, inodes free) of the file system of ``directory``
    (0 inodes where it does not count them, as btrfs)."""
    st = os.statvfs(directory)
    return ((st.f_blocks - st.f_bfree) * st.f_frsize, st.f_files - st.f_ffree,
            st.f_bavail * st.f_frsize, st.f_favail)


class Watch:
    """While a captured step runs: a thread that sets :attr:`stop` (the event the run
    follows) when the plan is cancelled or the state disk grew past the step's bounds.

    Use as a context manager around the run; :attr:`why` says why it stopped a step (None:
    it did not, or the plan's cancel did)."""

    def __init__(self, directory: Path, bounds: Bounds,
                 cancel: threading.Event | None) -> None:
        self.stop = threading.Event()
        self.why: str | None = None
        self._cancel = cancel
        self._directory = directory
        used, inodes, free, free_inodes = _used(directory)
        self._base = (used, inodes)
        # above the limits: the read-back refuses precisely; this only keeps the disk whole
        # (bytes with more room: another program writing to the same disk meanwhile counts)
        self._max_bytes = min(2 * bounds.max_bytes + (64 << 20), free // 2)
        self._max_inodes = bounds.max_files + max(1000, bounds.max_files // 4)
        if free_inodes > 0:
            self._max_inodes = min(self._max_inodes, free_inodes // 2)
        self._bounds = bounds
        if cancel is not None and cancel.is_set():
            self.stop.set()

    def __enter__(self) -> Watch:
        _WATCHER.add(self)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        _WATCHER.remove(self)  # returns once no look at the disk for this step is under way

    def check(self) -> bool:
        """Read the disk once; True (and :attr:`why` set) when the step must stop."""
        try:
            used, inodes, _, _ = _used(self._directory)
        except OSError:
            return False
        grew, made = used - self._base[0], inodes - self._base[1]
        if grew > self._max_bytes or (self._base[1] > 0 and made > self._max_inodes):
            # the disk says so; the step's own layers must say so too (another program
            # filling the same disk meanwhile is not the step's change): what they hold is
            # counted, no further than the limits
            own_bytes, own_files = self._own()
            if own_bytes <= self._max_bytes and own_files <= self._max_inodes:
                self._base = (used - own_bytes, inodes - own_files)
                return False
            grew, made = own_bytes, own_files
            self.why = (f"the step changes too much to check: the state disk took {made} "
                        f"more files, {size_words(max(grew, 0))} more while it ran, and it was "
                        f"stopped (limit {self._bounds.words()}; at most half the state "
                        "disk's free room)")
            return True
        return False

    def _own(self) -> tuple[int, int]:
        """(bytes on disk, entries) under the step's run directory, counted without
        recursion and no further than just past the limits."""
        size = files = 0
        stack = [str(self._directory)]
        while stack and size <= self._max_bytes and files <= self._max_inodes:
            try:
                with os.scandir(stack.pop()) as entries:
                    for entry in entries:
                        files += 1
                        info = entry.stat(follow_symlinks=False)
                        size += info.st_blocks * 512
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
            except OSError:
                continue  # gone meanwhile, or unreadable: what was counted stands
        return size, files

    def poll(self) -> bool:
        """One look (the watcher's, every :data:`WATCH_PERIOD_S`): True once the step must
        stop (:attr:`stop` is set; it is not looked at again)."""
        if (self._cancel is not None and self._cancel.is_set()) or self.check():
            self.stop.set()
            return True
        return False


class _Watcher:
    """The one thread that looks at the state disk for every captured step running. A
    thread started per step would wait for the scheduler before the step may start —
    milliseconds on a loaded machine, on every step's path; this one is started once and
    sleeps while no step runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._more = threading.Condition(self._lock)
        self._active: list[Watch] = []
        self._thread: threading.Thread | None = None

    def add(self, watch: Watch) -> None:
        """Look at ``watch`` from now on, until :meth:`remove` or it says stop."""
        with self._lock:
            self._active.append(watch)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="anna-capture-watch",
                                                daemon=True)
                self._thread.start()
            self._more.notify()

    def remove(self, watch: Watch) -> None:
        """Look at ``watch`` no more (a look under way finishes first: the lock)."""
        with self._lock:
            if watch in self._active:
                self._active.remove(watch)

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._active:
                    self._more.wait()
            time.sleep(WATCH_PERIOD_S)
            with self._lock:
                for watch in list(self._active):
                    try:
                        stop = watch.poll()
                    except Exception:  # never let the thread die: no step would be watched
                        log.exception("watching a captured step's size failed")
                        stop = False
                    if stop:
                        self._active.remove(watch)


_WATCHER = _Watcher()
