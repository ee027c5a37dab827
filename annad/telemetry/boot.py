"""Boot facts: bootloader, initramfs generator, UEFI.

This is the evidence the risk rules demand before any bootloader or initramfs
command may run at all (without it such a step is banned), so detection looks
for the files each tool actually uses, not for anything a person could mistake
for them. Every path is relative to injectable roots, so tests build a tree.
"""

from __future__ import annotations

import logging
from pathlib import Path

from anna_common.telemetry import BootInfo

log = logging.getLogger(__name__)

SYSTEMD_BOOT_EFI_VAR = "LoaderInfo-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f"
"""systemd-boot sets this EFI variable on every boot it performs."""

_ESPS = ("boot", "efi", "boot/efi")
"""Where the EFI system partition (or XBOOTLDR) is mounted on Arch and elsewhere."""

BOOTLOADERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("grub", ("boot/grub/grub.cfg", "boot/grub2/grub.cfg")),
    ("systemd-boot", tuple(f"{esp}/loader/loader.conf" for esp in _ESPS)),
    ("limine", ("boot/limine.conf", "boot/limine/limine.conf", "boot/limine.cfg",
                *(f"{esp}/EFI/limine/limine.conf" for esp in _ESPS),
                *(f"{esp}/EFI/BOOT/limine.conf" for esp in _ESPS), "efi/limine.conf")),
    ("refind", ("boot/refind_linux.conf", *(f"{esp}/EFI/refind/refind.conf" for esp in _ESPS))),
    ("syslinux", ("boot/syslinux/syslinux.cfg",)),
)
"""Bootloader → configuration files that show it is in use, in the order they are tried
(grub, the most common, first; :func:`detect_bootloader` lets firmware evidence of
systemd-boot win over a leftover grub.cfg)."""

INITRAMFS_TOOLS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("mkinitcpio", ("usr/bin/mkinitcpio",)),
    ("dracut", ("usr/bin/dracut", "usr/sbin/dracut")),
    ("booster", ("usr/bin/booster",)),
    ("initramfs-tools", ("usr/sbin/update-initramfs", "usr/sbin/mkinitramfs")),
)
"""Initramfs generator → its program, in the order they are tried (Arch's default first)."""


def _any_file(root: Path, candidates: tuple[str, ...]) -> bool:
    return any((root / rel).is_file() for rel in candidates)


def detect_bootloader(root: Path, sys_root: Path) -> str | None:
    """The bootloader whose configuration is present; None when nothing is found.

    When the firmware says systemd-boot performed this boot (its EFI variable), that
    wins over a leftover grub.cfg; otherwise the first match of :data:`BOOTLOADERS`.
    """
    efivars = sys_root / "firmware" / "efi" / "efivars"
    systemd_boot_files = dict(BOOTLOADERS)["systemd-boot"]
    if (efivars / SYSTEMD_BOOT_EFI_VAR).exists() and _any_file(root, systemd_boot_files):
        return "systemd-boot"
    for name, files in BOOTLOADERS:
        if _any_file(root, files):
            return name
    return None


def detect_initramfs_tool(root: Path) -> str | None:
    """The initramfs generator installed; None when none is."""
    for name, programs in INITRAMFS_TOOLS:
        if _any_file(root, programs):
            return name
    return None


def collect_boot(root: Path = Path("/"), sys_root: Path = Path("/sys")) -> BootInfo:
    """Bootloader, initramfs tool, and whether this boot went through UEFI."""
    return BootInfo(
        bootloader=detect_bootloader(root, sys_root),
        initramfs_tool=detect_initramfs_tool(root),
        efi=(sys_root / "firmware" / "efi").is_dir(),
    )
