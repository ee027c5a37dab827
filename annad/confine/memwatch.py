"""A memory cap on a whole run where no cgroup can be made: its processes' resident memory,
summed (standard library only: the preview helper runs as ``python -I -S``).

A cgroup caps a run's memory as a whole (:mod:`annad.confine.cgroups`); a per-user daemon
usually cannot make one (its session's cgroup is not delegated to it), and resource limits
bound each process alone — 256 processes of 1 GiB each is no cap: a per-user daemon's preview
of a plan only submitted used 3.0 GB. So the helper that runs the steps, their subreaper,
sums the resident memory of every process below it (``/proc/PID/task/TID/children``,
``statm``) while it waits for them, at most every :data:`INTERVAL_S`, and past the cap kills
them all (:class:`Exceeded`: the run reports ``PREVIEW_MEMORY_EXCEEDED``). Each process's
own ``RLIMIT_DATA`` (twice the cap) still refuses a single allocation beyond it at once; the
watch bounds what many processes, or one growing between two looks, hold together: the
cap plus what can be touched in one interval.
"""

# ruff: noqa: PTH123, PTH208 - no pathlib: start-up time
from __future__ import annotations

import os
import time

INTERVAL_S = 0.05
"""How often the tree is summed while a step runs."""
PAGE = os.sysconf("SC_PAGE_SIZE")


class Exceeded(Exception):
    """The run's processes held more than the cap together: they have been killed."""

    def __init__(self, used: int, cap: int) -> None:
        super().__init__(f"the run's processes held {used >> 20} MiB of memory together, "
                         f"past the cap of {cap >> 20} MiB")
        self.used, self.cap = used, cap


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""  # the process ended meanwhile


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (its children, theirs…), ``root`` itself not."""
    found: list[int] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in threads:
            for child in _read(f"/proc/{pid}/task/{tid}/children").split():
                found.append(int(child))
                todo.append(int(child))
    return found


def resident(pids: list[int]) -> int:
    """The resident memory of ``pids``, bytes (a page shared by two is counted twice: the
    cap errs on the safe side)."""
    total = 0
    for pid in pids:
        fields = _read(f"/proc/{pid}/statm").split()
        if len(fields) > 1:
            total += int(fields[1]) * PAGE
    return total


class Watch:
    """The cap on the processes below ``root`` (the helper itself, Anna's, not counted)."""

    def __init__(self, cap: int, root: int | None = None) -> None:
        self.cap = cap
        self.root = os.getpid() if root is None else root
        self._next = 0.0

    def check(self) -> None:
        """Raise :class:`Exceeded` when the processes hold more than the cap (looked at no
        more often than every :data:`INTERVAL_S`); the caller kills them."""
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + INTERVAL_S
        used = resident(descendants(self.root))
        if used > self.cap:
            raise Exceeded(used, self.cap)
