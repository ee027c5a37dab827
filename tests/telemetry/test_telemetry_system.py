"""System collectors on this machine (real /proc, psutil) and on temporary proc/sys trees."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from annad.telemetry import Sources, collect
from annad.telemetry.system import (
    CpuSampler,
    collect_cpu,
    collect_disks,
    collect_memory,
    collect_system,
    collect_temperatures,
    cpu_model,
)

ARCH_OS_RELEASE = 'NAME="Arch Linux"\nPRETTY_NAME="Arch Linux"\nID=arch\nBUILD_ID=rolling\n'


def test_this_machine_fields_are_present_and_sane(tmp_path: Path) -> None:
    os_release = tmp_path / "os-release"
    os_release.write_text(ARCH_OS_RELEASE + "ID_LIKE=\"archlinux manjaro\"\n")
    tel = collect(pacman_dbpath=tmp_path / "nodb", sources=Sources(os_release=(os_release,)))
    assert tel.errors == []
    assert tel.cpu.cores_logical > 0
    assert tel.cpu.load_1 >= 0.0
    assert tel.memory.total_bytes > 0
    assert 0 < tel.memory.available_bytes <= tel.memory.total_bytes
    assert tel.memory.used_bytes == tel.memory.total_bytes - tel.memory.available_bytes
    assert tel.disks, "at least one real filesystem is mounted"
    root = [d for d in tel.disks if d.mountpoint == "/"]
    assert root and root[0].total_bytes > 0 and 0.0 <= root[0].percent <= 100.0
    assert not {d.fstype for d in tel.disks} & {"proc", "sysfs", "tmpfs", "cgroup2", "devpts"}
    assert tel.system.hostname == Path("/proc/sys/kernel/hostname").read_text().strip()
    assert tel.system.kernel == Path("/proc/sys/kernel/osrelease").read_text().strip()
    assert tel.system.distro_id == "arch"
    assert tel.system.distro_name == "Arch Linux"
    assert tel.system.distro_like == ["archlinux", "manjaro"]
    assert tel.system.uptime_seconds > 0
    assert tel.processes.count > 1
    assert tel.collected_at <= time.time() and tel.collect_ms > 0


def test_usr_lib_os_release_is_the_fallback(tmp_path: Path) -> None:
    fallback = tmp_path / "usr-lib-os-release"
    fallback.write_text("ID=fedora\nNAME=Fedora\nID_LIKE=rhel\n")
    errors: list[str] = []
    info = collect_system(Path("/proc"), (tmp_path / "missing", fallback), errors)
    assert (info.distro_id, info.distro_name, info.distro_like) == ("fedora", "Fedora", ["rhel"])
    assert errors == []


def test_no_os_release_means_unknown_distro_not_an_error(tmp_path: Path) -> None:
    errors: list[str] = []
    info = collect_system(Path("/proc"), (tmp_path / "none",), errors)
    assert info.distro_id is None and info.distro_name is None
    assert errors == []
    assert info.hostname  # the rest is still collected


def test_unreadable_os_release_is_reported_and_the_rest_survives(tmp_path: Path) -> None:
    broken = tmp_path / "os-release"
    broken.mkdir()  # a directory where the file should be: reading fails
    tel = collect(pacman_dbpath=tmp_path / "nodb", sources=Sources(os_release=(broken,)))
    assert any(e.startswith("distro: IsADirectoryError") for e in tel.errors)
    assert tel.system.distro_id is None
    assert tel.system.hostname and tel.memory.total_bytes > 0


def _fake_proc(root: Path, *, cpuinfo: str, stat: str, loadavg: str = "0.50 0.25 0.10 1/99 42",
               uptime: str = "1234.56 999.00") -> Path:
    (root / "sys" / "kernel").mkdir(parents=True)
    (root / "cpuinfo").write_text(cpuinfo)
    (root / "stat").write_text(stat)
    (root / "loadavg").write_text(loadavg + "\n")
    (root / "uptime").write_text(uptime + "\n")
    (root / "sys" / "kernel" / "hostname").write_text("arch-box\n")
    (root / "sys" / "kernel" / "osrelease").write_text("6.9.1-arch1-1\n")
    return root


def test_proc_root_is_injectable(tmp_path: Path) -> None:
    proc = _fake_proc(tmp_path / "proc",
                      cpuinfo="processor\t: 0\nBogoMIPS\t: 48.00\nHardware\t: BCM2835\n",
                      stat="cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 100 0 100 800 0 0 0 0 0 0\n")
    cpu = collect_cpu(proc, CpuSampler())
    assert cpu.model == "BCM2835"  # ARM names it "Hardware"; "processor: 0" is an index
    assert (cpu.load_1, cpu.load_5, cpu.load_15) == (0.5, 0.25, 0.1)
    assert cpu.percent is None  # first sample
    info = collect_system(proc, (tmp_path / "none",), [])
    assert (info.hostname, info.kernel, info.uptime_seconds) == ("arch-box", "6.9.1-arch1-1",
                                                                  1234.56)


def test_cpu_percent_is_measured_between_samples(tmp_path: Path) -> None:
    proc = _fake_proc(tmp_path / "proc", cpuinfo="model name\t: Test CPU 9000\n",
                      stat="cpu  100 0 100 800 0 0 0 0 0 0\n")
    sampler = CpuSampler(min_interval_s=0.0)
    assert sampler.percent(proc) is None
    # +30 user, +10 system, +40 idle, +20 iowait: busy 40 of 100
    (proc / "stat").write_text("cpu  130 0 110 840 20 0 0 0 0 0\n")
    assert sampler.percent(proc) == 40.0
    assert cpu_model(proc) == "Test CPU 9000"


def test_cpu_percent_on_this_machine_is_a_real_share() -> None:
    sampler = CpuSampler()
    assert sampler.percent(Path("/proc")) is None
    deadline = time.monotonic() + 0.4
    while time.monotonic() < deadline:  # keep a CPU busy for the window
        sum(range(1000))
    percent = sampler.percent(Path("/proc"))
    assert percent is not None and 0.0 < percent <= 100.0
    # a second call inside the minimum window repeats the figure instead of a noisy one
    assert sampler.percent(Path("/proc")) == percent


def test_temperatures_from_hwmon_and_thermal_zones(tmp_path: Path) -> None:
    sys_root = tmp_path / "sys"
    chip = sys_root / "class" / "hwmon" / "hwmon0"
    chip.mkdir(parents=True)
    (chip / "name").write_text("coretemp\n")
    (chip / "temp1_input").write_text("45500\n")
    (chip / "temp1_label").write_text("Package id 0\n")
    (chip / "temp2_input").write_text("39000\n")
    (chip / "temp3_input").write_text("garbage\n")  # unreadable sensor: skipped
    temps = collect_temperatures(sys_root)
    assert [(t.label, t.celsius) for t in temps] == [("coretemp/Package id 0", 45.5),
                                                     ("coretemp/temp2", 39.0)]
    other = tmp_path / "sys2"
    zone = other / "class" / "thermal" / "thermal_zone0"
    zone.mkdir(parents=True)
    (zone / "type").write_text("x86_pkg_temp\n")
    (zone / "temp").write_text("51000\n")
    assert [(t.label, t.celsius) for t in collect_temperatures(other)] == [
        ("thermal/x86_pkg_temp", 51.0)]
    assert collect_temperatures(tmp_path / "no-sys") == []


def test_memory_and_disks_agree_with_the_kernel() -> None:
    mem = collect_memory()
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    assert mem.total_bytes == int(meminfo["MemTotal"].split()[0]) * 1024
    assert mem.swap_total_bytes == int(meminfo["SwapTotal"].split()[0]) * 1024
    mounted = {line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()}
    disks = collect_disks()
    assert {d.mountpoint for d in disks} <= mounted
    assert len({d.mountpoint for d in disks}) == len(disks)


@pytest.mark.parametrize("cpuinfo, expected", [
    ("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 158\n"
     "model name\t: Intel(R) Core(TM) i7-8700\n", "Intel(R) Core(TM) i7-8700"),
    ("processor\t: 0\nmodel\t\t: 158\n", None),
    ("", None),
])
def test_cpu_model_variants(tmp_path: Path, cpuinfo: str, expected: str | None) -> None:
    (tmp_path / "cpuinfo").write_text(cpuinfo)
    assert cpu_model(tmp_path) == expected
