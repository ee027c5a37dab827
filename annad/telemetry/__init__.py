"""What annad reports about the machine, one collector per module.

``collect()`` takes one snapshot; :class:`TelemetryService` serves a cached one
refreshed in the background, with the desktop part computed per caller.
Collectors: ``system`` (cpu, memory, disks, temperatures, host, distro),
``processes``, ``packages`` (pacman local database), ``services`` (failed
systemd units, through the runner), ``desktop``, ``boot``. Every string they
gather is untrusted data.
"""

from __future__ import annotations

from pathlib import Path

from anna_common.protocol.models import SessionEnv
from anna_common.telemetry import Telemetry
from annad.telemetry.service import TelemetryService
from annad.telemetry.snapshot import collect_machine, with_desktop
from annad.telemetry.sources import Sources

__all__ = ["Sources", "TelemetryService", "collect"]

DEFAULT_DBPATH = Path("/var/lib/pacman")
"""pacman's database path on Arch."""


def collect(session: SessionEnv | None = None, *, pacman_dbpath: Path = DEFAULT_DBPATH,
            previous: Telemetry | None = None, sources: Sources | None = None) -> Telemetry:
    """One full snapshot, desktop included.

    ``previous`` is the last snapshot, if any: an unchanged pacman database is then not
    re-read (checked by modification times). CPU figures are measured since the previous
    ``collect`` in this process (None/absent on the very first).
    """
    chosen = sources or Sources()
    snapshot = collect_machine(pacman_dbpath=pacman_dbpath, sources=chosen, previous=previous)
    return with_desktop(snapshot, session)
