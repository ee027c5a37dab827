"""A fixed, realistic telemetry snapshot for the benchmarks (1,500 packages, Hyprland)."""

from __future__ import annotations

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
    Temperature,
)

GB = 1024**3
REAL = ("base", "linux", "linux-firmware", "pacman", "pacman-contrib", "systemd", "bash", "zsh",
        "neovim", "vim", "git", "htop", "btop", "firefox", "hyprland", "hyprpaper", "swaybg",
        "waybar", "kitty", "pipewire", "wireplumber", "networkmanager", "openssh", "nginx",
        "docker", "python", "python-pip", "gcc", "make", "cmake", "ripgrep", "fd", "bat",
        "grub", "efibootmgr", "mkinitcpio", "sudo", "mesa", "vulkan-radeon", "noto-fonts")


def telemetry(packages: int = 1500) -> Telemetry:
    """The snapshot: Arch, Hyprland with hyprpaper running, ``packages`` installed."""
    kinds = ("gtk", "xcb", "qt", "python-mod", "perl-mod", "ttf-font", "haskell-pkg")
    fillers = [f"lib{kinds[i % len(kinds)]}{i}" for i in range(packages - len(REAL))]
    names = sorted({*REAL, *fillers})
    pkgs = [PackageInfo(name=n, version=f"{1 + i % 9}.{i % 13}.{i % 7}-1", explicit=i < 120)
            for i, n in enumerate(names)]
    procs = [ProcessInfo(pid=1000 + i, name=n, user="user", cpu_percent=30.0 - i * 3,
                         memory_percent=5.0 + i, rss_bytes=(200 + i) * 1024**2,
                         cmdline=f"/usr/bin/{n} --flag-{i} " + "x" * 300)
             for i, n in enumerate(("firefox", "Hyprland", "kitty", "waybar", "hyprpaper",
                                    "pipewire", "nvim", "dockerd"))]
    return Telemetry(
        cpu=CpuInfo(model="AMD Ryzen 7 5800X 8-Core Processor", cores_logical=16,
                    cores_physical=8, load_1=1.21, load_5=0.98, load_15=0.77, percent=9.5),
        memory=MemoryInfo(total_bytes=32 * GB, used_bytes=int(14.4 * GB),
                          available_bytes=int(17.6 * GB), percent=45.0,
                          swap_total_bytes=8 * GB, swap_used_bytes=0, swap_percent=0.0),
        disks=[DiskInfo(mountpoint="/", device="/dev/nvme0n1p2", fstype="ext4",
                        total_bytes=500 * GB, used_bytes=305 * GB, free_bytes=195 * GB,
                        percent=61.0),
               DiskInfo(mountpoint="/boot", device="/dev/nvme0n1p1", fstype="vfat",
                        total_bytes=1 * GB, used_bytes=GB // 5, free_bytes=GB * 4 // 5,
                        percent=20.0)],
        temperatures=[Temperature(label="k10temp/Tctl", celsius=52.0)],
        system=SystemInfo(hostname="archbox", kernel="6.12.1-arch1-1", distro_id="arch",
                          distro_name="Arch Linux", uptime_seconds=86400 * 3),
        processes=ProcessesInfo(count=312, top_cpu=procs[:6], top_memory=procs[2:]),
        packages=PackagesInfo(manager="pacman", available=True, dbpath="/var/lib/pacman",
                              count=len(pkgs), explicit_count=120, packages=pkgs),
        services=ServicesInfo(available=True, failed=[
            FailedUnit(name="bluetooth.service", description="Bluetooth service",
                       load="loaded", active="failed", sub="failed")]),
        desktop=DesktopInfo(wm="hyprland", display_protocol="wayland",
                            wallpaper_backends_installed=["hyprpaper", "swaybg"],
                            wallpaper_backends_running=["hyprpaper"]),
    )
