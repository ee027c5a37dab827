"""Where the collectors read the machine from, so tests can point them at a temporary tree."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from annad.confine.stepenv import SAFE_PATH

DEFAULT_OS_RELEASE = (Path("/etc/os-release"), Path("/usr/lib/os-release"))
"""os-release(5): /etc first, /usr/lib when /etc has none."""


@dataclass(frozen=True, slots=True)
class Sources:
    """Filesystem roots the collectors read. The defaults are the running machine."""

    proc: Path = Path("/proc")
    """procfs: cpuinfo, stat, loadavg, uptime, sys/kernel/{hostname,osrelease}."""
    sys: Path = Path("/sys")
    """sysfs: hwmon and thermal sensors, firmware/efi."""
    root: Path = Path("/")
    """The root holding /boot, /efi and /usr/bin (bootloader and initramfs evidence)."""
    os_release: tuple[Path, ...] = DEFAULT_OS_RELEASE
    """os-release candidates, first existing wins."""
    systemd_run: Path = Path("/run/systemd/system")
    """Exists exactly when systemd is the running init (what sd_booted(3) checks)."""
    path_dirs: tuple[Path, ...] = tuple(Path(p) for p in SAFE_PATH.split(":"))
    """Where installed programs are looked for: the PATH steps run with."""
