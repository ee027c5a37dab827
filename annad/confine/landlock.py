"""A small ctypes binding of Landlock: no writes, no TCP, signals and abstract sockets scoped.

Why not a library: the PyPI ``landlock`` package (1.0.0.dev5) covers file-system rights only
(no TCP rights, ABI 4; no scoping, ABI 6), and it quietly drops the rights a kernel does not
know — the opposite of what Anna needs, where a kernel without a wall refuses the run. The
three system calls and two structures below are all Landlock is; this module is imported by
the confinement helpers, which run as ``python -I -S`` (standard library only, fast start).

:func:`restrict` handles every write right the kernel's ABI has and every TCP right, and
scopes signals and abstract Unix sockets to the calling process's new domain: afterwards the
process and everything it starts can write only beneath the ``writable`` paths (``/dev/null``
for a check; a preview's overlays), cannot bind or connect a TCP socket, and can signal and
reach abstract sockets only of processes in its own domain (or domains nested in it).
"""

from __future__ import annotations

import ctypes
import os

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
"""Landlock's system calls have one number on every architecture."""
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
REQUIRED_ABI = 6
"""TCP rights arrived in ABI 4, device ioctls in 5, signal and abstract-socket scoping in 6."""

FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_REMOVE_DIR, FS_REMOVE_FILE, FS_MAKE_CHAR, FS_MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
FS_MAKE_REG, FS_MAKE_SOCK, FS_MAKE_FIFO, FS_MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
FS_MAKE_SYM, FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15
WRITES = (FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR
          | FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM | FS_REFER
          | FS_TRUNCATE | FS_IOCTL_DEV)
"""Every right that changes something (device ioctls included): all handled, none granted
except beneath the writable paths."""
FILE_WRITES = FS_WRITE_FILE | FS_TRUNCATE
"""The write rights a rule on a single file (``/dev/null``) may carry."""
TREE_WRITES = WRITES & ~(FS_MAKE_CHAR | FS_MAKE_BLOCK | FS_IOCTL_DEV)
"""What a preview may do beneath its overlays: everything but device nodes and ioctls."""
ENTRY_WRITES = TREE_WRITES & ~(FS_WRITE_FILE | FS_TRUNCATE)
"""What a captured step may do beneath a directory that holds a walled mount (the root, which
holds ``/run``, ``/proc``, ``/sys``, ``/dev``): make, remove and rename entries (on the
read-only mounts below the kernel refuses that anyway, ``EROFS``) but open nothing for
writing — a read-only mount does not stop a write into a FIFO or device node on it."""
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class Unavailable(Exception):
    """The kernel lacks a Landlock feature a guarantee needs: the run must not start."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is absent or disabled."""
    result = _libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                           ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(int(result), 0)


def _fail(what: str) -> Unavailable:
    return Unavailable(f"landlock {what}: {os.strerror(ctypes.get_errno())}")


def restrict(writable_files: tuple[str, ...] = (), writable_trees: tuple[str, ...] = (),
             *, required: int = REQUIRED_ABI) -> None:
    """Put the calling thread (and all it starts) in a new Landlock domain.

    ``writable_files`` get :data:`FILE_WRITES`, ``writable_trees`` :data:`TREE_WRITES`
    beneath them; nothing else may be written, no TCP socket bound or connected, no signal
    or abstract Unix socket reach a process outside the domain. Raises :class:`Unavailable`
    when the ABI is below ``required`` (tests raise it to see the refusal) or a call fails;
    the caller must then not run the command. Needs ``PR_SET_NO_NEW_PRIVS`` first.
    """
    abi = abi_version()
    if abi < required:
        raise Unavailable(f"this kernel's Landlock ABI is {abi}; confinement needs ABI "
                          f">= {required} (no-write, TCP and signal/abstract-socket scoping)")
    attr = _RulesetAttr(handled_access_fs=WRITES, handled_access_net=NET_BIND_TCP |
                        NET_CONNECT_TCP, scoped=SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL)
    ruleset = _libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr),
                            ctypes.c_uint32(0))
    if ruleset < 0:
        raise _fail("ruleset")
    try:
        for paths, rights in ((writable_files, FILE_WRITES), (writable_trees, TREE_WRITES)):
            for path in paths:
                _allow(int(ruleset), path, rights)
        if _libc.syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) < 0:
            raise _fail("restrict")
    finally:
        os.close(int(ruleset))


def scope_only(*, required: int = REQUIRED_ABI) -> None:
    """Put the calling thread (and all it starts) in a new Landlock domain that handles no
    file or TCP right but scopes signals and abstract Unix sockets to the domain — and, as
    every domain does, keeps processes outside it from being traced or read through
    ``/proc/PID`` (``root``, ``cwd``, ``fd``, ``environ``, ``mem``). Raises
    :class:`Unavailable` as :func:`restrict` does. Needs ``PR_SET_NO_NEW_PRIVS`` or
    ``CAP_SYS_ADMIN``."""
    _enter(0, (), required=required, what="a scoped domain")


def wall_files(files: tuple[str, ...], trees: tuple[str, ...], entries: tuple[str, ...], *,
               required: int = REQUIRED_ABI) -> None:
    """A captured step's domain: :func:`scope_only`'s scoping, and every write right handled
    (no TCP right: a file step may download what it writes). ``files`` get
    :data:`FILE_WRITES`, ``trees`` :data:`TREE_WRITES` beneath them, ``entries``
    :data:`ENTRY_WRITES`; nothing else may be opened for writing, made or removed — so a
    FIFO or device node outside the step's overlays (the real ``/run`` is bound read-only,
    which does not stop a write into a FIFO there) is refused with ``EACCES``, whichever
    program opens it. Raises :class:`Unavailable` as :func:`restrict` does."""
    rules = tuple((path, FILE_WRITES) for path in files) + \
        tuple((path, TREE_WRITES) for path in trees) + \
        tuple((path, ENTRY_WRITES) for path in entries)
    _enter(WRITES, rules, required=required, what="a captured step")


def _enter(handled_fs: int, rules: tuple[tuple[str, int], ...], *, required: int,
           what: str) -> None:
    abi = abi_version()
    if abi < required:
        raise Unavailable(f"this kernel's Landlock ABI is {abi}; {what} needs ABI "
                          f">= {required} (signals and abstract sockets scoped to the step)")
    attr = _RulesetAttr(handled_access_fs=handled_fs, handled_access_net=0,
                        scoped=SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL)
    ruleset = _libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr),
                            ctypes.c_uint32(0))
    if ruleset < 0:
        raise _fail("ruleset")
    try:
        for path, rights in rules:
            _allow(int(ruleset), path, rights)
        if _libc.syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) < 0:
            raise _fail("restrict")
    finally:
        os.close(int(ruleset))


def _allow(ruleset: int, path: str, rights: int) -> None:
    """One rule: ``rights`` beneath ``path`` (opened O_PATH; a missing path is an error).

    A path this thread may not even reach (EACCES: a file system mounted beneath another
    user's 0700 directory, which an owner's step meets among the machine's writable mounts)
    gets no rule: the rule could only allow writes there, and the step cannot reach it anyway.
    Refusing the whole run for it failed an owner's preview whenever such a mount existed.
    A path gone since it was listed (ENOENT: a mount unmounted between reading the mount
    table and this rule, as another program's scratch tmpfs is) gets none either, for the
    same reason: a rule only grants, and there is nothing left to grant. Refusing the run
    failed a preview whenever a mount went away beside it (seen in a suite run in a pair)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except (PermissionError, FileNotFoundError):
        return
    except OSError as exc:
        raise Unavailable(f"landlock rule for {path}: {exc.strerror}") from None
    try:
        rule = _PathBeneath(allowed_access=rights, parent_fd=fd)
        if _libc.syscall(SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH),
                         ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
            raise _fail(f"rule for {path}")
    finally:
        os.close(fd)
