"""Which mounts are disks: one entry per local filesystem, from ``/proc/self/mountinfo``.

``psutil.disk_partitions`` lists mounts, and a mount is not a disk: a container sees the
host's filesystem again and again through bind mounts of single directories (nspawn's
``/run/host/incoming``, docker's volumes), and a bind mount of ``/srv/data/home`` on
``/home`` is the same disk as ``/srv/data``. mountinfo says what each mount shows (its
``root`` inside the filesystem) and which filesystem it is (``major:minor``), so:

- a bind mount of a directory inside a filesystem (``root`` is not ``/``) is not a disk;
  btrfs subvolumes are the exception: mounting ``subvol=/@home`` is how btrfs is used;
- each filesystem is listed once, at its shortest mount point;
- a container's root (``overlay`` on ``/``) is its disk: its usage is that of the layer it
  writes to; other overlay mounts (image layers) are not.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

MOUNTINFO = Path("/proc/self/mountinfo")
MAX_MOUNTINFO = 4 * 1024 * 1024
"""Bytes of mountinfo read at most (a machine with thousands of mounts stays bounded)."""


@dataclass(frozen=True, slots=True)
class Mount:
    """One line of mountinfo."""

    device: str
    """``major:minor`` of the filesystem."""
    root: str
    """The directory of the filesystem this mount shows (``/``: all of it)."""
    mountpoint: str
    fstype: str
    source: str
    options: str
    """Superblock options (btrfs: ``subvol=…``)."""


def _unescape(field: str) -> str:
    # the kernel writes space, tab, newline and backslash as octal escapes
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def parse(text: str) -> list[Mount]:
    """The mounts of a mountinfo text (malformed lines are skipped)."""
    mounts = []
    for line in text.splitlines():
        head, sep, tail = line.partition(" - ")
        fields, rest = head.split(" "), tail.split(" ")
        if not sep or len(fields) < 6 or len(rest) < 3:
            continue
        mounts.append(Mount(device=fields[2], root=_unescape(fields[3]),
                            mountpoint=_unescape(fields[4]), fstype=rest[0],
                            source=_unescape(rest[1]), options=rest[2]))
    return mounts


def _subvolume(mount: Mount) -> bool:
    return mount.fstype == "btrfs" and f"subvol={mount.root}" in mount.options.split(",")


def is_whole(mount: Mount) -> bool:
    """The mount shows a whole filesystem (or a btrfs subvolume), not a directory of one."""
    return mount.root == "/" or _subvolume(mount)


def disks(mounts: list[Mount], wanted: Callable[[str], bool]) -> list[Mount]:
    """One mount per local filesystem (see the module docstring); ``wanted(fstype)`` says
    which filesystem types can be disks at all (``overlay`` counts on ``/`` regardless)."""
    best: dict[str, Mount] = {}
    for mount in mounts:
        if mount.fstype == "overlay":
            if mount.mountpoint != "/":
                continue
        elif not wanted(mount.fstype) or not is_whole(mount):
            continue
        seen = best.get(mount.device)
        if seen is None or (len(mount.mountpoint), mount.mountpoint) < \
                (len(seen.mountpoint), seen.mountpoint):
            best[mount.device] = mount
    # a later mount on the same point hides an earlier one: keep the one mounted last
    by_point = {m.mountpoint: m for m in best.values()}
    return sorted(by_point.values(), key=lambda m: m.mountpoint)


def read(path: Path = MOUNTINFO) -> list[Mount]:
    """This process's mounts."""
    with path.open("rb") as handle:
        return parse(handle.read(MAX_MOUNTINFO).decode("utf-8", "replace"))
