"""The daemon's access to telemetry: the collectors' service, or a minimal fallback.

The collectors (:mod:`annad.telemetry`) are imported when the daemon starts, not
at import time. Should they be missing or fail to start, health, plans and
execution still work: the fallback reports hostname, kernel and distribution
from ``/etc/os-release`` and says in ``errors`` that the rest is unavailable.
The daemon judges plans in a context built from this telemetry.
"""

from __future__ import annotations

import contextlib
import logging
import platform
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from anna_common.distro import parse_os_release
from anna_common.telemetry import SystemInfo, Telemetry

if TYPE_CHECKING:
    from anna_common.protocol.models import SessionEnv

log = logging.getLogger(__name__)


class TelemetryProvider(Protocol):
    """The interface of ``annad.telemetry.TelemetryService`` the daemon uses."""

    def start(self) -> None:
        """Start background refresh."""

    def stop(self) -> None:
        """Stop background refresh."""

    def get(self, session: SessionEnv | None = None, *, fresh: bool = False
            ) -> tuple[Telemetry, float]:
        """(telemetry, age in seconds)."""


class MinimalTelemetry:
    """Used when the collectors are unavailable: the facts plans are judged by."""

    def __init__(self, reason: str, os_release: Path = Path("/etc/os-release")) -> None:
        self.reason = reason
        self.os_release = os_release
        self._cached: Telemetry | None = None

    def start(self) -> None:
        """Nothing runs in the background."""

    def stop(self) -> None:
        """Nothing to stop."""

    def _collect(self) -> Telemetry:
        try:
            values = parse_os_release(self.os_release.read_text(encoding="utf-8",
                                                                 errors="replace"))
        except OSError:
            values = {}
        uptime = 0.0
        with contextlib.suppress(OSError, ValueError, IndexError):
            uptime = float(Path("/proc/uptime").read_text().split()[0])
        system = SystemInfo(hostname=socket.gethostname(), kernel=platform.release(),
                            distro_id=values.get("ID"), distro_name=values.get("PRETTY_NAME"),
                            distro_like=values.get("ID_LIKE", "").split(), uptime_seconds=uptime)
        return Telemetry(collected_at=time.time(), system=system,
                         errors=[f"telemetry collectors unavailable: {self.reason}"])

    def get(self, session: SessionEnv | None = None, *, fresh: bool = False
            ) -> tuple[Telemetry, float]:
        """The minimal snapshot and its age."""
        del session
        if fresh or self._cached is None:
            self._cached = self._collect()
        return self._cached, max(0.0, time.time() - self._cached.collected_at)


def open_telemetry(*, pacman_dbpath: Path, refresh_s: float) -> TelemetryProvider:
    """The collectors' service when it can be loaded, else :class:`MinimalTelemetry`."""
    try:
        from annad.telemetry import TelemetryService
    except ImportError as exc:
        log.warning("telemetry collectors unavailable: %s", exc)
        return MinimalTelemetry(str(exc))
    service: TelemetryProvider = TelemetryService(pacman_dbpath=pacman_dbpath,
                                                  refresh_s=refresh_s)
    return service
