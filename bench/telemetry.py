"""Telemetry speed: cached get() and fresh collection with a 1,500-package pacman database.

Run from the repository root:

    .venv/bin/python bench/telemetry.py [--packages 1500] [--cached-rounds 2000] [--fresh-rounds 40]

Prints p50/p99 of each measure beside its goal (issue 3): cached ``get()`` with a
caller session (desktop computed per call) ≤ 5 ms; a fresh collection that reads
every package ≤ 250 ms. Also shown: ``get(fresh=True)``, which may reuse an
unchanged package database, and the median cost of each collector.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from anna_common.protocol.models import SessionEnv
from annad.telemetry import Sources, TelemetryService, collect
from annad.telemetry.boot import collect_boot
from annad.telemetry.network import collect_network, collect_sessions
from annad.telemetry.packages import collect_packages
from annad.telemetry.processes import collect_processes
from annad.telemetry.services import collect_services
from annad.telemetry.system import (
    CpuSampler,
    collect_cpu,
    collect_disks,
    collect_memory,
    collect_system,
    collect_temperatures,
)
from tests.pacmanfix import write_synthetic_db

SESSION = SessionEnv(XDG_CURRENT_DESKTOP="Hyprland", XDG_SESSION_TYPE="wayland",
                     WAYLAND_DISPLAY="wayland-1", HYPRLAND_INSTANCE_SIGNATURE="bench")
CACHED_GOAL_MS = 5.0
FRESH_GOAL_MS = 250.0


def timings(fn: Callable[[], object], rounds: int) -> list[float]:
    """Milliseconds per call, ``rounds`` calls."""
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def p50_p99(samples: list[float]) -> tuple[float, float]:
    """Median and 99th percentile."""
    return statistics.median(samples), statistics.quantiles(samples, n=100, method="inclusive")[98]


def row(label: str, samples: list[float], goal: float | None) -> str:
    """One line of the table: figures, goal, verdict."""
    p50, p99 = p50_p99(samples)
    goal_text = f"<= {goal:g} ms" if goal is not None else "-"
    verdict = ("ok" if p99 <= goal else "OVER") if goal is not None else ""
    return f"{label:<44}{p50:>9.3f} ms{p99:>10.3f} ms   {goal_text:<12}{verdict}"


def breakdown(dbpath: Path, rounds: int) -> list[tuple[str, float]]:
    """Median milliseconds of each collector on its own."""
    sources, sampler = Sources(), CpuSampler()
    parts: list[tuple[str, Callable[[], object]]] = [
        ("processes", collect_processes),
        ("packages (full read)", lambda: collect_packages(dbpath)),
        ("cpu", lambda: collect_cpu(sources.proc, sampler)),
        ("memory", collect_memory),
        ("disks", collect_disks),
        ("temperatures", lambda: collect_temperatures(sources.sys)),
        ("system", lambda: collect_system(sources.proc, sources.os_release, [])),
        ("services", lambda: collect_services(sources.systemd_run)),
        ("boot", lambda: collect_boot(sources.root, sources.sys)),
        ("network", lambda: collect_network(sources.proc)),
        ("sessions", collect_sessions),
    ]
    return [(name, statistics.median(timings(fn, rounds))) for name, fn in parts]


def main() -> None:
    """Build the synthetic database, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", type=int, default=1500)
    parser.add_argument("--cached-rounds", type=int, default=2000)
    parser.add_argument("--fresh-rounds", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="anna-bench-") as tmp:
        dbpath = Path(tmp) / "pacman"
        write_synthetic_db(dbpath, args.packages)
        old = time.time() - 3600  # an installed system's database was not written just now
        for path in [dbpath / "local", *(dbpath / "local").rglob("*")]:
            os.utime(path, (old, old))

        collect(pacman_dbpath=dbpath)  # warm imports and psutil's process table
        service = TelemetryService(pacman_dbpath=dbpath)
        first, _ = service.get(SESSION)
        fresh_full: list[float] = []
        fresh_service: list[float] = []
        for _ in range(args.fresh_rounds):  # interleaved: both see the same machine load
            fresh_full += timings(lambda: collect(SESSION, pacman_dbpath=dbpath), 1)
            fresh_service += timings(lambda: service.get(SESSION, fresh=True), 1)
        cached = timings(lambda: service.get(SESSION), args.cached_rounds)
        parts = breakdown(dbpath, max(5, args.fresh_rounds // 4))

    print(f"telemetry benchmark: {first.packages.count} synthetic packages, "
          f"{first.processes.count} processes, {first.cpu.cores_logical} CPUs "
          f"(load {first.cpu.load_1:.2f}), Python {sys.version.split()[0]}")
    print(f"{'measure':<44}{'p50':>12}{'p99':>13}   {'goal':<12}")
    print(row(f"cached get(session) x{args.cached_rounds}", cached, CACHED_GOAL_MS))
    print(row(f"fresh collect(), every desc read x{args.fresh_rounds}", fresh_full,
              FRESH_GOAL_MS))
    print(row(f"get(fresh=True), unchanged db reused x{args.fresh_rounds}", fresh_service,
              FRESH_GOAL_MS))
    print("collector medians: " + ", ".join(f"{name} {ms:.2f} ms" for name, ms in parts))


if __name__ == "__main__":
    main()
