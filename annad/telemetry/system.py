"""Processor, memory, host identity and distribution.

CPU facts, load, uptime, kernel and host name come from procfs under an
injectable root (``Sources.proc``); memory from psutil; the distribution from
os-release. CPU utilisation needs two samples: :class:`CpuSampler` keeps the
previous counters between collections.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from pathlib import Path

import psutil

from anna_common.distro import parse_os_release
from anna_common.telemetry import CpuInfo, DiskInfo, MemoryInfo, SystemInfo, Temperature
from annad.telemetry.mounts import MOUNTINFO, disks, read

log = logging.getLogger(__name__)

MAX_TEXT = 128
"""Longest CPU model, host name, kernel or distro string kept."""
MIN_SAMPLE_S = 0.25
"""Shorter windows than this give noisy percentages: the previous figure is repeated."""
_MODEL_KEYS = ("model name", "cpu model", "hardware", "model", "processor")
"""cpuinfo keys naming the processor: x86 first, then MIPS, ARM and others."""


def _read(path: Path, limit: int = 65536) -> str:
    with path.open("rb") as fh:
        return fh.read(limit).decode("utf-8", "replace")


@functools.lru_cache(maxsize=8)
def cpu_model(proc: Path) -> str | None:
    """The processor's model name from ``proc/cpuinfo``, or None (it never changes: cached)."""
    try:
        text = _read(proc / "cpuinfo")
    except OSError:
        return None
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key = key.strip().lower()
        if sep and value.strip() and key not in values:
            values[key] = value.strip()
    for key in _MODEL_KEYS:
        # "processor" is an index on x86 ("0"); only a non-numeric value names a model.
        if key in values and not values[key].isdigit():
            return values[key][:MAX_TEXT]
    return None


def cpu_counters(proc: Path) -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs from the ``cpu`` line of ``proc/stat``."""
    line = _read(proc / "stat", 4096).split("\n", 1)[0]
    fields = [int(x) for x in line.split()[1:]]
    # user nice system idle iowait irq softirq steal; guest time is already inside user/nice.
    total = sum(fields[:8])
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return total - idle, total


class CpuSampler:
    """Remembers the previous CPU counters so utilisation is measured between collections."""

    def __init__(self, min_interval_s: float = MIN_SAMPLE_S) -> None:
        """Start with no previous sample: the first reading has no percentage."""
        self.min_interval_s = min_interval_s
        """Windows shorter than this repeat the previous figure."""
        self._lock = threading.Lock()
        self._last: tuple[float, int, int] | None = None
        """(monotonic time, busy, total) of the reference sample."""
        self._percent: float | None = None
        """The last figure computed, repeated for windows shorter than MIN_SAMPLE_S."""

    def percent(self, proc: Path) -> float | None:
        """Busy share of all CPUs since the previous sample, 0-100; None on the first."""
        busy, total = cpu_counters(proc)
        now = time.monotonic()
        with self._lock:
            if self._last is not None and now - self._last[0] < self.min_interval_s:
                return self._percent
            if self._last is not None and total > self._last[2]:
                delta_busy = busy - self._last[1]
                self._percent = round(max(0.0, min(100.0, 100.0 * delta_busy
                                                   / (total - self._last[2]))), 1)
            self._last = (now, busy, total)
            return self._percent


def load_average(proc: Path) -> tuple[float, float, float]:
    """1, 5 and 15 minute load from ``proc/loadavg``."""
    parts = _read(proc / "loadavg", 256).split()
    return float(parts[0]), float(parts[1]), float(parts[2])


def collect_cpu(proc: Path, sampler: CpuSampler) -> CpuInfo:
    """Model, core counts, load and utilisation."""
    load_1, load_5, load_15 = load_average(proc)
    return CpuInfo(
        model=cpu_model(proc),
        cores_logical=psutil.cpu_count(logical=True) or os.cpu_count() or 0,
        cores_physical=psutil.cpu_count(logical=False),
        load_1=load_1,
        load_5=load_5,
        load_15=load_15,
        percent=sampler.percent(proc),
    )


def collect_memory() -> MemoryInfo:
    """RAM and swap (used = total - available, what a person means by "used")."""
    vm = psutil.virtual_memory()
    swap = psutil.swap_memory()
    used = max(0, vm.total - vm.available)
    return MemoryInfo(
        total_bytes=vm.total,
        used_bytes=used,
        available_bytes=vm.available,
        percent=round(100.0 * used / vm.total, 1) if vm.total else 0.0,
        swap_total_bytes=swap.total,
        swap_used_bytes=swap.used,
        swap_percent=float(swap.percent),
    )


def read_distro(candidates: tuple[Path, ...]) -> dict[str, str]:
    """os-release values from the first candidate that exists; {} when none does.

    A missing file is an answer (unknown distro); an unreadable one raises, so the
    snapshot records why.
    """
    for path in candidates:
        if path.exists():
            return parse_os_release(_read(path))
    return {}


def _proc_text(proc: Path, name: str, fallback: str) -> str:
    try:
        return _read(proc / "sys" / "kernel" / name, 1024).strip()[:MAX_TEXT] or fallback
    except OSError:
        return fallback


def collect_system(proc: Path, os_release: tuple[Path, ...], errors: list[str]) -> SystemInfo:
    """Host name, kernel, uptime and distribution; a broken os-release is noted in ``errors``."""
    uname = os.uname()
    try:
        uptime = float(_read(proc / "uptime", 256).split()[0])
    except (OSError, ValueError, IndexError) as exc:
        errors.append(f"uptime: {type(exc).__name__}: {exc}"[:200])
        uptime = 0.0
    try:
        distro = read_distro(os_release)
    except (OSError, UnicodeError) as exc:
        errors.append(f"distro: {type(exc).__name__}: {exc}"[:200])
        distro = {}
    return SystemInfo(
        hostname=_proc_text(proc, "hostname", uname.nodename[:MAX_TEXT]),
        kernel=_proc_text(proc, "osrelease", uname.release[:MAX_TEXT]),
        distro_id=distro.get("ID", "")[:MAX_TEXT] or None,
        distro_name=(distro.get("PRETTY_NAME") or distro.get("NAME") or "")[:MAX_TEXT] or None,
        distro_like=[v[:MAX_TEXT] for v in distro.get("ID_LIKE", "").split()][:8],
        uptime_seconds=uptime,
    )


PSEUDO_FS = frozenset({
    "proc", "sysfs", "devtmpfs", "devpts", "tmpfs", "ramfs", "cgroup", "cgroup2", "securityfs",
    "pstore", "efivarfs", "bpf", "debugfs", "tracefs", "configfs", "fusectl", "mqueue",
    "hugetlbfs", "autofs", "binfmt_misc", "rpc_pipefs", "nsfs", "overlay", "squashfs",
    "selinuxfs", "nfsd", "aufs", "devfs", "iso9660", "udf",
})
"""Filesystems that hold no user data (or are read-only images, always 100% full)."""
NETWORK_FS = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs",
                        "afs", "davfs", "virtiofs"})
"""Left out: statvfs on a dead server blocks, and a snapshot must not hang."""
MAX_DISKS = 32
"""Mounts reported at most."""
MAX_SENSORS = 32
"""Temperature readings reported at most."""


def _wanted(fstype: str) -> bool:
    # fuse.* filesystems (sshfs, rclone, gvfs) can block like network ones; fuseblk (ntfs-3g)
    # is a local disk and stays.
    return fstype not in PSEUDO_FS and fstype not in NETWORK_FS and not fstype.startswith("fuse.")


def collect_disks(mountinfo: Path = MOUNTINFO) -> list[DiskInfo]:
    """Mounted local filesystems and their usage, one entry per filesystem
    (:mod:`annad.telemetry.mounts` says why a mount is not always a disk)."""
    found: list[DiskInfo] = []
    for part in disks(read(mountinfo), _wanted)[:MAX_DISKS]:
        if not os.path.isdir(part.mountpoint):  # noqa: PTH112 - a str from mountinfo
            continue  # a bind-mounted file (containers mount /etc/hosts so): not a disk
        try:
            usage = psutil.disk_usage(part.mountpoint)
        except OSError:
            continue  # unmounted meanwhile, or not ours to stat
        found.append(DiskInfo(
            mountpoint=part.mountpoint[:256], device=part.source[:256], fstype=part.fstype[:32],
            total_bytes=usage.total, used_bytes=usage.used, free_bytes=usage.free,
            percent=float(usage.percent)))
    return found


def _millidegrees(path: Path) -> float | None:
    try:
        return int(_read(path, 64).strip()) / 1000.0
    except (OSError, ValueError):
        return None  # a sensor that cannot be read right now (ENODATA, EIO) is skipped


def _hwmon(sys_root: Path) -> list[Temperature]:
    found: list[Temperature] = []
    for chip in sorted((sys_root / "class" / "hwmon").glob("hwmon*")):
        try:
            chip_name = _read(chip / "name", 256).strip()[:64] or chip.name
        except OSError:
            chip_name = chip.name
        for sensor in sorted(chip.glob("temp*_input")):
            celsius = _millidegrees(sensor)
            if celsius is None:
                continue
            stem = sensor.name.removesuffix("_input")
            try:
                label = _read(chip / f"{stem}_label", 256).strip()[:64] or stem
            except OSError:
                label = stem
            found.append(Temperature(label=f"{chip_name}/{label}", celsius=celsius))
    return found


def _thermal_zones(sys_root: Path) -> list[Temperature]:
    found: list[Temperature] = []
    for zone in sorted((sys_root / "class" / "thermal").glob("thermal_zone*")):
        celsius = _millidegrees(zone / "temp")
        if celsius is None:
            continue
        try:
            kind = _read(zone / "type", 256).strip()[:64] or zone.name
        except OSError:
            kind = zone.name
        found.append(Temperature(label=f"thermal/{kind}", celsius=celsius))
    return found


def collect_temperatures(sys_root: Path) -> list[Temperature]:
    """hwmon sensors (what ``sensors`` shows); thermal zones when there are none; [] in a VM."""
    return (_hwmon(sys_root) or _thermal_zones(sys_root))[:MAX_SENSORS]
