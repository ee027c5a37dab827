"""The confined view of the file tree, built with raw system calls (standard library only).

Imported by the helpers (``python -I -S``), so it uses only ctypes, os and sys. In a new mount
namespace :func:`file_tree` makes

- every mount private, then read-only, nosuid and nodev, recursively
  (``mount_setattr(AT_RECURSIVE)``: one call covers every submount — /tmp, /run, /proc…);
- a new ``/dev`` (:func:`minimal_dev`, the capture's too): a tmpfs holding only null, zero,
  full, random, urandom and tty (the real nodes, cloned before the tree went read-only) and
  the fd links; a read-only mount does not stop writes to a device node, so the disks,
  /dev/mem and the rest are simply not there;
- for a capless-root read an empty ``/run`` (systemd's and D-Bus's sockets trust uid 0);
- for a run allowed Unix sockets (:func:`bus_view`) a ``/run`` holding only the D-Bus and
  systemd sockets a read verb needs, and empty ``/tmp`` and ``/var/tmp`` (where agents, tmux
  and X servers listen);
- masked paths (root's secrets, Anna's own state and socket): a file covered by
  ``/dev/null`` on a ``nodev`` mount (opening it fails), a directory by an empty read-only
  tmpfs — whatever path or symlink a command reaches them by;
- optional throw-away tmpfs mounts (``scratch``).

The PID and network namespaces stay the machine's: ``ps``, ``ss`` and ``ip`` see the truth.
"""

# ruff: noqa: PTH102, PTH103, PTH110, PTH112, PTH120, PTH211 - no pathlib: start-up time of the -I -S helpers

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 1 << 18
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOEXEC = 0x1, 0x2, 0x4, 0x8
SEALED = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
OPEN_TREE_CLONE, OPEN_TREE_CLOEXEC = 1, 0o2000000
MOVE_MOUNT_F_EMPTY_PATH = 0x4
# the mount API system calls have one number on every architecture (added after 5.0)
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 428, 429, 442
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
"""The device nodes a confined command gets: nothing that reaches hardware or memory."""
VOLATILE_LOGS = ("/run/log/journal",)
"""The journal kept in /run where it is not persistent: a bus-verb run sees it read-only (who
may read it is the file system's business, as when the command runs directly)."""
DISCARDING = ("/dev/null", "/dev/zero", "/dev/full")
"""The only files a check may open for writing (Landlock): ``2>/dev/null`` must work."""

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


class Refused(Exception):
    """The confinement could not be built; the command must not run."""


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def check(result: int, what: str) -> int:
    """``result`` unless negative; then :class:`Refused` naming ``what`` and errno."""
    if result < 0:
        raise Refused(f"{what}: {os.strerror(ctypes.get_errno())}")
    return result


def _b(path: str) -> bytes:
    return os.fsencode(path)


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    """mount(2), refusing on failure."""
    check(libc.mount(_b(source), _b(target), None if fstype is None else _b(fstype),
                     ctypes.c_ulong(flags), None if data is None else _b(data)),
          f"mount {target}")


def setattr_(path: str, attrs: int, *, recursive: bool) -> None:
    """mount_setattr(2): set ``attrs`` on the mount at ``path`` (and below)."""
    attr = _MountAttr(attr_set=attrs, attr_clr=0, propagation=0, userns_fd=0)
    check(libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, _b(path),
                       AT_RECURSIVE if recursive else 0, ctypes.byref(attr),
                       ctypes.sizeof(attr)), f"read-only {path}")


def clone_tree(path: str) -> int:
    """A detached copy of the mount at ``path`` (a descriptor for :func:`move_mount`)."""
    return check(libc.syscall(SYS_OPEN_TREE, AT_FDCWD, _b(path),
                              OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC), f"clone {path}")


def move_mount(fd: int, target: str) -> None:
    """Attach a detached mount at ``target``."""
    check(libc.syscall(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, _b(target), MOVE_MOUNT_F_EMPTY_PATH),
          f"attach {target}")


def write(path: str, text: str) -> None:
    """Write ``text`` to an existing file (procfs)."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def namespaces(flags: int, userns: bool) -> None:
    """unshare ``flags``; in user mode the owner maps to itself (never to root)."""
    uid, gid = os.getuid(), os.getgid()
    check(libc.unshare(flags | (CLONE_NEWUSER if userns else 0)), "unshare namespaces")
    if userns:
        try:
            write("/proc/self/setgroups", "deny")
            write("/proc/self/uid_map", f"{uid} {uid} 1\n")
            write("/proc/self/gid_map", f"{gid} {gid} 1\n")
        except OSError as exc:
            raise Refused(f"user namespace map: {exc.strerror}") from None


def _empty(path: str, size: str = "4k") -> None:
    mount("anna-empty", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
          f"mode=0755,size={size}")


def file_tree(*, hide_run: bool, masked: list[str], scratch: list[str],
              bus: list[str] | None = None) -> None:
    """The view described in the module docstring (``bus``: the sockets :func:`bus_view`
    keeps, or None for the machine's own /run)."""
    mount("none", "/", None, MS_REC | MS_PRIVATE, None)
    clones = device_clones()
    kept = [*bus, *VOLATILE_LOGS] if bus is not None else []
    keep = {path: clone_tree(path) for path in kept if os.path.exists(path)}
    setattr_("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, recursive=True)
    minimal_dev("/dev", clones)
    setattr_("/dev", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, recursive=True)
    if hide_run:
        _empty("/run")
    elif bus is not None:
        bus_view(keep)
    for path in masked:
        mask(path)
    for path in scratch:
        mount("anna-scratch", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")


def overlay_point(point: str, target: str) -> os.stat_result | None:
    """The real directory an overlay at ``target`` will cover, or None when ``point`` was
    unmounted and removed since the mount table was read (a stick pulled out, another
    program's scratch mount): its path, if a step makes it again, is in the parent file
    system's overlay, so still seen. None too for a point this (unprivileged) uid cannot
    reach, beneath another user's 0700 directory: its steps cannot reach it either (another
    daemon's state disk under root's scratch directory failed every per-user preview).
    ``/`` itself must be there."""
    try:
        info = os.stat(point)  # noqa: PTH116 - no pathlib in the -I -S helpers
    except (FileNotFoundError, PermissionError):
        if point == "/":
            raise
        return None
    return info if os.path.isdir(target) else None


MNT_DETACH = 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
"""``pivot_root``'s system call number (no libc wrapper) on the machines Anna runs on."""


def pivot_into(root: str) -> None:
    """Make ``root`` (an assembled tree) this mount namespace's ``/`` and detach the old
    root, so no path reaches the real tree (the capture's and the preview's helpers)."""
    os.chdir(root)
    machine = os.uname().machine
    if machine not in SYS_PIVOT_ROOT:
        raise Refused(f"no pivot_root number for {machine}")
    check(libc.syscall(SYS_PIVOT_ROOT[machine], b".", b"."), "pivot_root")
    check(libc.umount2(b".", MNT_DETACH), "detach the old root")
    os.chdir("/")


def device_clones() -> dict[str, int]:
    """Detached copies of the :data:`DEVICES` nodes this machine has, for
    :func:`minimal_dev` (taken before the tree goes ``nodev``: a copy keeps its mount's
    flags)."""
    return {name: clone_tree(f"/dev/{name}") for name in DEVICES
            if os.path.exists(f"/dev/{name}")}


def minimal_dev(target: str, clones: dict[str, int], *, shm: bool = False) -> None:
    """A new ``/dev`` at ``target``: a tmpfs holding only the cloned devices (their
    descriptors are closed here), the fd links and empty ``shm`` and ``pts`` directories.
    ``shm``: a writable tmpfs at ``shm`` (a captured step may use POSIX shared memory; it is
    thrown away with the step)."""
    mount("anna-dev", target, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
    for name, fd in clones.items():
        os.close(os.open(f"{target}/{name}", os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o666))
        move_mount(fd, f"{target}/{name}")
        os.close(fd)
    for name, link in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                       ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(link, f"{target}/{name}")
    os.mkdir(f"{target}/shm", 0o1777 if shm else 0o755)
    if shm:
        mount("anna-shm", f"{target}/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    os.mkdir(f"{target}/pts", 0o755)


def bus_view(keep: dict[str, int]) -> None:
    """``/run`` with only the kept sockets, the volatile journal (:data:`VOLATILE_LOGS`, so
    ``systemctl status`` shows the log lines it shows when run directly) and systemd's
    "booted" marker; empty /tmp."""
    mount("anna-run", "/run", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=64k")
    os.makedirs("/run/systemd/system", 0o755)  # sd_booted(): systemd is PID 1
    for path, fd in keep.items():
        if path in VOLATILE_LOGS:
            os.makedirs(path, 0o755, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), 0o755, exist_ok=True)
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o666))
        move_mount(fd, path)
        os.close(fd)
    setattr_("/run", SEALED, recursive=True)
    for path in ("/tmp", "/var/tmp"):
        if os.path.isdir(path):
            _empty(path)


def mask(path: str) -> None:
    """Cover one path. Any failure refuses the command: it never runs with the path seen.
    A path the view no longer has (under a hidden /run) has nothing to cover."""
    if not os.path.lexists(path):
        return
    if os.path.isdir(path):
        _empty(path)
        return
    mount("/dev/null", path, None, MS_BIND, None)
    setattr_(path, SEALED, recursive=False)
