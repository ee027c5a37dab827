"""Bootloader, initramfs tool and UEFI detection from temporary roots."""

from __future__ import annotations

from pathlib import Path

import pytest

from annad.telemetry import Sources, collect
from annad.telemetry.boot import SYSTEMD_BOOT_EFI_VAR, collect_boot


def _touch(root: Path, *paths: str) -> None:
    for rel in paths:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("# test\n")


@pytest.mark.parametrize("files, bootloader", [
    (["boot/grub/grub.cfg"], "grub"),
    (["boot/grub2/grub.cfg"], "grub"),
    (["boot/loader/loader.conf"], "systemd-boot"),
    (["efi/loader/loader.conf"], "systemd-boot"),
    (["boot/efi/loader/loader.conf"], "systemd-boot"),
    (["boot/limine.conf"], "limine"),
    (["boot/EFI/limine/limine.conf"], "limine"),
    (["efi/EFI/refind/refind.conf"], "refind"),
    (["boot/refind_linux.conf"], "refind"),
    (["boot/syslinux/syslinux.cfg"], "syslinux"),
    (["boot/vmlinuz-linux", "boot/grub/themes/x.png"], None),  # no loader configuration
    ([], None),
])
def test_bootloader(tmp_path: Path, files: list[str], bootloader: str | None) -> None:
    _touch(tmp_path / "root", *files)
    assert collect_boot(tmp_path / "root", tmp_path / "sys").bootloader == bootloader


def test_grub_wins_over_a_leftover_loader_conf_unless_the_firmware_says_otherwise(
        tmp_path: Path) -> None:
    root, sys_root = tmp_path / "root", tmp_path / "sys"
    _touch(root, "boot/grub/grub.cfg", "efi/loader/loader.conf")
    assert collect_boot(root, sys_root).bootloader == "grub"
    _touch(sys_root, f"firmware/efi/efivars/{SYSTEMD_BOOT_EFI_VAR}")
    boot = collect_boot(root, sys_root)
    assert (boot.bootloader, boot.efi) == ("systemd-boot", True)


def test_firmware_variable_alone_is_not_a_bootloader(tmp_path: Path) -> None:
    _touch(tmp_path / "sys", f"firmware/efi/efivars/{SYSTEMD_BOOT_EFI_VAR}")
    boot = collect_boot(tmp_path / "root", tmp_path / "sys")
    assert (boot.bootloader, boot.efi) == (None, True)


@pytest.mark.parametrize("files, tool", [
    (["usr/bin/mkinitcpio"], "mkinitcpio"),
    (["usr/bin/dracut"], "dracut"),
    (["usr/bin/booster"], "booster"),
    (["usr/sbin/update-initramfs"], "initramfs-tools"),
    (["usr/bin/mkinitcpio", "usr/bin/dracut"], "mkinitcpio"),
    (["etc/mkinitcpio.conf"], None),  # a config without the program proves nothing
    ([], None),
])
def test_initramfs_tool(tmp_path: Path, files: list[str], tool: str | None) -> None:
    _touch(tmp_path / "root", *files)
    assert collect_boot(tmp_path / "root", tmp_path / "sys").initramfs_tool == tool


def test_efi_is_the_firmware_directory(tmp_path: Path) -> None:
    assert collect_boot(tmp_path, tmp_path / "sys").efi is False
    (tmp_path / "sys" / "firmware" / "efi").mkdir(parents=True)
    assert collect_boot(tmp_path, tmp_path / "sys").efi is True


def test_boot_facts_reach_the_snapshot(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _touch(root, "boot/loader/loader.conf", "usr/bin/mkinitcpio")
    (tmp_path / "sys" / "firmware" / "efi").mkdir(parents=True)
    tel = collect(pacman_dbpath=tmp_path / "nodb",
                  sources=Sources(root=root, sys=tmp_path / "sys"))
    assert (tel.boot.bootloader, tel.boot.initramfs_tool, tel.boot.efi) == (
        "systemd-boot", "mkinitcpio", True)
