"""Telemetry models: the shape of what ``annad`` reports about the machine.

Shape only, no collection (that lives in ``annad/telemetry/``). Every string in
these models is **untrusted data**: process names, package names, unit
descriptions and file names can be written by anyone on the machine. They are
rendered through ``annactl.console.inert`` and go into the *user* message of
the prompt, marked untrusted, never into the system message.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# Field docstrings stay documentation only: no use_attribute_docstrings, whose source
# parsing at import cost every annactl command ~1/5 of its start-up (bench/startup.py).
# Only the model-facing ActionPlan schema carries them (anna_common/plan.py).
_MODEL = ConfigDict(extra="forbid", defer_build=True)


class CpuInfo(BaseModel):
    """Processor facts and load."""

    model_config = _MODEL

    model: str | None = None
    """Model name from /proc/cpuinfo, if readable."""
    cores_logical: int = 0
    """Logical CPUs."""
    cores_physical: int | None = None
    """Physical cores, if known."""
    load_1: float = 0.0
    """1-minute load average."""
    load_5: float = 0.0
    """5-minute load average."""
    load_15: float = 0.0
    """15-minute load average."""
    percent: float | None = None
    """CPU utilisation since the previous sample, 0-100 (None on the first sample)."""


class MemoryInfo(BaseModel):
    """RAM and swap."""

    model_config = _MODEL

    total_bytes: int = 0
    """Physical memory."""
    used_bytes: int = 0
    """Memory in use (total minus available)."""
    available_bytes: int = 0
    """Memory available to new processes."""
    percent: float = 0.0
    """Used share, 0-100."""
    swap_total_bytes: int = 0
    """Swap size."""
    swap_used_bytes: int = 0
    """Swap in use."""
    swap_percent: float = 0.0
    """Swap used share, 0-100."""


class DiskInfo(BaseModel):
    """One mounted filesystem."""

    model_config = _MODEL

    mountpoint: str
    """Where it is mounted."""
    device: str = ""
    """Block device or source."""
    fstype: str = ""
    """Filesystem type."""
    total_bytes: int = 0
    """Size."""
    used_bytes: int = 0
    """Used space."""
    free_bytes: int = 0
    """Free space available to unprivileged users."""
    percent: float = 0.0
    """Used share, 0-100."""


class Temperature(BaseModel):
    """One temperature sensor."""

    model_config = _MODEL

    label: str
    """Sensor and label, e.g. ``coretemp/Package id 0``."""
    celsius: float
    """Current reading."""


class SystemInfo(BaseModel):
    """Host identity and uptime."""

    model_config = _MODEL

    hostname: str = ""
    """Host name."""
    kernel: str = ""
    """Kernel release (uname -r)."""
    distro_id: str | None = None
    """``ID`` from /etc/os-release, e.g. ``arch``."""
    distro_name: str | None = None
    """``PRETTY_NAME`` from /etc/os-release."""
    distro_like: list[str] = Field(default_factory=list)
    """``ID_LIKE`` from /etc/os-release."""
    uptime_seconds: float = 0.0
    """Seconds since boot."""


class ProcessInfo(BaseModel):
    """One process (untrusted strings: name and command line)."""

    model_config = _MODEL

    pid: int
    """Process id."""
    name: str
    """Process name (untrusted)."""
    user: str | None = None
    """Owner's user name."""
    cpu_percent: float = 0.0
    """CPU use since the previous sample."""
    memory_percent: float = 0.0
    """Share of physical memory."""
    rss_bytes: int = 0
    """Resident set size."""
    cmdline: str = ""
    """Command line, trimmed (untrusted)."""


class ProcessesInfo(BaseModel):
    """Process count and the top consumers."""

    model_config = _MODEL

    count: int = 0
    """Number of processes."""
    top_cpu: list[ProcessInfo] = Field(default_factory=list)
    """Highest CPU use first."""
    top_memory: list[ProcessInfo] = Field(default_factory=list)
    """Highest memory use first."""


class PackageInfo(BaseModel):
    """One installed package (untrusted strings)."""

    model_config = _MODEL

    name: str
    """Package name."""
    version: str
    """Installed version."""
    explicit: bool = False
    """Installed explicitly (not as a dependency)."""


class PackagesInfo(BaseModel):
    """Installed packages, read from the pacman local database."""

    model_config = _MODEL

    manager: Literal["pacman", "none"] = "none"
    """Which package manager's database was read."""
    available: bool = False
    """Whether the database could be read."""
    reason: str | None = None
    """Why not, e.g. ``not pacman: no database at /var/lib/pacman/local``."""
    dbpath: str | None = None
    """The database path that was read."""
    count: int = 0
    """Installed packages."""
    explicit_count: int = 0
    """Explicitly installed packages."""
    packages: list[PackageInfo] = Field(default_factory=list)
    """Every installed package, sorted by name."""


class FailedUnit(BaseModel):
    """One failed systemd unit (untrusted strings)."""

    model_config = _MODEL

    name: str
    """Unit name."""
    description: str = ""
    """The unit's Description= (untrusted)."""
    load: str = ""
    """LOAD column."""
    active: str = ""
    """ACTIVE column."""
    sub: str = ""
    """SUB column."""


class ServicesInfo(BaseModel):
    """systemd state (tolerates machines without systemd)."""

    model_config = _MODEL

    available: bool = False
    """Whether systemd could be asked."""
    reason: str | None = None
    """Why not, e.g. ``systemd is not running``."""
    failed: list[FailedUnit] = Field(default_factory=list)
    """Failed system units."""
    unit_files: list[str] = Field(default_factory=list)
    """Installed unit files' names as systemd spells them (``NetworkManager.service``), so a
    unit a person names in lower case is looked up, never guessed; empty when unknown."""


class Address(BaseModel):
    """One address of a network interface (untrusted strings)."""

    model_config = _MODEL

    interface: str
    """Interface name (``eth0``, ``wlan0``)."""
    family: Literal["ipv4", "ipv6"]
    """Address family."""
    address: str
    """The address as the kernel prints it."""
    prefix: int | None = None
    """Prefix length, when the netmask gives one."""


class Listener(BaseModel):
    """One socket listening for connections (TCP) or datagrams (UDP)."""

    model_config = _MODEL

    proto: Literal["tcp", "udp"]
    """Transport."""
    address: str
    """Local address (``0.0.0.0`` and ``::`` are every address)."""
    port: int
    """Local port."""
    process: str | None = None
    """The owning process's name, when the daemon may see it (untrusted)."""


class NetworkInfo(BaseModel):
    """Interface addresses and listening sockets."""

    model_config = _MODEL

    available: bool = False
    """Whether the collector ran."""
    addresses: list[Address] = Field(default_factory=list)
    """Every interface address (loopback included)."""
    listeners: list[Listener] = Field(default_factory=list)
    """Listening sockets, by port."""


class LoginSession(BaseModel):
    """One logged-in user session, as utmp records it (untrusted strings)."""

    model_config = _MODEL

    user: str
    """User name."""
    terminal: str = ""
    """Terminal (``tty1``, ``pts/0``)."""
    host: str = ""
    """Remote host, for a remote login."""
    started: float = 0.0
    """Unix time the session began."""


class DesktopInfo(BaseModel):
    """The caller's graphical session, from its whitelisted environment and processes."""

    model_config = _MODEL

    de: str | None = None
    """Desktop environment (``gnome``, ``kde``, ``xfce``, ...)."""
    wm: str | None = None
    """Window manager or compositor (``hyprland``, ``sway``, ``i3``, ...)."""
    display_protocol: Literal["wayland", "x11"] | None = None
    """Display protocol of the session."""
    wallpaper_backends_installed: list[str] = Field(default_factory=list)
    """Wallpaper backends whose program is installed."""
    wallpaper_backends_running: list[str] = Field(default_factory=list)
    """Wallpaper backends with a running process."""


class BootInfo(BaseModel):
    """Boot facts: the evidence a /boot or bootloader step needs to be allowed."""

    model_config = _MODEL

    bootloader: str | None = None
    """``grub``, ``systemd-boot``, ``limine``, ... when detected, else null."""
    initramfs_tool: str | None = None
    """``mkinitcpio``, ``dracut``, ``booster`` when detected, else null."""
    efi: bool = False
    """Whether the machine booted through UEFI."""


class Telemetry(BaseModel):
    """Everything the daemon reports about the machine at one moment."""

    model_config = _MODEL

    collected_at: float = 0.0
    """Unix time of collection."""
    collect_ms: float = 0.0
    """How long the collection took."""
    cpu: CpuInfo = Field(default_factory=CpuInfo)
    """Processor."""
    memory: MemoryInfo = Field(default_factory=MemoryInfo)
    """Memory and swap."""
    disks: list[DiskInfo] = Field(default_factory=list)
    """Mounted filesystems (pseudo filesystems left out)."""
    temperatures: list[Temperature] = Field(default_factory=list)
    """Sensors, where available."""
    system: SystemInfo = Field(default_factory=SystemInfo)
    """Host, kernel, distro, uptime."""
    processes: ProcessesInfo = Field(default_factory=ProcessesInfo)
    """Process count and top processes."""
    packages: PackagesInfo = Field(default_factory=PackagesInfo)
    """Installed packages."""
    services: ServicesInfo = Field(default_factory=ServicesInfo)
    """Failed units."""
    desktop: DesktopInfo = Field(default_factory=DesktopInfo)
    """The caller's desktop session."""
    boot: BootInfo = Field(default_factory=BootInfo)
    """Bootloader and initramfs facts."""
    network: NetworkInfo = Field(default_factory=NetworkInfo)
    """Interface addresses and listening sockets."""
    sessions: list[LoginSession] | None = None
    """Users logged in (None: not collected)."""
    errors: list[str] = Field(default_factory=list)
    """Collectors that failed, with why; the rest of the telemetry is still valid."""
