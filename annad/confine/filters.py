"""The seccomp filters of unasked commands, built by libseccomp (through ``pyseccomp``).

The daemon builds each filter once and hands the helpers the compiled BPF program (bytes);
the helpers, which run as ``python -I -S`` with the standard library only, load it with one
``prctl``. So no site directory is put on the helpers' path, and libseccomp — which knows
every architecture's system call numbers, the audit-arch check and x32's numbers — writes
the program, not a hand-assembled list. Refused calls fail with ``EPERM`` (``EAFNOSUPPORT``
for socket families, ``EACCES`` for a Unix socket), so a program prints an error instead of
dying.

What every filter refuses:

- sockets other than ``AF_UNIX`` and ``AF_NETLINK`` (no inet, inet6, packet, …: no TCP, UDP
  or DNS); netlink only ``NETLINK_ROUTE`` and ``NETLINK_SOCK_DIAG``, what ``ip`` and ``ss``
  read with (changing a route needs ``CAP_NET_ADMIN``, which no run has);
- ``AF_UNIX`` sockets too, unless the variant allows them (a read verb that must talk to
  systemd or D-Bus; its mount view then holds only those sockets);
- keyrings, ptrace and ``process_vm_*``, mounts of every API, ``unshare``, ``setns``, new
  namespaces through ``clone`` flags (``clone3`` says ENOSYS, so libc falls back to
  ``clone``, whose flags a filter can see), ``bpf``, io_uring, ``perf_event_open``,
  ``userfaultfd``, modules, kexec, reboot, swap, ``acct``, ``chroot``, ``pivot_root``;
  new SysV IPC objects and POSIX message queues (they would outlive the run);
- changing another process's priority, scheduling, affinity or limits (only its own).
"""

from __future__ import annotations

import errno
import os
from functools import cache
from typing import Any

DENIED_CALLS = (
    "keyctl", "add_key", "request_key", "ptrace", "process_vm_readv", "process_vm_writev",
    "pidfd_getfd", "process_madvise", "kcmp", "mount", "umount2", "mount_setattr",
    "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "pivot_root",
    "chroot", "unshare", "setns", "bpf", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "perf_event_open", "userfaultfd", "init_module", "finit_module",
    "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff", "acct",
    "quotactl", "open_by_handle_at", "name_to_handle_at", "lookup_dcookie", "syslog",
    "personality", "migrate_pages", "move_pages", "shmget", "msgget", "semget", "mq_open",
)
"""System calls no unasked command makes. SysV IPC and POSIX message queues are refused too:
their objects outlive the run in the helper's IPC namespace (and the next run of the same
confinement would find them), and their memory is not counted by RLIMIT_DATA."""
AF_UNIX, AF_NETLINK = 1, 16
NETLINK_ROUTE, NETLINK_SOCK_DIAG = 0, 4
FAMILIES = 64
"""Socket families judged one by one; the kernel refuses any at or above AF_MAX (< 64)."""
NETLINK_PROTOCOLS = 32
"""Netlink protocols judged one by one (MAX_LINKS)."""
CLONE_NEW = (0x00000080, 0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000,
             0x20000000, 0x40000000)
"""CLONE_NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET."""
LOW32 = 0xFFFFFFFF
"""Integer arguments are compared on their low 32 bits: the kernel ignores the rest."""
OTHER_PROCESS = (("setpriority", 1), ("ioprio_set", 1), ("prlimit64", 0),
                  ("sched_setaffinity", 0), ("sched_setscheduler", 0), ("sched_setparam", 0),
                  ("sched_setattr", 0))
"""(call, argument index of the target): allowed on the caller only (target 0); the
capture's filter (:mod:`annad.confine.capture_filter`) refuses the same."""


class FilterUnavailable(Exception):
    """libseccomp (or its Python binding) is missing: no unasked command may run."""


@cache
def compiled(*, unix: bool) -> bytes:
    """The BPF program (``struct sock_filter`` array) of the filter; ``unix`` keeps AF_UNIX.

    Raises :class:`FilterUnavailable` with the reason when it cannot be built.
    """
    sc = binding()
    try:
        filt = sc.SyscallFilter(sc.ALLOW)
        filt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
        deny = sc.ERRNO(errno.EPERM)
        for name in DENIED_CALLS:
            filt.add_rule(deny, name)
        filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        for flag in CLONE_NEW:
            filt.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        for name, index in OTHER_PROCESS:
            # a target other than 0 (the caller); upper bits set only make it refuse more
            filt.add_rule(deny, name, sc.Arg(index, sc.NE, 0))
        _sockets(sc, filt, unix=unix)
        return export(filt)
    except OSError as exc:
        raise FilterUnavailable(f"the seccomp filter could not be built: {exc}") from None


def binding() -> Any:
    """pyseccomp (PyPI, the daemon's dependency) or libseccomp's own binding (``seccomp``:
    Debian's python3-seccomp, Arch's python-libseccomp) — the same API over the same C
    library; a system Python without the first still builds the same filter."""
    try:
        import pyseccomp  # type: ignore[import-untyped]
    except (ImportError, RuntimeError, OSError) as first:
        try:
            import seccomp  # type: ignore[import-not-found]
        except ImportError:
            raise FilterUnavailable(f"no seccomp filter can be built: neither pyseccomp "
                                    f"({first}) nor libseccomp's seccomp module") from None
        return seccomp
    return pyseccomp


def _sockets(sc: Any, filt: Any, *, unix: bool) -> None:
    """socket(2): families and netlink protocols outside the allowed ones are refused."""
    no_family = sc.ERRNO(errno.EAFNOSUPPORT)
    for family in range(FAMILIES):
        if family not in (AF_NETLINK, AF_UNIX):
            filt.add_rule(no_family, "socket", sc.Arg(0, sc.MASKED_EQ, LOW32, family))
    if not unix:  # "Permission denied": the socket exists, this run may not have one
        filt.add_rule(sc.ERRNO(errno.EACCES), "socket", sc.Arg(0, sc.MASKED_EQ, LOW32, AF_UNIX))
    for protocol in range(NETLINK_PROTOCOLS):
        if protocol not in (NETLINK_ROUTE, NETLINK_SOCK_DIAG):
            filt.add_rule(no_family, "socket",
                          sc.Arg(0, sc.MASKED_EQ, LOW32, AF_NETLINK),
                          sc.Arg(2, sc.MASKED_EQ, LOW32, protocol))


def export(filt: Any) -> bytes:
    """A built filter as its BPF program (the bytes a helper loads with one ``prctl``)."""
    fd = os.memfd_create("anna-seccomp", os.MFD_CLOEXEC)
    with os.fdopen(fd, "w+b") as handle:
        filt.export_bpf(handle)
        handle.seek(0)
        return handle.read()
