"""Disks, partitions, filesystems, mounts, swap, firmware and the boot chain.

Partition tables, filesystem creation, raw device writes and firmware writes
are hard bans. Bootloader and initramfs tools are banned unless telemetry shows
the matching bootloader or initramfs tool; with that evidence they are HIGH.
Read-only uses of the same tools (``fdisk -l``, ``sgdisk -p``, ``bootctl list``,
``wipefs`` without ``-a``) stay allowed: the ban is on the action, not the name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common import paths
from anna_common.rules.base import Code, Out
from anna_common.writes import operands, options

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell import SimpleCommand
    from anna_common.shellwords import Word

HELP = frozenset({"--help", "-h", "--version", "-V", "-?", "--usage", "help", "version"})


def help_only(cmd: SimpleCommand) -> bool:
    """Only asks for help or the version (``grub-install --help``)."""
    return bool(cmd.args) and all(w.literal and w.text in HELP for w in cmd.args)


def _devices(cmd: SimpleCommand, out: Out, words: list[Word] | None = None) -> list[str]:
    """Operands that are (or may be, being unknown) block devices."""
    found = []
    for word in words if words is not None else operands(cmd.args):
        for place in out.paths(word):
            if paths.is_device(place.path) or paths.is_unknown_root(place.path):
                found.append(place.path.replace(paths.UNKNOWN, "$…"))
    return found


def _ban_disk(out: Out, what: str, target: str | None) -> None:
    out.ban(Code.BAN_DISK_WRITE, what, target=target)


# -- partition tables -----------------------------------------------------------------

_SFDISK_READ = frozenset({"-l", "--list", "-J", "--json", "-s", "--show-size", "-g",
                          "--show-geometry", "-F", "--list-free", "--list-types", "-T", "-r",
                          "--raw"})
_SFDISK_DUMP = frozenset({"-d", "--dump", "-V", "--verify", "-n", "--no-act"})
_SGDISK_READ = frozenset({"-p", "--print", "-L", "--list-types", "-i", "--info", "-O",
                          "--print-mbr", "-V", "--version", "-?", "--help", "--usage"})
_SGDISK_DUMP = frozenset({"-v", "--verify", "-b", "--backup", "-P", "--pretend", "-D",
                          "--display-alignment", "-a", "--set-alignment"})
_PARTED_READ = frozenset({"print", "p", "help", "version", "unit", "align-check", "-l", "--list",
                          "-s", "--script", "-m", "--machine", "-a", "--align", "-f", "--fix",
                          "-v", "--version", "-h", "--help", "-j", "--json"})


def partition_tool(cmd: SimpleCommand, out: Out) -> None:
    """fdisk, sfdisk, gdisk, sgdisk, cfdisk, parted, growpart: ban writes, allow listing."""
    prog = cmd.program or ""
    opts = options(cmd.args)
    texts = {w.text for w in cmd.args}
    if help_only(cmd):
        out.read_only()
        return
    if prog in ("fdisk", "gdisk") and opts & {"-l", "--list", "-x", "--list-details"}:
        out.read_only()
        return
    for tool, read, dump in (("sfdisk", _SFDISK_READ, _SFDISK_DUMP),
                             ("sgdisk", _SGDISK_READ, _SGDISK_DUMP)):
        if prog == tool and opts and opts <= read:
            out.read_only()
            return
        if prog == tool and opts and opts <= read | dump:
            out.medium(Code.DISK_TOOL, f"{prog} dumps, verifies or backs up a partition table",
                       system=True)
            return
    if prog == "parted":
        words = {w.text for w in cmd.args if w.literal and not w.text.startswith("/")}
        if words and words <= _PARTED_READ and ("-l" in words or "--list" in words or
                                                 "print" in words or "p" in words or
                                                 words & HELP):
            out.read_only()
            return
    target = (_devices(cmd, out) or [None])[0]
    _ban_disk(out, f"{prog} rewrites a partition table", target)


def wipefs(cmd: SimpleCommand, out: Out) -> None:
    """``wipefs`` lists signatures; with ``-a``/``-o`` it erases them."""
    opts = options(cmd.args)
    if opts & {"-a", "--all", "-o", "--offset"} and not opts & {"-n", "--no-act"}:
        _ban_disk(out, "wipefs erases filesystem signatures", (_devices(cmd, out) or [None])[0])
        return
    out.read_only()


def mkfs(cmd: SimpleCommand, out: Out) -> None:
    """mkfs.* and friends: a device (or unknown) operand is a ban; an image file is HIGH."""
    if help_only(cmd):
        out.read_only()
        return
    values = frozenset({"-t", "-L", "-U", "-b", "-c", "-C", "-E", "-G", "-I", "-i", "-J", "-l",
                        "-m", "-M", "-N", "-n", "-o", "-O", "-r", "-T", "-d", "-s", "-F", "-S",
                        "--label", "--uuid", "--type", "--data", "--metadata", "--nodesize",
                        "--sectorsize", "--features", "--checksum", "--rootdir", "-g", "-R"})
    ops = operands(cmd.args, values)
    devices = _devices(cmd, out, ops)
    prog = cmd.program or "mkfs"
    if devices or not ops:
        _ban_disk(out, f"{prog} creates a filesystem on {devices[0] if devices else 'a device'}",
                  devices[0] if devices else None)
    else:
        out.high(Code.DISK_TOOL, f"{prog} formats {ops[-1].text}", target=ops[-1].text)


def mkswap(cmd: SimpleCommand, out: Out) -> None:
    """mkswap on a device is a filesystem write (ban); on a swap file it is HIGH."""
    if help_only(cmd):
        out.read_only()
        return
    devices = _devices(cmd, out, operands(cmd.args, frozenset({"-L", "-U", "-p", "--label",
                                                               "--uuid", "--pagesize"})))
    if devices:
        _ban_disk(out, f"mkswap formats {devices[0]}", devices[0])
    else:
        out.high(Code.SWAP, "mkswap formats a swap file", system=True)


def blkdiscard(cmd: SimpleCommand, out: Out) -> None:
    """blkdiscard discards every block of a device."""
    if help_only(cmd):
        out.read_only()
        return
    _ban_disk(out, "blkdiscard erases a device", (_devices(cmd, out) or [None])[0])


def shred(cmd: SimpleCommand, out: Out) -> None:
    """shred of a device is a ban (the file case is judged by its write targets)."""
    devices = _devices(cmd, out)
    real = [d for d in devices if not d.startswith("$…")]
    if real:
        _ban_disk(out, f"shred overwrites the device {real[0]}", real[0])
    else:
        out.high(Code.DISK_TOOL, "shred destroys file contents beyond recovery")


def badblocks(cmd: SimpleCommand, out: Out) -> None:
    """``badblocks -w`` overwrites the whole device; ``-n`` rewrites every block in place."""
    if options(cmd.args) & {"-w", "-n"}:
        _ban_disk(out, "badblocks writes every block of the device",
                  (_devices(cmd, out) or [None])[0])
    else:
        out.high(Code.DISK_TOOL, "badblocks scans a device", system=True)


def copy_to_device(cmd: SimpleCommand, out: Out) -> None:
    """dd/ddrescue/cp/pv/cat into a device: judged through write targets; here ddrescue output."""
    if cmd.program == "ddrescue":
        ops = operands(cmd.args)
        if len(ops) >= 2:
            devices = _devices(cmd, out, [ops[1]])
            if devices:
                _ban_disk(out, f"ddrescue writes the device {devices[0]}", devices[0])
                return
        out.high(Code.DISK_TOOL, "ddrescue copies raw disk data", system=True)
        return
    out.medium(Code.SYSTEM_WRITE, "dd copies raw data")


_HDPARM_BAN = ("--security-erase", "--security-erase-enhanced", "--write-sector",
               "--trim-sector-ranges", "--trim-sector-ranges-stdin", "--dco-restore",
               "--make-bad-sector", "--fwdownload", "--fwdownload-mode3", "--fwdownload-mode3-max",
               "--fwdownload-mode7", "--security-set-pass", "--dco-setmax")
_HDPARM_READ = frozenset({"-I", "-i", "-C", "-t", "-T", "-g", "-H", "-N", "-v", "--verbose",
                          "-h", "--help", "-V"})


def hdparm(cmd: SimpleCommand, out: Out) -> None:
    """hdparm reads drive facts; a few options erase or rewrite the drive."""
    texts = [w.text for w in cmd.args]
    if any(t.startswith(_HDPARM_BAN) for t in texts):
        _ban_disk(out, "hdparm erases or rewrites the drive", (_devices(cmd, out) or [None])[0])
        return
    flags = [t for t in texts if t.startswith("-")]
    if all(t in _HDPARM_READ or (t in ("-tT", "-Tt", "-B", "-M", "-a", "-A", "-W", "-S") and
           _no_value_after(cmd, t)) for t in flags):
        out.read_only()
        return
    out.high(Code.DISK_TOOL, "hdparm changes drive settings", system=True)


def _no_value_after(cmd: SimpleCommand, flag: str) -> bool:
    """``hdparm -B /dev/sda`` reads the setting; ``-B254`` or ``-B 254`` sets it."""
    if flag in _HDPARM_READ or flag in ("-tT", "-Tt"):
        return True
    texts = [w.text for w in cmd.args]
    i = texts.index(flag)
    return i + 1 < len(texts) and texts[i + 1].startswith("/")


def nvme(cmd: SimpleCommand, out: Out) -> None:
    """nvme format/sanitize/write are bans; list and logs are read-only."""
    sub = cmd.args[0].text if cmd.args else ""
    if sub in ("format", "sanitize", "write", "write-zeroes", "write-uncor", "fw-download",
               "fw-commit", "delete-ns", "create-ns", "security-send", "ns-rescan"):
        _ban_disk(out, f"nvme {sub} rewrites the drive", (_devices(cmd, out) or [None])[0])
    elif sub in ("list", "list-subsys", "smart-log", "id-ctrl", "id-ns", "error-log", "get-log",
                 "show-regs", "fw-log", "version", "help", "list-ns", "get-feature",
                 "effects-log", "") or help_only(cmd):
        out.read_only()
    else:
        out.high(Code.DISK_TOOL, f"nvme {sub} changes drive state", system=True)


def flashrom(cmd: SimpleCommand, out: Out) -> None:
    """Writing or erasing firmware is a ban; reading and verifying are not."""
    opts = options(cmd.args)
    if opts & {"-w", "--write", "-E", "--erase"}:
        _ban_disk(out, "flashrom rewrites firmware", None)
    elif opts & {"-r", "--read", "-v", "--verify"} or help_only(cmd):
        out.high(Code.DISK_TOOL, "flashrom talks to firmware chips", system=True)
    else:
        out.high(Code.DISK_TOOL, "flashrom probes firmware chips", system=True)


def cryptsetup(cmd: SimpleCommand, out: Out) -> None:
    """luksFormat/erase destroy data (ban); open/close/resize are HIGH; status is read-only."""
    verbs = [w.text for w in operands(cmd.args, frozenset({"--key-file", "-d", "--type", "-c",
                                                           "--cipher", "-s", "--key-size",
                                                           "-h", "--hash", "-S", "--key-slot"}))]
    verb = verbs[0] if verbs else ""
    texts = {w.text for w in cmd.args}
    if verb in ("luksFormat", "format", "erase", "luksErase", "reencrypt") or \
            "--persistent" in texts:
        _ban_disk(out, f"cryptsetup {verb} rewrites the encryption header on the device",
                  (_devices(cmd, out) or [None])[0])
    elif texts & {"--dump-volume-key", "--dump-master-key", "--dump-json-metadata"}:
        out.high(Code.SECRET_READ, "cryptsetup prints key material", system=True,
                 target="key")
    elif verb in ("luksDump", "tcryptDump"):
        out.medium(Code.DISK_TOOL, f"cryptsetup {verb} reads the encryption header",
                   system=True)
    elif verb in ("status", "isLuks", "luksUUID", "benchmark", "") or help_only(cmd):
        out.read_only()
    else:
        out.high(Code.DISK_TOOL, f"cryptsetup {verb} changes encrypted volumes", system=True)


# -- mounts, swap, filesystems -----------------------------------------------------------


def mount(cmd: SimpleCommand, out: Out) -> None:
    """mount with no operands lists mounts; otherwise it changes the filesystem tree."""
    if not operands(cmd.args, frozenset({"-t", "-o", "-O", "-L", "-U", "--types", "--options"})):
        if not (options(cmd.args) - {"-l", "--show-labels", "-t", "--types", "-v"}):
            out.read_only()
            return
    out.high(Code.MOUNT, f"{cmd.program} changes what is mounted", system=True,
             target=(operands(cmd.args) or [None])[-1].text if operands(cmd.args) else None)


def swap(cmd: SimpleCommand, out: Out) -> None:
    """swapon --show lists; swapon/swapoff DEVICE change swap."""
    opts = options(cmd.args)
    if cmd.program == "swapon" and (not cmd.args or opts & {"--show", "-s", "--summary"}):
        out.read_only()
        return
    out.high(Code.SWAP, f"{cmd.program} changes swap", system=True)


def losetup(cmd: SimpleCommand, out: Out) -> None:
    """losetup -a/-l lists loop devices; anything else attaches or detaches."""
    opts = options(cmd.args)
    if not cmd.args or (opts and opts <= {"-a", "--all", "-l", "--list", "-J", "--json", "-n",
                                          "--noheadings", "-O", "--output", "-j", "--associated"}):
        out.read_only()
        return
    out.high(Code.MOUNT, "losetup attaches or detaches loop devices", system=True)


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
             target=(_devices(cmd, out) or [None])[0])


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
    if prog in ("pvcreate", "pvremove") and _devices(cmd, out):
        _ban_disk(out, f"{prog} rewrites the LVM label on {_devices(cmd, out)[0]}",
                  _devices(cmd, out)[0])
        return
    if prog in _LVM_SCAN or (prog == "lvmdevices" and not opts & {
            "--adddev", "--deldev", "--addpvid", "--delpvid", "--update", "--delnotfound"}) or (
            prog == "lvm_import_vdo" and opts & {"--dry-run", "-n"}) or (
            prog == "lvmpolld" and opts & {"--dump"}) or prog == "lvmconfig":
        out.medium(Code.DISK_TOOL, f"{prog} scans devices or writes LVM reports", system=True)
        return
    out.high(Code.DISK_TOOL, f"{prog} changes logical volumes", system=True,
             target=(_devices(cmd, out) or [None])[0])


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
        _ban_disk(out, "zpool labelclear erases device labels", (_devices(cmd, out) or [None])[0])
        return
    out.high(Code.DISK_TOOL, f"{cmd.program} {sub} changes storage pools", system=True)


def smartctl(cmd: SimpleCommand, out: Out) -> None:
    """smartctl reads drive health; -t/-s/-o start tests or change settings."""
    if options(cmd.args) & {"-t", "--test", "-s", "--smart", "-o", "--offlineauto", "-S",
                            "--saveauto", "-X", "--abort"}:
        out.medium(Code.DISK_TOOL, "smartctl changes drive self-test settings", system=True)
    else:
        out.read_only()


def partition_kernel(cmd: SimpleCommand, out: Out) -> None:
    """partprobe/partx/kpartx/addpart/delpart/resizepart tell the kernel about partitions."""
    opts = options(cmd.args)
    if (cmd.program in ("partx", "kpartx") and opts & {"-l", "--list", "-s", "--show"}) or (
            help_only(cmd)):
        out.read_only()
        return
    out.high(Code.DISK_TOOL, f"{cmd.program} changes the kernel's view of partitions",
             system=True)


DISK_RULES: dict[str, Callable[[SimpleCommand, Out], None]] = {
    **dict.fromkeys(("fdisk", "sfdisk", "gdisk", "sgdisk", "cfdisk", "cgdisk", "parted",
                     "growpart", "fixparts"), partition_tool),
    "wipefs": wipefs,
    **dict.fromkeys(("mkfs", "mke2fs", "mkdosfs", "mkntfs", "mkexfatfs", "mkreiserfs",
                     "jfs_mkfs", "mkudffs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mkfs.btrfs",
                     "mkfs.xfs", "mkfs.vfat", "mkfs.fat", "mkfs.msdos", "mkfs.ntfs",
                     "mkfs.exfat", "mkfs.f2fs", "mkfs.jfs", "mkfs.minix", "mkfs.bcachefs",
                     "mkfs.nilfs2", "mkfs.reiserfs", "mkfs.udf", "mkfs.cramfs", "mkfs.hfsplus",
                     "bcachefs"), mkfs),
    "mkswap": mkswap,
    "blkdiscard": blkdiscard,
    **dict.fromkeys(("shred", "srm", "sfill", "sswap", "wipe"), shred),
    "badblocks": badblocks,
    "ddrescue": copy_to_device,
    "hdparm": hdparm,
    "nvme": nvme,
    "flashrom": flashrom,
    "cryptsetup": cryptsetup,
    "mount": mount,
    "umount": mount,
    "swapon": swap,
    "swapoff": swap,
    "losetup": losetup,
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
    **dict.fromkeys(("partprobe", "partx", "kpartx", "addpart", "delpart", "resizepart"),
                    partition_kernel),
}
"""Rules for storage programs, by program name."""
