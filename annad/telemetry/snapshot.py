"""One collection: every collector run behind a guard, then the caller's desktop added.

A failing collector never fails the snapshot: its part keeps its empty default
and a short line lands in ``Telemetry.errors``. The machine-wide part
(:class:`Snapshot`) can be cached; the desktop part depends on the caller's
session and is computed per request from the cached process and package names.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from anna_common.protocol.models import SessionEnv
from anna_common.telemetry import (
    BootInfo,
    CpuInfo,
    DesktopInfo,
    DiskInfo,
    MemoryInfo,
    NetworkInfo,
    PackagesInfo,
    ProcessesInfo,
    ServicesInfo,
    SystemInfo,
    Telemetry,
    Temperature,
)
from annad.telemetry.boot import collect_boot
from annad.telemetry.desktop import backend_programs_on_path, detect_desktop
from annad.telemetry.network import collect_network, collect_sessions
from annad.telemetry.packages import collect_packages
from annad.telemetry.processes import ProcessScan, collect_processes
from annad.telemetry.services import collect_services
from annad.telemetry.sources import Sources
from annad.telemetry.system import (
    CpuSampler,
    collect_cpu,
    collect_disks,
    collect_memory,
    collect_system,
    collect_temperatures,
)

log = logging.getLogger(__name__)

T = TypeVar("T")
MAX_ERROR = 200
"""Longest error line kept per failed collector."""
DEFAULT_CPU_SAMPLER = CpuSampler()
"""Shared by every :func:`collect_machine` call that brings no sampler of its own, so CPU
utilisation is measured since the previous collection in this process."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The machine-wide part of a collection, plus what desktop detection needs."""

    telemetry: Telemetry
    """Everything but the desktop (left at its default)."""
    process_names: frozenset[str]
    """Every process name seen (untrusted; compared for equality only)."""
    package_names: frozenset[str]
    """Every installed package name."""
    programs: frozenset[str]
    """Wallpaper backend programs found on PATH."""
    taken: float
    """``time.monotonic()`` when the collection finished (for the age)."""


def guarded(errors: list[str], part: str, collector: Callable[[], T], default: T) -> T:
    """Run one collector; on any exception record ``part: Type: message`` and use ``default``."""
    try:
        return collector()
    except Exception as exc:  # a failing collector must never fail the snapshot
        log.warning("telemetry collector %s failed", part, exc_info=True)
        errors.append(f"{part}: {type(exc).__name__}: {exc}"[:MAX_ERROR])
        return default


def collect_machine(*, pacman_dbpath: Path, sources: Sources, previous: Telemetry | None = None,
                    cpu_sampler: CpuSampler | None = None) -> Snapshot:
    """Run every machine-wide collector once."""
    started, wall = time.perf_counter(), time.time()
    errors: list[str] = []
    sampler = cpu_sampler or DEFAULT_CPU_SAMPLER
    scan = guarded(errors, "processes", collect_processes,
                   ProcessScan(info=ProcessesInfo(), names=frozenset()))
    packages = guarded(
        errors, "packages",
        lambda: collect_packages(
            pacman_dbpath, previous=previous.packages if previous else None,
            previous_at=previous.collected_at if previous else None),
        PackagesInfo(dbpath=str(pacman_dbpath), reason="collector failed"))
    programs = guarded(errors, "desktop programs",
                       lambda: backend_programs_on_path(sources.path_dirs), frozenset[str]())
    telemetry = Telemetry(  # built last: it copies ``errors``
        collected_at=wall,
        cpu=guarded(errors, "cpu", lambda: collect_cpu(sources.proc, sampler), CpuInfo()),
        memory=guarded(errors, "memory", collect_memory, MemoryInfo()),
        disks=guarded(errors, "disks", collect_disks, list[DiskInfo]()),
        temperatures=guarded(errors, "temperatures",
                             lambda: collect_temperatures(sources.sys), list[Temperature]()),
        system=guarded(errors, "system",
                       lambda: collect_system(sources.proc, sources.os_release, errors),
                       SystemInfo()),
        processes=scan.info,
        packages=packages,
        services=guarded(errors, "services", lambda: collect_services(sources.systemd_run),
                         ServicesInfo(reason="collector failed")),
        boot=guarded(errors, "boot", lambda: collect_boot(sources.root, sources.sys), BootInfo()),
        network=guarded(errors, "network", lambda: collect_network(sources.proc),
                        NetworkInfo()),
        sessions=guarded(errors, "sessions", collect_sessions, None),
        errors=errors,
    )
    telemetry.collect_ms = round((time.perf_counter() - started) * 1000, 2)
    return Snapshot(telemetry=telemetry, process_names=scan.names,
                    package_names=frozenset(p.name for p in packages.packages),
                    programs=programs, taken=time.monotonic())


def with_desktop(snapshot: Snapshot, session: SessionEnv | None) -> Telemetry:
    """The snapshot's telemetry with the caller's desktop filled in (a shallow copy).

    The cached snapshot is never modified; the copy shares its lists, which callers
    must treat as read-only.
    """
    errors = list(snapshot.telemetry.errors)
    desktop = guarded(errors, "desktop",
                      lambda: detect_desktop(session, snapshot.process_names,
                                             snapshot.package_names, snapshot.programs),
                      DesktopInfo())
    return snapshot.telemetry.model_copy(update={"desktop": desktop, "errors": errors})
