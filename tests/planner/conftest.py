"""Fixtures for the planning tests: the fake LLM server, settings, telemetry, a real daemon."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from anna_common.telemetry import (
    CpuInfo,
    DesktopInfo,
    DiskInfo,
    FailedUnit,
    MemoryInfo,
    PackageInfo,
    PackagesInfo,
    ProcessesInfo,
    ProcessInfo,
    ServicesInfo,
    SystemInfo,
    Telemetry,
)
from annactl.core.config import ClientSettings, load_settings
from tests.daemonfix import shared_user_daemon, user_daemon  # noqa: F401 - fixtures by name
from tests.fakellm import FakeLLM

GB = 1024**3


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A fake LLM server on 127.0.0.1 with one model, ``test-model``, that can think."""
    with FakeLLM() as server:
        yield server


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., ClientSettings]:
    """Settings with state in tmp_path; keyword arguments override."""
    def build(**overrides: Any) -> ClientSettings:
        values: dict[str, Any] = {"llm_model": "test-model", "state_dir": tmp_path / "state",
                                  "llm_timeout": 10.0, "llm_connect_timeout": 2.0}
        values.update(overrides)
        return load_settings(**values)
    return build


def make_telemetry(*, packages: int = 40, desktop: DesktopInfo | None = None,
                   process_names: tuple[str, ...] = ("firefox", "Hyprland", "kitty"),
                   distro: str = "arch", extra_packages: tuple[str, ...] = ()) -> Telemetry:
    """A plausible snapshot: Arch by default, ``packages`` installed, a Hyprland session."""
    names = sorted({"pacman", "pacman-contrib", "systemd", "bash", "htop", "hyprpaper",
                    "nginx", *extra_packages, *(f"libfiller{i}" for i in range(packages))})
    pkgs = [PackageInfo(name=n, version=f"1.{i}-1", explicit=i % 5 == 0)
            for i, n in enumerate(names)]
    procs = [ProcessInfo(pid=100 + i, name=n, user="user", cpu_percent=10.0 - i,
                         memory_percent=2.0 + i, cmdline=f"/usr/bin/{n}")
             for i, n in enumerate(process_names)]
    return Telemetry(
        cpu=CpuInfo(model="Test CPU", cores_logical=4, load_1=0.5, load_5=0.4, load_15=0.3),
        memory=MemoryInfo(total_bytes=16 * GB, used_bytes=6 * GB, available_bytes=10 * GB,
                          percent=37.5),
        disks=[DiskInfo(mountpoint="/", fstype="ext4", total_bytes=100 * GB,
                        used_bytes=93 * GB, free_bytes=7 * GB, percent=93.0)],
        system=SystemInfo(hostname="box", kernel="6.12.1-arch1-1", distro_id=distro),
        processes=ProcessesInfo(count=120, top_cpu=procs, top_memory=procs[::-1]),
        packages=PackagesInfo(manager="pacman" if distro == "arch" else "none",
                              available=distro == "arch", count=len(pkgs), packages=pkgs),
        services=ServicesInfo(available=True, failed=[FailedUnit(name="bluetooth.service",
                                                                 description="Bluetooth")]),
        desktop=desktop or DesktopInfo(wm="hyprland", display_protocol="wayland",
                                       wallpaper_backends_installed=["hyprpaper"],
                                       wallpaper_backends_running=["hyprpaper"]),
    )


@pytest.fixture
def telemetry() -> Telemetry:
    """The default snapshot."""
    return make_telemetry()
