"""Disks, partitions, filesystems, mounts, swap, firmware and the boot chain.

Partition tables, filesystem creation, raw device writes and firmware writes
are hard bans. Bootloader and initramfs tools are banned unless telemetry shows
the matching bootloader or initramfs tool; with that evidence they are HIGH.
Read-only uses of the same tools (``fdisk -l``, ``sgdisk -p``, ``bootctl list``,
``wipefs`` without ``-a``) stay allowed: the ban is on the action, not the name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.risk import paths
from anna_common.risk.rules.base import HELP, Code, Out, help_only
from anna_common.risk.writes import operands, options

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell.grammar import SimpleCommand
    from anna_common.shell.words import Word



def device_operands(cmd: SimpleCommand, out: Out, words: list[Word] | None = None) -> list[str]:
    """Operands that are (or may be, being unknown) block devices."""
    found = []
    for word in words if words is not None else operands(cmd.args):
        for place in out.paths(word):
            if paths.is_device(place.path) or paths.is_unknown_root(place.path):
                found.append(place.path.replace(paths.UNKNOWN, "$…"))
    return found


def first_device(cmd: SimpleCommand, out: Out) -> str | None:
    """The first device operand, or None when there is none (the target to report)."""
    return next(iter(device_operands(cmd, out)), None)


def ban_disk(out: Out, what: str, target: str | None) -> None:
    """Hard-ban a write that destroys a disk's data, naming the device when known."""
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
    target = first_device(cmd, out)
    ban_disk(out, f"{prog} rewrites a partition table", target)


def wipefs(cmd: SimpleCommand, out: Out) -> None:
    """``wipefs`` lists signatures; with ``-a``/``-o`` it erases them."""
    opts = options(cmd.args)
    if opts & {"-a", "--all", "-o", "--offset"} and not opts & {"-n", "--no-act"}:
        ban_disk(out, "wipefs erases filesystem signatures", first_device(cmd, out))
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
    devices = device_operands(cmd, out, ops)
    prog = cmd.program or "mkfs"
    if devices or not ops:
        ban_disk(out, f"{prog} creates a filesystem on {devices[0] if devices else 'a device'}",
                  devices[0] if devices else None)
    else:
        out.high(Code.DISK_TOOL, f"{prog} formats {ops[-1].text}", target=ops[-1].text)


def mkswap(cmd: SimpleCommand, out: Out) -> None:
    """mkswap on a device is a filesystem write (ban); on a swap file it is HIGH."""
    if help_only(cmd):
        out.read_only()
        return
    devices = device_operands(cmd, out, operands(cmd.args, frozenset({"-L", "-U", "-p", "--label",
                                                               "--uuid", "--pagesize"})))
    if devices:
        ban_disk(out, f"mkswap formats {devices[0]}", devices[0])
    else:
        out.high(Code.SWAP, "mkswap formats a swap file", system=True)


def blkdiscard(cmd: SimpleCommand, out: Out) -> None:
    """blkdiscard discards every block of a device."""
    if help_only(cmd):
        out.read_only()
        return
    ban_disk(out, "blkdiscard erases a device", first_device(cmd, out))


def shred(cmd: SimpleCommand, out: Out) -> None:
    """shred of a device is a ban (the file case is judged by its write targets)."""
    devices = device_operands(cmd, out)
    real = [d for d in devices if not d.startswith("$…")]
    if real:
        ban_disk(out, f"shred overwrites the device {real[0]}", real[0])
    else:
        out.high(Code.DISK_TOOL, "shred destroys file contents beyond recovery")


def badblocks(cmd: SimpleCommand, out: Out) -> None:
    """``badblocks -w`` overwrites the whole device; ``-n`` rewrites every block in place."""
    if options(cmd.args) & {"-w", "-n"}:
        ban_disk(out, "badblocks writes every block of the device",
                  first_device(cmd, out))
    else:
        out.high(Code.DISK_TOOL, "badblocks scans a device", system=True)


def copy_to_device(cmd: SimpleCommand, out: Out) -> None:
    """dd/ddrescue/cp/pv/cat into a device: judged through write targets; here ddrescue output."""
    if cmd.program == "ddrescue":
        ops = operands(cmd.args)
        if len(ops) >= 2:
            devices = device_operands(cmd, out, [ops[1]])
            if devices:
                ban_disk(out, f"ddrescue writes the device {devices[0]}", devices[0])
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
        ban_disk(out, "hdparm erases or rewrites the drive", first_device(cmd, out))
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
        ban_disk(out, f"nvme {sub} rewrites the drive", first_device(cmd, out))
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
        ban_disk(out, "flashrom rewrites firmware", None)
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
        ban_disk(out, f"cryptsetup {verb} rewrites the encryption header on the device",
                  first_device(cmd, out))
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
    value_opts = frozenset({"-t", "-o", "-O", "-L", "-U", "--types", "--options"})
    if not operands(cmd.args, value_opts) and not (
            options(cmd.args) - {"-l", "--show-labels", "-t", "--types", "-v"}):
        out.read_only()
        return
    ops = operands(cmd.args)
    out.high(Code.MOUNT, f"{cmd.program} changes what is mounted", system=True,
             target=ops[-1].text if ops else None)


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
    **dict.fromkeys(("partprobe", "partx", "kpartx", "addpart", "delpart", "resizepart"),
                    partition_kernel),
}
"""Rules for disk, partition, device, mount and swap programs."""
