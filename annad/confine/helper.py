"""The confinement helper: run as a script (``python -I -S confine_helper.py SPEC``) by the runner.

It builds the confinement with raw system calls, then runs ``bash -c`` inside it:

1. ``unshare`` mount, network, IPC, UTS and PID namespaces (and a user namespace when the
   daemon is not root: the owner's uid and gid map to themselves, so ``id -u`` is the owner).
2. Every mount becomes private, then read-only, nosuid and nodev, recursively
   (``mount_setattr(AT_RECURSIVE)``): one call covers every submount (/tmp, /run, /dev/shm…).
3. A new ``/dev``: a tmpfs holding only null, zero, full, random, urandom and tty (bind
   mounts of the real nodes, cloned before step 2 so they keep working) and the fd links;
   then made read-only. A read-only mount does not stop writes to a device node, so the
   disks, /dev/mem and the rest are simply not there.
4. For a capless-root read, an empty read-only tmpfs over ``/run`` hides the IPC sockets
   (systemd, D-Bus) that trust uid 0, and root's secrets (``masked``) are covered: a file
   by ``/dev/null`` on a ``nodev`` mount (opening it fails), a directory by an empty
   read-only tmpfs — whatever path or symlink a command reaches them by.
5. Optional throw-away tmpfs mounts (``scratch``): the only writable places, gone at exit.
6. A fork: the child is PID 1 of the new PID namespace; it mounts a fresh read-only
   ``/proc`` (only the namespace's processes), drops to the owner (groups, gid, uid), drops
   every capability (bounding set, ambient, effective/permitted/inheritable), sets
   ``PR_SET_NO_NEW_PRIVS`` (uid 0: plus a seccomp filter refusing Unix sockets), forks the
   command and reaps until it ends. When it ends the kernel
   kills whatever the command left behind in the namespace.

Nothing here falls back: any failure is reported on the status descriptor as ``E:reason``
and the command never starts. ``R`` on the status descriptor means the command is about to
be executed inside the finished confinement. Only the standard library is used (``-I -S``).
"""

from __future__ import annotations

# Only ctypes, os and sys: this runs once per check, and json, signal, pathlib and typing
# (through re and enum) would double the interpreter's start-up time.
import ctypes
import os
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MOUNT_ATTR_RDONLY = 0x1
MOUNT_ATTR_NOSUID = 0x2
MOUNT_ATTR_NODEV = 0x4
MOUNT_ATTR_NOEXEC = 0x8
AT_FDCWD = -100
AT_EMPTY_PATH = 0x1000
AT_RECURSIVE = 0x8000
OPEN_TREE_CLONE = 1
OPEN_TREE_CLOEXEC = 0o2000000
MOVE_MOUNT_F_EMPTY_PATH = 0x4
# the mount API system calls have one number on every architecture (added after 5.0)
SYS_OPEN_TREE = 428
SYS_MOVE_MOUNT = 429
SYS_MOUNT_SETATTR = 442
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_KILL_PROCESS = 0x80000000
AF_UNIX = 1
EACCES = 13
# (audit arch, socket, io_uring_setup) per machine: the filter must know the numbers
SECCOMP_ARCH = {"x86_64": (0xC000003E, 41, 425), "aarch64": (0xC00000B7, 198, 425)}
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
"""The device nodes a confined command gets: nothing that reaches hardware or memory."""
BASH = "/bin/bash"
EXIT_REFUSED = 125
SIGKILL, SIGSTOP = 9, 19

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class Refused(Exception):
    """The confinement could not be built; the command must not run."""


class Spec:
    """What to build and run, from the command line :func:`annad.confine.spec.helper_argv` wrote:
    ``-- STATUS_FD UID GID GROUPS FLAGS CWD N SCRATCH… N MASKED… N KEY=VALUE… COMMAND``."""

    def __init__(self, argv: list[str]) -> None:
        if len(argv) < 10 or argv[0] != "--":
            raise Refused("bad helper arguments")
        self.status_fd, self.uid, self.gid = int(argv[1]), int(argv[2]), int(argv[3])
        self.groups = [int(g) for g in argv[4].split(",") if g]
        self.userns, self.hide_run = "u" in argv[5], "r" in argv[5]
        self.cwd = argv[6]
        count = int(argv[7])
        self.scratch = argv[8:8 + count]
        rest = argv[8 + count:]
        count = int(rest[0])
        self.masked = rest[1:1 + count]
        rest = rest[1 + count:]
        count = int(rest[0])
        self.env = dict(item.split("=", 1) for item in rest[1:1 + count])
        self.command = rest[1 + count]
        if len(rest) != count + 2:
            raise Refused("bad helper arguments")


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise Refused(f"{what}: {os.strerror(err)}")
    return result


def _b(path: str) -> bytes:
    return os.fsencode(path)


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    _check(_libc.mount(_b(source), _b(target), None if fstype is None else _b(fstype),
                       ctypes.c_ulong(flags), None if data is None else _b(data)),
           f"mount {target}")


def _setattr(path: str, attrs: int, *, recursive: bool) -> None:
    attr = _MountAttr(attr_set=attrs, attr_clr=0, propagation=0, userns_fd=0)
    flags = AT_RECURSIVE if recursive else 0
    _check(_libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, _b(path), flags, ctypes.byref(attr),
                         ctypes.sizeof(attr)), f"read-only {path}")


def _clone_tree(path: str) -> int:
    return _check(_libc.syscall(SYS_OPEN_TREE, AT_FDCWD, _b(path),
                                OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC), f"clone {path}")


def _move_mount(fd: int, target: str) -> None:
    _check(_libc.syscall(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, _b(target), MOVE_MOUNT_F_EMPTY_PATH),
           f"attach {target}")


def _prctl(option: int, arg: int, arg3: int = 0) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(arg3), ctypes.c_ulong(0),
                       ctypes.c_ulong(0)), f"prctl {option}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _namespaces(userns: bool) -> None:
    """New namespaces; in user mode the owner maps to itself (never to root)."""
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(flags | (CLONE_NEWUSER if userns else 0)), "unshare namespaces")
    if userns:
        try:
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
            _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
        except OSError as exc:
            raise Refused(f"user namespace map: {exc.strerror}") from None


def _file_tree(spec: Spec) -> None:
    """Everything read-only; a minimal /dev; optionally /run hidden and scratch tmpfs mounts."""
    _mount("none", "/", None, MS_REC | MS_PRIVATE, None)
    clones = {name: _clone_tree(f"/dev/{name}") for name in DEVICES
              if os.path.exists(f"/dev/{name}")}  # noqa: PTH110 - start-up time
    _setattr("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, recursive=True)
    _mount("anna-dev", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
    for name, fd in clones.items():
        os.close(os.open(f"/dev/{name}", os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o666))
        _move_mount(fd, f"/dev/{name}")
        os.close(fd)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"/dev/{name}")  # noqa: PTH211 - no pathlib: start-up time
    os.mkdir("/dev/shm", 0o755)  # noqa: PTH102
    os.mkdir("/dev/pts", 0o755)  # noqa: PTH102
    _setattr("/dev", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, recursive=True)
    if spec.hide_run:
        _mount("anna-run", "/run", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
               "mode=0755,size=4k")
    for path in spec.masked:
        _mask(path)
    for path in spec.scratch:
        _mount("anna-scratch", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")


def _mask(path: str) -> None:
    """Cover one secret. Any failure refuses the command: it never runs with the secret."""
    if os.path.isdir(path):  # noqa: PTH112 - no pathlib: start-up time
        _mount("anna-mask", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
               "mode=0555,size=4k")
        return
    _mount("/dev/null", path, None, MS_BIND, None)
    _setattr(path, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
             recursive=False)


def _drop(spec: Spec, userns: bool) -> None:
    """To the owner (or capless root), no capability left anywhere, no new privileges."""
    uid, gid = spec.uid, spec.gid
    if not userns:
        os.setgroups(spec.groups)
        os.setresgid(gid, gid, gid)
    fd = os.open("/proc/sys/kernel/cap_last_cap", os.O_RDONLY | os.O_CLOEXEC)
    try:
        last = int(os.read(fd, 32))
    finally:
        os.close(fd)
    for cap in range(last + 1):
        _prctl(PR_CAPBSET_DROP, cap)
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    if not userns and uid != os.getuid():
        os.setresuid(uid, uid, uid)  # leaving uid 0 clears every capability set
    header = _CapHeader(version=LINUX_CAPABILITY_VERSION_3, pid=0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "drop capabilities")
    if os.getuid() != uid or (not userns and os.getgid() != gid):
        raise Refused("could not switch to the owner's identity")
    if uid == 0:
        _no_unix_sockets()


def _no_unix_sockets() -> None:
    """For uid 0: no ``socket(AF_UNIX)`` and no io_uring (which could make one unseen).

    Capless root still passes every peer-uid check on the far side of a Unix socket — root's
    tmux server, systemd, D-Bus, docker, an ssh-agent in /tmp — and through those it could
    get back everything it dropped. /run is hidden as well, but sockets live anywhere: so a
    root-read process cannot create one at all. Other machines: refused, not unfiltered.
    """
    machine = os.uname().machine
    if machine not in SECCOMP_ARCH:
        raise Refused(f"no socket filter for {machine}: a root read cannot be confined here")
    arch, nr_socket, nr_uring = SECCOMP_ARCH[machine]
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    deny = SECCOMP_RET_ERRNO | EACCES
    program = [
        (ld, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, SECCOMP_RET_KILL_PROCESS),
        (ld, 0, 0, 0), (jge, 5, 0, 0x40000000),  # x32 numbers on x86_64: refused
        (jeq, 4, 0, nr_uring), (jeq, 1, 0, nr_socket), (ret, 0, 0, SECCOMP_RET_ALLOW),
        (ld, 0, 0, 16), (jeq, 0, 1, AF_UNIX), (ret, 0, 0, deny), (ret, 0, 0, SECCOMP_RET_ALLOW),
    ]
    filters = (_SockFilter * len(program))(*(_SockFilter(*op) for op in program))
    prog = _SockFprog(len=len(program), filter=filters)
    _check(_libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog),
                       ctypes.c_ulong(0), ctypes.c_ulong(0)), "socket filter")


def _default_signal(signum: int) -> None:
    """Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across exec:
    restore the default in libc directly (the signal module would cost start-up time)."""
    _libc.signal(signum, ctypes.c_void_p(0))


def _exec_command(spec: Spec) -> None:
    # every catchable signal back to its default: Python ignores SIGPIPE/SIGXFSZ, and a daemon
    # started from a non-interactive shell's background job inherits SIGINT/SIGQUIT ignored —
    # a command must see the dispositions a login shell would give it
    for signum in range(1, 32):
        if signum not in (SIGKILL, SIGSTOP):
            _default_signal(signum)
    try:
        os.chdir(spec.cwd or "/")
    except OSError:
        os.chdir("/")
    os.write(spec.status_fd, b"R")
    os.execve(BASH, [BASH, "--noprofile", "--norc", "-c", spec.command], spec.env)  # noqa: S606


def _init(spec: Spec, report_fd: int) -> int:
    """PID 1 of the new namespace: fresh /proc, drop privileges, run the command, reap.

    It needs no signal handler: when the helper outside is killed (timeout, cancel) the
    parent-death signal kills this init, and with it everything in the namespace.
    """
    parent = os.getppid()
    _prctl(PR_SET_PDEATHSIG, SIGKILL)
    if os.getppid() != parent:
        return 1  # the helper died before the death signal was armed
    _mount("proc", "/proc", "proc", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
    _drop(spec, spec.userns)
    command = os.fork()
    if command == 0:
        os.close(report_fd)
        _exec_command(spec)
    os.close(spec.status_fd)
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == command:
            os.write(report_fd, str(status).encode())
            return 0


def _finish(child: int, report_fd: int) -> int:
    """Outside the PID namespace: wait for its init and exit as the command did."""
    _, status = os.waitpid(child, 0)
    raw = os.read(report_fd, 64)
    if not raw:
        return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + SIGKILL
    code = os.waitstatus_to_exitcode(int(raw))
    if code < 0:
        _default_signal(-code)
        os.kill(os.getpid(), -code)
    return code


def main(argv: list[str]) -> int:
    """Build the confinement described by ``argv`` and run its command there."""
    try:
        spec = Spec(argv[1:])
    except (Refused, ValueError, IndexError):
        return EXIT_REFUSED  # no status descriptor to report on: the runner says "ended"
    os.set_inheritable(spec.status_fd, False)  # the command must not hold it open
    try:
        _namespaces(spec.userns)
        _file_tree(spec)
        report_r, report_w = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(report_r)
            try:
                os._exit(_init(spec, report_w))
            except (Refused, OSError, ValueError) as exc:
                os.write(spec.status_fd, f"E:{exc}".encode())
                os._exit(EXIT_REFUSED)
        os.close(report_w)
        os.close(spec.status_fd)
        return _finish(child, report_r)
    except (Refused, OSError, ValueError) as exc:
        os.write(spec.status_fd, f"E:{exc}".encode())
        return EXIT_REFUSED


if __name__ == "__main__":
    sys.exit(main(sys.argv))
