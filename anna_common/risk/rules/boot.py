"""Bootloaders, initramfs generators and kernels: banned without telemetry evidence.

"Never touch /boot without explicit telemetry confirmation" (seed 000). A
mutating bootloader or initramfs command is a hard ban unless the telemetry
the context carries shows the matching bootloader (or initramfs tool); with
that evidence it is HIGH and needs the typed confirmation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out, help_only
from anna_common.risk.writes import options
from anna_common.shell.argv import operands

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell.grammar import SimpleCommand


def _evidence_bootloader(out: Out, family: str | None) -> bool:
    loader = out.ctx.bootloader
    if loader is None:
        return False
    return family is None or loader == family


def _boot_change(out: Out, what: str, *, family: str | None = None, initramfs: str | None = None,
                 target: str | None = None) -> None:
    if initramfs is not None:
        evidence = out.ctx.initramfs_tool == initramfs
        basis = f"initramfs tool {initramfs}"
    else:
        evidence = _evidence_bootloader(out, family) or (family == "efi" and out.ctx.efi)
        basis = f"bootloader {family or out.ctx.bootloader}"
    if evidence:
        out.high(Code.BOOTLOADER, f"{what} ({basis} detected)",
                 target=target or what.split(maxsplit=1)[0], system=True)
    else:
        out.ban(Code.BAN_BOOT_WITHOUT_EVIDENCE,
                f"{what}, but telemetry shows no {basis}", target=target)


_GRUB_READ = frozenset({"grub-probe", "grub-script-check", "grub-file", "grub-fstest",
                        "grub-menulst2cfg", "grub-kbdcomp", "grub-syslinux2cfg",
                        "grub-render-label", "grub-glue-efi", "grub-mount", "grub-mkrescue",
                        "grub-mkpasswd-pbkdf2", "grub-mkimage", "grub-mkstandalone",
                        "grub-mklayout", "grub-mkfont", "grub-macbless"})


def grub(cmd: SimpleCommand, out: Out) -> None:
    """grub-* tools that write the boot chain need evidence of GRUB."""
    prog = cmd.program or ""
    if help_only(cmd):
        out.read_only()
        return
    if prog == "grub-editenv":
        verbs = [w.text for w in cmd.args if not w.text.startswith("-")]
        if (len(verbs) >= 2 and verbs[1] == "list") or verbs == ["list"]:
            out.read_only()
            return
    if prog == "grub-probe":
        out.medium(Code.BOOTLOADER, "grub-probe inspects boot devices as root", system=True)
        return
    if prog in _GRUB_READ:
        out.high(Code.BOOTLOADER, f"{prog} builds boot images or mounts", system=True,
                 target=prog)
        return
    _boot_change(out, f"{prog} changes the GRUB boot configuration", family="grub", target=prog)


_BOOTCTL_READ = frozenset({"status", "list", "is-installed", "kernel-identify", "kernel-inspect"})
_BOOTCTL_VALUES = frozenset({"--esp-path", "--path", "--boot-path", "--root", "--image",
                             "--install-source", "--entry-token", "--make-entry-directory",
                             "--make-machine-id-directory", "--efi-boot-option-description",
                             "--json"})
"""bootctl options that take a value, which may be the next word (``--esp-path /efi status``):
each observed to require one (systemd 252 bootctl: "option requires an argument")."""


def bootctl(cmd: SimpleCommand, out: Out) -> None:
    """bootctl status/list are read-only; install/update/set-* need systemd-boot evidence."""
    verbs = [w.text for w in operands(cmd.args, _BOOTCTL_VALUES)]
    # "bootctl reboot-to-firmware" with no argument only reports the current setting
    if not verbs or verbs[0] in _BOOTCTL_READ or help_only(cmd) or verbs == ["reboot-to-firmware"]:
        out.read_only()
        return
    _boot_change(out, f"bootctl {verbs[0]} changes the boot loader", family="systemd-boot",
                 target="bootctl")


_EFIBOOT_WRITE = frozenset({"-c", "--create", "-C", "--create-only", "-B", "--delete-bootnum",
                            "-o", "--bootorder", "-O", "--delete-bootorder", "-n", "--bootnext",
                            "-N", "--delete-bootnext", "-a", "--active", "-A", "--inactive",
                            "-t", "--timeout", "-T", "--delete-timeout", "-D",
                            "--remove-dups", "-w", "--write-signature", "-f", "--reconnect"})


def efibootmgr(cmd: SimpleCommand, out: Out) -> None:
    """efibootmgr shows boot entries; its writing options change firmware variables."""
    if options(cmd.args) & _EFIBOOT_WRITE:
        _boot_change(out, "efibootmgr changes UEFI boot entries", family="efi",
                     target="efibootmgr")
    else:
        out.read_only()


def mkinitcpio(cmd: SimpleCommand, out: Out) -> None:
    """mkinitcpio -P/-p/-g write initramfs images; -L/-H only list."""
    opts = options(cmd.args)
    if opts & {"-P", "--allpresets", "-p", "--preset", "-g", "--generate", "-U", "--uki"}:
        _boot_change(out, "mkinitcpio regenerates initramfs images", initramfs="mkinitcpio",
                     target="mkinitcpio")
    elif opts & {"-L", "--listhooks", "-H", "--hookhelp", "-h", "--help", "-V", "--version",
                 "-M", "--automods"}:
        out.read_only()
    else:
        out.medium(Code.BOOTLOADER, "mkinitcpio runs its hooks to build a test image",
                   system=True)


def dracut(cmd: SimpleCommand, out: Out) -> None:
    """dracut builds an initramfs unless it is only asked to list or print."""
    opts = options(cmd.args)
    if opts and opts <= {"--list-modules", "-h", "--help", "--version", "--print-cmdline",
                         "--list-files"}:
        out.read_only()
        return
    _boot_change(out, "dracut regenerates an initramfs image", initramfs="dracut",
                 target="dracut")


def kernel_install(cmd: SimpleCommand, out: Out) -> None:
    """kernel-install add/remove install kernels into /boot; inspect/list do not."""
    verbs = [w.text for w in cmd.args if not w.text.startswith("-")]
    if not verbs or verbs[0] in ("inspect", "list") or help_only(cmd):
        out.read_only()
        return
    _boot_change(out, f"kernel-install {verbs[0]} changes installed kernels", target="kernel")


def initramfs_other(cmd: SimpleCommand, out: Out) -> None:
    """booster, mkinitramfs, update-initramfs, ukify, dracut-like tools."""
    if help_only(cmd):
        out.read_only()
        return
    prog = cmd.program or ""
    tool = {"booster": "booster", "update-initramfs": "initramfs-tools",
            "mkinitramfs": "initramfs-tools"}.get(prog, prog)
    if prog == "ukify":
        # ukify writes a unified kernel image where --output says; a /boot target is judged
        # (and banned without evidence) as a write, the build itself is HIGH
        out.high(Code.BOOTLOADER, "ukify builds a bootable kernel image", target="ukify")
        return
    _boot_change(out, f"{prog} regenerates boot images", initramfs=tool, target=prog)


def bootloader_other(cmd: SimpleCommand, out: Out) -> None:
    """limine, refind-install, syslinux, sbctl, update-grub, os-prober writers."""
    if help_only(cmd):
        out.read_only()
        return
    prog = cmd.program or ""
    if prog == "sbctl" and cmd.args and cmd.args[0].text in ("status", "list-files",
                                                             "list-enrolled-keys", "verify"):
        out.read_only()
        return
    family = {"update-grub": "grub", "update-grub2": "grub", "limine": "limine",
              "limine-install": "limine", "limine-deploy": "limine", "refind-install": "refind",
              "syslinux": "syslinux", "extlinux": "syslinux"}.get(prog)
    _boot_change(out, f"{prog} changes the boot loader", family=family, target=prog)


BOOT_RULES: dict[str, Callable[[SimpleCommand, Out], None]] = {
    **dict.fromkeys(("grub-install", "grub-mkconfig", "grub2-mkconfig", "grub2-install",
                     "grub-set-default", "grub2-set-default", "grub-reboot", "grub2-reboot",
                     "grub-editenv", "grub2-editenv", "grub-bios-setup", "grub-probe",
                     "grub-script-check", "grub-file", "grub-fstest", "grub-mount",
                     "grub-mkrescue", "grub-mkpasswd-pbkdf2", "grub-mkimage",
                     "grub-mkstandalone", "grub-mklayout", "grub-mkfont", "grub-macbless",
                     "grub-menulst2cfg", "grub-kbdcomp", "grub-syslinux2cfg",
                     "grub-render-label", "grub-glue-efi", "grub-sparc64-setup",
                     "grub-ofpathname", "grub-mknetdir"), grub),
    "bootctl": bootctl,
    "efibootmgr": efibootmgr,
    "mkinitcpio": mkinitcpio,
    "dracut": dracut,
    "kernel-install": kernel_install,
    **dict.fromkeys(("booster", "mkinitramfs", "update-initramfs", "ukify", "mkinitrd",
                     "genkernel"), initramfs_other),
    **dict.fromkeys(("update-grub", "update-grub2", "limine", "limine-install", "limine-deploy",
                     "refind-install", "syslinux", "extlinux", "sbctl", "installkernel"),
                    bootloader_other),
}
"""Rules for boot-chain programs, by program name."""
