"""What the daemon adds to a preview's spec, and how many previews a member may run at once.

A preview runs steps nobody approved yet (:mod:`annad.preview.overlay_helper`): they get the
walls of a check — the seccomp program compiled here (no socket but netlink, for root too),
the Landlock ABI demanded, and the limits on memory, processes and CPU time — with writes
allowed only beneath their own overlays. A member may run :data:`PER_OWNER` previews at a
time: a further one is refused at once, so hanging previews of one member never hold a
worker another member's request needs.
"""

from __future__ import annotations

import contextlib
import json
import threading
from typing import TYPE_CHECKING

from annad.confine.filters import compiled
from annad.confine.spec import RunLimits

if TYPE_CHECKING:
    from collections.abc import Iterator

    from annad.confine.cgroups import Leaf

PER_OWNER = 1
"""Previews one member may have running at the same time. One: submissions are analysed —
previews included — by two threads (``annad.api.plans.ANALYSIS_THREADS``), so a member
whose previews hang holds at most one of them and another member's submit gets the other.
A refused preview is "no preview: …", never a refused plan."""


MEMORY = 512 * 1024 ** 2
"""A preview's memory cap, all its processes together (the setting ``preview_memory``)."""


def preview_limits(memory: int) -> RunLimits:
    """A preview's limits: ``memory`` for the whole run (its cgroup's cap, or the helper's
    watch, :mod:`annad.confine.memwatch`), twice that per process (``RLIMIT_DATA``: a
    single allocation past it fails at once)."""
    return RunLimits(memory=2 * memory, run_memory=memory)


def walled_spec(spec: str, *, timeout: float, required_abi: int, memory: int = MEMORY) -> str:
    """``spec`` (JSON) with the walls added; raises FilterUnavailable or ValueError."""
    data = json.loads(spec)
    if not isinstance(data, dict):
        raise ValueError("a preview spec is a JSON object")
    limits = preview_limits(memory)
    data["program"] = compiled(unix=False).hex()
    data["abi"] = required_abi
    data["walls"] = {"memory": limits.memory, "processes": limits.processes,
                     "cpu": max(int(timeout) + 1, 1)}
    return json.dumps(data)


def watched(spec: str, memory: int) -> str:
    """``spec`` (JSON, walled) with the helper's watch of ``memory`` asked for: the run has
    no cgroup to cap it."""
    data = json.loads(spec)
    data["walls"]["watch"] = memory
    return json.dumps(data)


def oom_killed(leaf: Leaf) -> bool:
    """Whether the kernel killed a process of ``leaf`` for its memory cap (``oom_kill`` in
    cgroup v2's ``memory.events``, v1's ``memory.oom_control``)."""
    for directory in leaf.dirs:
        for name in ("memory.events", "memory.oom_control"):
            with contextlib.suppress(OSError, ValueError):
                for line in (directory / name).read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and int(value) > 0:
                        return True
    return False


def runs_as_root(spec: str) -> bool:
    """Whether a preview spec (JSON) runs any step as uid 0; a uid that cannot be read
    counts as 0 (a wrong answer must never drop the bound a root step needs)."""
    for step in json.loads(spec).get("steps", []):
        try:
            if int(str(step["uid"])) == 0:
                return True
        except (KeyError, TypeError, ValueError):
            return True
    return False


class Slots:
    """Running previews per member."""

    def __init__(self, per_owner: int) -> None:
        self.per_owner = per_owner
        self._lock = threading.Lock()
        self._running: dict[int, int] = {}

    def running(self, owner: int) -> int:
        """How many previews ``owner`` runs now."""
        with self._lock:
            return self._running.get(owner, 0)

    @contextlib.contextmanager
    def slot(self, owner: int | None) -> Iterator[bool]:
        """Yields whether ``owner`` may start one more (None: not counted)."""
        if owner is None:
            yield True
            return
        with self._lock:
            admitted = self._running.get(owner, 0) < self.per_owner
            if admitted:
                self._running[owner] = self._running.get(owner, 0) + 1
        try:
            yield admitted
        finally:
            if admitted:
                with self._lock:
                    self._running[owner] -= 1


PREVIEWS = Slots(PER_OWNER)
"""The daemon's running previews."""
