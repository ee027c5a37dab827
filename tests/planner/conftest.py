"""Fixtures for the planning tests: the fake LLM server, settings, telemetry, a fake daemon."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from anna_common.plan import ActionPlan
from anna_common.protocol import (
    CheckResult,
    ChecksResponse,
    PlanStatus,
    SessionEnv,
    SubmitResponse,
    TelemetryResponse,
)
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
from anna_common.validate import validate
from annactl.config import ClientSettings
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
        return ClientSettings(**values)
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


@dataclass
class FakeDaemon:
    """Stands in for annactl.daemon_client.DaemonClient where no real daemon is available:
    the same three methods the planner uses, with scripted check outputs."""

    snapshot: Telemetry
    outputs: dict[str, str] = field(default_factory=dict)
    submitted: list[ActionPlan] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    def telemetry(self, *, fresh: bool = False,
                  session: SessionEnv | None = None) -> TelemetryResponse:
        return TelemetryResponse(telemetry=self.snapshot, age_s=0.0)

    def submit(self, plan: ActionPlan, *, request: str = "",
               source: str = "model") -> SubmitResponse:
        self.submitted.append(plan)
        result = validate(plan)
        assert result.plan is not None
        plan_id = f"p{len(self.submitted)}"
        return SubmitResponse(plan_id=plan_id, digest=result.plan.digest,
                              status=PlanStatus.SUBMITTED, annotated=result.plan)

    def run_checks(self, plan_id: str, *,
                   session: SessionEnv | None = None) -> ChecksResponse:
        self.checked.append(plan_id)
        plan = self.submitted[int(plan_id[1:]) - 1]
        return ChecksResponse(plan_id=plan_id, results=[
            CheckResult(id=c.id, command=c.command, ran=True, exit_code=0,
                        output=self.outputs.get(c.id, "ok")) for c in plan.necessary_checks])
