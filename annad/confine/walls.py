"""The walls a confined command gets in its own process, just before ``exec`` (stdlib only).

In order: limits (address space, processes, CPU time, no core files); the identity (groups,
gid, uid) with every capability dropped except ``keep`` (a previewed root step keeps the file
capabilities); ``PR_SET_NO_NEW_PRIVS`` (a setuid or file-capability binary gains nothing);
Landlock (:mod:`annad.confine.landlock`: no writes outside ``writable``, no TCP, signals and
abstract sockets scoped to this run); the seccomp program the daemon compiled
(:mod:`annad.confine.filters`). Any failure raises and the command never starts.
"""

# ruff: noqa: PTH116 - no pathlib: start-up time of the -I -S helpers

from __future__ import annotations

import ctypes
import os
import resource

from annad.confine import landlock
from annad.confine.mounts import Refused, check, libc

PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
LINUX_CAPABILITY_VERSION_3 = 0x20080522
SIGKILL, SIGSTOP = 9, 19


class Limits:
    """Per-run resource limits (set as both soft and hard limit)."""

    def __init__(self, memory: int, processes: int, cpu_s: int) -> None:
        self.memory, self.processes, self.cpu_s = memory, processes, cpu_s
        """Allocated memory per process (bytes, RLIMIT_DATA; 4x as address space); new
        processes beyond those the uid already has; CPU seconds per process."""


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def prctl(option: int, arg: int, arg3: int = 0) -> None:
    """prctl(2), refusing on failure."""
    check(libc.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(arg3), ctypes.c_ulong(0),
                     ctypes.c_ulong(0)), f"prctl {option}")


def tasks_of(uid: int) -> int:
    """Tasks (threads) the uid has now: what RLIMIT_NPROC counts (one stat per process:
    procfs gives ``task/`` two links plus one per thread)."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += max(os.stat(f"/proc/{entry.name}/task").st_nlink - 2, 1)
            except OSError:
                continue
    return count


def _limit(which: int, value: int) -> None:
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def set_limits(limits: Limits, uid: int, tasks: int | None = None, *, per_uid: bool = True
               ) -> None:
    """Memory, processes, CPU time, no core dumps. uid 0 is exempt from RLIMIT_NPROC in the
    kernel: its runs are bounded by their cgroup (:mod:`annad.confine.cgroups`). ``tasks``:
    what the uid runs machine-wide, counted before a new PID namespace hid it. ``per_uid``
    False: the run's own cgroup counts its processes, no RLIMIT_NPROC (nor its /proc scan)."""
    # RLIMIT_DATA counts what a program allocates (heap, private writable maps) and not what
    # it only reserves or maps from files (Go's arenas, journalctl's journal files); the
    # address space gets a looser cap as a backstop
    _limit(resource.RLIMIT_DATA, limits.memory)
    _limit(resource.RLIMIT_AS, limits.memory * 4)
    _limit(resource.RLIMIT_CPU, limits.cpu_s)
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_FSIZE, limits.memory)  # a memfd grows no larger either
    if uid != 0 and per_uid:
        _limit(resource.RLIMIT_NPROC, (tasks_of(uid) if tasks is None else tasks)
               + limits.processes)


def bound_capabilities(keep: tuple[int, ...]) -> None:
    """Every capability but ``keep`` out of the bounding set, and no ambient ones."""
    fd = os.open("/proc/sys/kernel/cap_last_cap", os.O_RDONLY | os.O_CLOEXEC)
    try:
        last = int(os.read(fd, 32))
    finally:
        os.close(fd)
    for cap in range(last + 1):
        if cap not in keep:
            prctl(PR_CAPBSET_DROP, cap)
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)


def set_capabilities(keep: tuple[int, ...]) -> None:
    """The effective and permitted sets exactly ``keep`` (none inheritable)."""
    header = _CapHeader(version=LINUX_CAPABILITY_VERSION_3, pid=0)
    data = (_CapData * 2)()
    data[0].effective = data[0].permitted = sum(1 << cap for cap in keep)
    check(libc.capset(ctypes.byref(header), ctypes.byref(data)), "capabilities")


def drop(uid: int, gid: int, groups: list[int], *, userns: bool, keep: tuple[int, ...] = ()
         ) -> None:
    """To ``uid``/``gid``/``groups``, no capability but ``keep``, no new privileges."""
    if not userns:
        os.setgroups(groups)
        os.setresgid(gid, gid, gid)
    bound_capabilities(keep)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    if not userns and uid != os.getuid():
        os.setresuid(uid, uid, uid)  # leaving uid 0 clears every capability set
    set_capabilities(keep)
    if os.getuid() != uid or (not userns and os.getgid() != gid):
        raise Refused("could not switch to the owner's identity")


def load_filter(program: bytes) -> None:
    """Install a compiled seccomp program (needs no_new_privs, set by :func:`drop`)."""
    if not program or len(program) % 8:
        raise Refused("no seccomp program")
    buffer = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len=len(program) // 8, filter=ctypes.cast(buffer, ctypes.c_void_p))
    check(libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog),
                     ctypes.c_ulong(0), ctypes.c_ulong(0)), "seccomp filter")


def default_signals() -> None:
    """Every catchable signal back to its default: Python ignores SIGPIPE/SIGXFSZ, and an
    ignored signal stays ignored across exec (a command must see what a shell gives it)."""
    for signum in range(1, 32):
        if signum not in (SIGKILL, SIGSTOP):
            libc.signal(signum, ctypes.c_void_p(0))


def enclose(*, uid: int, gid: int, groups: list[int], userns: bool, limits: Limits,
            program: bytes, writable_files: tuple[str, ...],
            writable_trees: tuple[str, ...] = (), keep: tuple[int, ...] = (),
            required_abi: int = landlock.REQUIRED_ABI, tasks: int | None = None,
            per_uid: bool = True) -> None:
    """All the walls, in the order the module docstring gives."""
    set_limits(limits, uid, tasks, per_uid=per_uid)
    drop(uid, gid, groups, userns=userns, keep=keep)
    landlock.restrict(writable_files, writable_trees, required=required_abi)
    load_filter(program)
    default_signals()
