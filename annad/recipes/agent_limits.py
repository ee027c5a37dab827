"""Per-agent rate limits: how many calls (or proposals) one agent made in the last window.

Kept in the daemon's memory, keyed by (uid, agent name, what) — and by (uid, any agent,
what), so a client that changes its name with every call still meets a limit. Each key
holds two counters (this window and the one before), so memory per key is constant
whatever the limit: the count over the last ``window_s`` is estimated the usual way, the
previous window's count weighted by how much of it still overlaps. At most
:data:`MAX_KEYS` keys are kept (the least recently used go first). A restart forgets the
counts: a limit is a bound on a flood, not an accounting.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from anna_common.errors import AnnaError, ErrorCode

MAX_KEYS = 512
"""Keys kept at most (the least recently used are dropped first)."""


@dataclass
class _Window:
    start: float
    current: int = 0
    previous: int = 0


class Limits:
    """Sliding-window counters; :meth:`take` counts one or refuses with ``RATE_LIMITED``."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._windows: OrderedDict[tuple[object, ...], _Window] = OrderedDict()

    def take(self, key: tuple[object, ...], limit: int, window_s: float, what: str) -> None:
        """Count one event under ``key``, or raise when ``limit`` were counted already in
        the last ``window_s`` seconds (nothing is counted then)."""
        with self._lock:
            now = self._clock()
            window = self._windows.pop(key, None) or _Window(start=now)
            self._windows[key] = window
            while len(self._windows) > MAX_KEYS:
                self._windows.popitem(last=False)
            elapsed = now - window.start
            if elapsed >= 2 * window_s:
                window.start, window.current, window.previous = now, 0, 0
            elif elapsed >= window_s:
                window.start += window_s
                window.previous, window.current = window.current, 0
            overlap = 1.0 - (now - window.start) / window_s
            estimate = window.previous * overlap + window.current
            if estimate + 1 > limit:
                retry = window_s - (now - window.start) if window.current >= limit else \
                    window_s * (1 - (limit - 1 - window.current) / max(window.previous, 1)) \
                    - (now - window.start)
                raise AnnaError(
                    f"too many {what}: at most {limit} in {window_s:g} s for this agent",
                    code=ErrorCode.RATE_LIMITED,
                    detail={"limit": what, "max": limit, "window_s": window_s,
                            "retry_after_s": max(1, math.ceil(max(retry, 0)))},
                    hint="wait and call again; an administrator sets the limits in the "
                         "policy's [agents] table")
            window.current += 1
