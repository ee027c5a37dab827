"""Filesystems and volume managers: fsck/tune2fs, btrfs, LVM, mdadm, ZFS, SMART.

Reporting commands are read-only; scans that open every device or write reports are MEDIUM;
anything that changes a filesystem or a volume is HIGH; rewriting an LVM label is a ban.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out, help_only
from anna_common.risk.rules.disk import ban_disk, device_operands, first_device
from anna_common.shell.argv import options

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell.grammar import SimpleCommand

_FS_READ = {
    "tune2fs": {"-l"}, "dumpe2fs": set(), "e2fsck": {"-n"}, "fsck": {"-n", "-N"},
    "xfs_info": set(), "xfs_repair": {"-n"}, "debugfs": set(),
}


def fs_tool(cmd: SimpleCommand, out: Out) -> None:
    """fsck, tune2fs, resize2fs, e2label and friends: HIGH unless a read-only form."""
    prog = cmd.program or ""
    opts = options(cmd.args)
    if help_only(cmd):
        out.read_only()
        return
    ro = _FS_READ.get(prog)
    if ro is not None and (not ro or opts & ro) and not (prog == "debugfs" and "-w" in opts):
        out.read_only()
        return
    out.high(Code.DISK_TOOL, f"{prog} changes a filesystem", system=True,
             target=first_device(cmd, out))


_BTRFS_GROUPS = ("balance", "check", "device", "filesystem", "inspect-internal", "property",
                 "qgroup", "quota", "receive", "replace", "rescue", "restore", "scrub", "send",
                 "subvolume", "help", "version")


_BTRFS_READ = {
    "filesystem": {"show", "df", "usage", "du", "label?"},
    "subvolume": {"list", "show", "get-default", "find-new"},
    "device": {"stats", "usage", "ready"},
    "scrub": {"status"},
    "balance": {"status"},
    "qgroup": {"show"},
    "property": {"get", "list"},
    "replace": {"status"},
    "inspect-internal": {"*"},
    "help": {"*"},
    "version": {"*"},
}


def _prefix(token: str, choices: tuple[str, ...]) -> str | None:
    """btrfs accepts unique prefixes of group and command names (``b`` → ``balance``)."""
    if token in choices:
        return token
    hits = [c for c in choices if c.startswith(token)]
    return hits[0] if len(hits) == 1 else None


def btrfs(cmd: SimpleCommand, out: Out) -> None:
    """btrfs: listing and status are read-only; everything else changes the filesystem."""
    words = [w.text for w in cmd.args if not w.text.startswith("-")]
    group = _prefix(words[0], _BTRFS_GROUPS) if words else None
    if group is None:
        if help_only(cmd) or not words:
            out.read_only()
        else:
            out.high(Code.DISK_TOOL, "btrfs changes a filesystem", system=True)
        return
    allowed = _BTRFS_READ.get(group, set())
    sub_tokens = tuple(sorted(a.rstrip("?") for a in allowed if a != "*"))
    sub = _prefix(words[1], sub_tokens) if len(words) > 1 and sub_tokens else None
    if group == "check":
        if "--repair" in {w.text for w in cmd.args}:
            out.high(Code.DISK_TOOL, "btrfs check --repair rewrites filesystem metadata",
                     system=True)
        else:
            out.medium(Code.DISK_TOOL, "btrfs check reads a whole unmounted filesystem",
                       system=True)
        return
    if "*" in allowed or (sub is not None and (sub != "label" or len(words) <= 3)):
        out.read_only()
        return
    out.high(Code.DISK_TOOL, f"btrfs {group} changes a filesystem", system=True)


_LVM_READ = frozenset({"lvs", "vgs", "pvs", "lvdisplay", "vgdisplay", "pvdisplay", "lvscan",
                       "vgscan", "lvmconfig"})


_LVM_SCAN = frozenset({"pvscan", "lvmdiskscan", "lvmdump", "lvmsadc", "lvmsar", "dmstats"})


def lvm(cmd: SimpleCommand, out: Out) -> None:
    """LVM: reporting commands are read-only; the rest change volumes (HIGH)."""
    prog = cmd.program or ""
    opts = options(cmd.args)
    if prog == "lvm" and cmd.args and cmd.args[0].text in ("help", "version", "fullreport",
                                                           "lvs", "vgs", "pvs", "formats",
                                                           "segtypes", "types", "config",
                                                           "dumpconfig"):
        out.read_only()
        return
    if help_only(cmd) or (prog in _LVM_READ and not opts & {"-f", "--file"}) or (
            prog == "lvmdevices" and not opts):
        out.read_only()
        return
    if prog in ("pvcreate", "pvremove") and device_operands(cmd, out):
        ban_disk(out, f"{prog} rewrites the LVM label on {device_operands(cmd, out)[0]}",
                  device_operands(cmd, out)[0])
        return
    if prog in _LVM_SCAN or (prog == "lvmdevices" and not opts & {
            "--adddev", "--deldev", "--addpvid", "--delpvid", "--update", "--delnotfound"}) or (
            prog == "lvm_import_vdo" and opts & {"--dry-run", "-n"}) or (
            prog == "lvmpolld" and opts & {"--dump"}) or prog == "lvmconfig":
        out.medium(Code.DISK_TOOL, f"{prog} scans devices or writes LVM reports", system=True)
        return
    out.high(Code.DISK_TOOL, f"{prog} changes logical volumes", system=True,
             target=first_device(cmd, out))


def mdadm(cmd: SimpleCommand, out: Out) -> None:
    """mdadm --detail/--examine are read-only; creating or changing arrays is HIGH."""
    opts = options(cmd.args)
    if opts & {"--detail", "-D", "--examine", "-E", "--query", "-Q", "--detail-platform",
               "--version", "-V", "--help", "-h"} and not opts & {"--create", "-C",
                                                                   "--zero-superblock"}:
        out.read_only()
        return
    out.high(Code.DISK_TOOL, "mdadm changes RAID arrays", system=True)


def zfs(cmd: SimpleCommand, out: Out) -> None:
    """zpool/zfs: status and listing are read-only; the rest changes pools."""
    sub = cmd.args[0].text if cmd.args else ""
    read = {"zpool": {"status", "list", "iostat", "history", "get", "events", "version", "help",
                      ""},
            "zfs": {"list", "get", "diff", "version", "help", "holds", "userspace",
                    "groupspace", "projectspace", ""}}
    if sub in read.get(cmd.program or "", set()) or (sub == "import" and len(cmd.args) == 1):
        out.read_only()
        return
    if sub == "labelclear":
        ban_disk(out, "zpool labelclear erases device labels", first_device(cmd, out))
        return
    out.high(Code.DISK_TOOL, f"{cmd.program} {sub} changes storage pools", system=True)


def smartctl(cmd: SimpleCommand, out: Out) -> None:
    """smartctl reads drive health; -t/-s/-o start tests or change settings."""
    if options(cmd.args) & {"-t", "--test", "-s", "--smart", "-o", "--offlineauto", "-S",
                            "--saveauto", "-X", "--abort"}:
        out.medium(Code.DISK_TOOL, "smartctl changes drive self-test settings", system=True)
    else:
        out.read_only()


VOLUME_RULES: dict[str, Callable[[SimpleCommand, Out], None]] = {
    **dict.fromkeys(("fsck", "e2fsck", "fsck.ext4", "fsck.vfat", "fsck.btrfs", "xfs_repair",
                     "tune2fs", "resize2fs", "e2label", "fatlabel", "ntfslabel", "xfs_growfs",
                     "xfs_admin", "dumpe2fs", "debugfs", "ntfsresize", "ntfsfix", "e4defrag",
                     "xfs_info", "fstrim"), fs_tool),
    "btrfs": btrfs,
    **dict.fromkeys(("lvm", "lvs", "vgs", "pvs", "lvdisplay", "vgdisplay", "pvdisplay", "lvscan",
                     "vgscan", "pvscan", "lvmdiskscan", "lvmconfig", "lvmdump", "lvmdevices",
                     "lvcreate", "lvremove", "lvextend", "lvreduce", "lvresize", "lvrename",
                     "lvconvert", "lvchange", "vgcreate", "vgremove", "vgextend", "vgreduce",
                     "vgrename", "vgchange", "vgimport", "vgexport", "vgmerge", "vgsplit",
                     "vgcfgrestore", "vgcfgbackup", "pvcreate", "pvremove", "pvresize", "pvmove",
                     "pvchange", "lvm_import_vdo", "lvmpolld", "dmstats", "dmsetup",
                     "vgimportclone", "vgmknodes", "lvmsadc", "lvmsar"), lvm),
    "mdadm": mdadm,
    "zpool": zfs,
    "zfs": zfs,
    "smartctl": smartctl,
}
"""Rules for filesystem and volume-manager programs."""
