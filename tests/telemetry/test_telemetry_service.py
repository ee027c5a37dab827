"""TelemetryService: cached gets, fresh recollection, background refresh, failures in errors."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from anna_common.protocol.models import SessionEnv
from annad.telemetry import Sources, TelemetryService
from annad.telemetry.processes import ProcessScan, collect_processes
from tests.pacmanfix import write_synthetic_db
from tests.waiting import wait_until


@pytest.fixture
def service(tmp_path: Path) -> Iterator[TelemetryService]:
    write_synthetic_db(tmp_path / "db", 50)
    svc = TelemetryService(pacman_dbpath=tmp_path / "db", refresh_s=3600)
    yield svc
    svc.stop()


def test_second_get_is_cached_fresh_recollects(service: TelemetryService) -> None:
    first, age = service.get()
    assert first.packages.count == 50 and age < 5
    time.sleep(0.05)
    cached, cached_age = service.get()
    assert cached.collected_at == first.collected_at
    assert cached_age >= 0.05
    fresh, fresh_age = service.get(fresh=True)
    assert fresh.collected_at > first.collected_at
    assert fresh_age < cached_age
    again, _ = service.get()
    assert again.collected_at == fresh.collected_at


def test_cache_does_not_see_changes_until_fresh(service: TelemetryService, tmp_path: Path) -> None:
    before, _ = service.get()
    write_synthetic_db(tmp_path / "more", 1)
    (tmp_path / "more" / "local" / "synthetic-pkg00000-0.0.0-1").rename(
        tmp_path / "db" / "local" / "zz-new-1-1")
    assert service.get()[0].packages.count == before.packages.count
    assert service.get(fresh=True)[0].packages.count == before.packages.count + 1


def test_desktop_is_per_caller_on_one_cached_snapshot(service: TelemetryService) -> None:
    hypr, _ = service.get(SessionEnv(WAYLAND_DISPLAY="wayland-1",
                                     HYPRLAND_INSTANCE_SIGNATURE="sig"))
    gnome, _ = service.get(SessionEnv(XDG_CURRENT_DESKTOP="GNOME", DISPLAY=":0"))
    assert hypr.collected_at == gnome.collected_at  # same machine-wide snapshot
    assert (hypr.desktop.wm, hypr.desktop.display_protocol) == ("hyprland", "wayland")
    assert (gnome.desktop.de, gnome.desktop.display_protocol) == ("gnome", "x11")
    # the cached snapshot itself was not changed by either caller
    plain, _ = service.get(SessionEnv())
    assert plain.desktop.de is None and plain.desktop.wm is None


def test_collector_failure_lands_in_errors(tmp_path: Path) -> None:
    empty_proc = tmp_path / "proc"
    empty_proc.mkdir()
    svc = TelemetryService(pacman_dbpath=tmp_path / "nodb",
                           sources=Sources(proc=empty_proc))
    tel, _ = svc.get()
    assert any(e.startswith("cpu: FileNotFoundError") for e in tel.errors)
    assert tel.cpu.cores_logical == 0  # the failed part keeps its empty default
    assert tel.memory.total_bytes > 0 and tel.disks and tel.processes.count > 0
    assert not tel.packages.available and tel.packages.reason is not None


def test_background_refresh(tmp_path: Path) -> None:
    svc = TelemetryService(pacman_dbpath=tmp_path / "nodb", refresh_s=0.3)  # longer than the CPU sampler's minimum window
    svc.start()
    svc.start()  # a second start is harmless
    try:
        first, _ = svc.get()
        deadline = time.monotonic() + 10
        while svc.get()[0].collected_at == first.collected_at:
            assert time.monotonic() < deadline, "the background thread never refreshed"
            time.sleep(0.05)
        # by now the CPU sampler has a previous sample
        assert svc.get()[0].cpu.percent is not None
    finally:
        svc.stop()
    stopped_at = svc.get()[0].collected_at
    time.sleep(0.5)
    assert svc.get()[0].collected_at == stopped_at


def test_process_cpu_is_measured_between_collections() -> None:
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        collect_processes()

        def busy_measured() -> ProcessScan | None:
            # CPU is measured between two collections; on a loaded machine the busy loop may
            # not have been scheduled enough yet: collect again until it has (never a fixed wait)
            scan = collect_processes()
            mine = [p for p in scan.info.top_cpu if p.pid == busy.pid]
            return scan if mine and mine[0].cpu_percent > 5.0 else None

        scan = wait_until(busy_measured, "the busy process measured above 5 % CPU",
                          interval=0.3)
        assert scan is not None
        assert all(p.cpu_percent > 0 for p in scan.info.top_cpu)
        ranked = [p.cpu_percent for p in scan.info.top_cpu]
        assert ranked == sorted(ranked, reverse=True)
    finally:
        busy.kill()
        busy.wait()
