"""TelemetryService: a cached snapshot refreshed in the background, desktop per caller.

Requests must stay fast while a plan runs, so ``get()`` serves the last
machine-wide snapshot (refreshed by a thread every ``refresh_s``) and only
computes the caller's desktop, which is cheap. ``fresh=True`` collects now.
Collections are serialised: the CPU and process samplers measure "since the
previous collection", and two interleaved collections would shorten each
other's window.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from anna_common.protocol.models import SessionEnv
from anna_common.telemetry import Telemetry
from annad.telemetry.snapshot import Snapshot, collect_machine, with_desktop
from annad.telemetry.sources import Sources
from annad.telemetry.system import CpuSampler

log = logging.getLogger(__name__)


class TelemetryService:
    """Serves telemetry from a cache refreshed in the background."""

    def __init__(self, *, pacman_dbpath: Path, refresh_s: float = 15.0,
                 sources: Sources | None = None) -> None:
        """Nothing is collected until :meth:`start` or the first :meth:`get`."""
        self.pacman_dbpath = pacman_dbpath
        """The pacman database read for packages."""
        self.refresh_s = refresh_s
        """Seconds between background collections."""
        self.sources = sources or Sources()
        """Where the collectors read the machine from."""
        self._cpu = CpuSampler()
        self._snapshot: Snapshot | None = None
        self._collect_lock = threading.Lock()  # one collection at a time
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the background refresh (collects at once, then every ``refresh_s``)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="telemetry-refresh",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the background refresh and wait for a collection in progress to end."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def get(self, session: SessionEnv | None = None, *, fresh: bool = False
            ) -> tuple[Telemetry, float]:
        """(telemetry, age in seconds). Cached unless ``fresh`` or nothing was collected yet."""
        snapshot = self._snapshot
        if fresh or snapshot is None:
            snapshot = self._collect(only_if_missing=not fresh)
        age = max(0.0, time.monotonic() - snapshot.taken)
        return with_desktop(snapshot, session), age

    def _collect(self, *, only_if_missing: bool = False) -> Snapshot:
        with self._collect_lock:
            current = self._snapshot
            if only_if_missing and current is not None:
                return current  # another caller collected while this one waited
            previous = current.telemetry if current is not None else None
            snapshot = collect_machine(pacman_dbpath=self.pacman_dbpath, sources=self.sources,
                                       previous=previous, cpu_sampler=self._cpu)
            self._snapshot = snapshot  # a single reference swap: readers need no lock
            return snapshot

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._collect()
            except Exception:  # the refresh thread must survive anything a collector does
                log.exception("telemetry refresh failed")
            self._stop.wait(self.refresh_s)
