"""The confinement helper: one process that serves every confined command of a session.

Run by :mod:`annad.confine.session` as ``python -I -S helper.py -- SOCK_FD …`` (the argument
list is :func:`annad.confine.spec.helper_argv`'s). It builds the confined view once (a new
mount namespace, :func:`annad.confine.mounts.file_tree`; the machine's PID and network
namespaces are kept), says ``S`` on its socket, and then, for each request (``cwd``,
command, limits and environment, with the descriptor the output goes to):

1. forks; the child joins the run's cgroup (:mod:`annad.confine.cgroups`: the descriptors
   after the output's), starts its own session, takes the output descriptor as stdout and
   stderr and /dev/null as stdin, puts up the walls (:func:`annad.confine.walls.enclose`:
   limits, identity, no capabilities, no_new_privs, Landlock, seccomp) and executes
   ``bash --noprofile --norc -c COMMAND``;
2. answers ``R<pid>`` once the command runs, or ``E:reason`` when a wall could not be put up
   (the command never ran);
3. when the command has ended, kills whatever it left behind — the helper is a child
   subreaper, so every orphan of the run is its child — and answers ``X<wait status>``.

One request at a time. The serving (:func:`serve`, :func:`serve_one`, :func:`reap_all`) is
shared with the capture helper (:mod:`annad.capture.helper`), whose children build
a capture instead of the walls. When its socket closes (the daemon ended or dropped the session) the
helper kills what runs and exits. Nothing falls back: a failure to build the view is ``E:``
on the socket before anything runs. Standard library only (``-I -S``: fast start, nothing
from site-packages); the seccomp program arrives compiled, as hex.
"""

# ruff: noqa: PTH100, PTH120 - no pathlib: start-up time of the -I -S helpers

from __future__ import annotations

import _socket
import os
import select
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from annad.confine import landlock, mounts, walls

TYPE_CHECKING = False  # typing costs start-up time; mypy reads the block below
if TYPE_CHECKING:
    from collections.abc import Callable

    Child = Callable[[int, int], None]
    """A forked child's work: ``(out, status_w)``; it executes the command or reports."""

BASH = "/bin/bash"
EXIT_REFUSED = 125
CHILDREN = "/proc/self/task/{}/children"
MAX_FDS = 4
"""Descriptors a request may carry: its output, and the run's ``cgroup.procs`` (v1: two)."""


class Spec:
    """The session, from the command line :func:`annad.confine.spec.helper_argv` wrote:
    ``-- SOCK UID GID GROUPS FLAGS ABI N MASKED… N SCRATCH… N BUS… FILTER_HEX``."""

    def __init__(self, argv: list[str]) -> None:
        if len(argv) < 11 or argv[0] != "--":
            raise mounts.Refused("bad helper arguments")
        self.sock, self.uid, self.gid = int(argv[1]), int(argv[2]), int(argv[3])
        self.groups = [int(g) for g in argv[4].split(",") if g]
        self.userns, self.hide_run, self.bus_view = "u" in argv[5], "r" in argv[5], \
            "b" in argv[5]
        self.abi = int(argv[6])
        rest = argv[7:]
        lists = []
        for _ in range(3):
            count = int(rest[0])
            lists.append(rest[1:1 + count])
            rest = rest[1 + count:]
        self.masked, self.scratch, self.bus = lists
        if len(rest) != 1:
            raise mounts.Refused("bad helper arguments")
        self.program = bytes.fromhex(rest[0])


class Request:
    """One command: ``cwd\\0command\\0memory\\0processes\\0cpu\\0KEY=VALUE…``."""

    def __init__(self, data: bytes) -> None:
        fields = data.decode("utf-8", "surrogateescape").split("\0")
        self.cwd, self.command = fields[0], fields[1]
        self.limits = walls.Limits(int(fields[2]), int(fields[3]), int(fields[4]))
        self.env = dict(item.split("=", 1) for item in fields[5:] if "=" in item)


def as_run(out: int, cgroup: list[int] | tuple[()] = ()) -> None:
    """A forked child's first steps, before anything of the run: join the run's cgroup
    (``cgroup``: its ``cgroup.procs`` descriptors, so every process of the run is counted),
    a session of its own, /dev/null as stdin and ``out`` as stdout and stderr. Shared by
    the confinement, capture and preview helpers' children."""
    for fd in cgroup:
        os.write(fd, b"0")
        os.close(fd)
    os.setsid()
    devnull = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
    os.dup2(devnull, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)


def _child(spec: Spec, request: Request, out: int, status_w: int, cgroup: list[int]) -> None:
    """In the forked child: its cgroup, the walls, then bash. Never returns."""
    try:
        as_run(out, cgroup)
        walls.prctl(walls.PR_SET_PDEATHSIG, walls.SIGKILL)  # the helper's death ends it
        walls.enclose(uid=spec.uid, gid=spec.gid, groups=spec.groups, userns=spec.userns,
                      limits=request.limits, program=spec.program,
                      writable_files=mounts.DISCARDING, writable_trees=tuple(spec.scratch),
                      required_abi=spec.abi, per_uid=not cgroup)
        try:
            os.chdir(request.cwd or "/")
        except OSError:
            os.chdir("/")
        os.execve(BASH, [BASH, "--noprofile", "--norc", "-c", request.command],  # noqa: S606
                  request.env)
    except BaseException as exc:
        os.write(status_w, f"E:{exc}".encode())
    os._exit(EXIT_REFUSED)


def _children() -> list[int]:
    # bytes only: after the masks the interpreter's own files may be hidden (a Python under
    # /root), so nothing may need a lazily imported codec or module once the view is built
    try:
        fd = os.open(CHILDREN.format(os.getpid()), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        data = b""
        while chunk := os.read(fd, 65536):
            data += chunk
    finally:
        os.close(fd)
    return [int(p) for p in data.split()]


def reap_all() -> None:
    """Kill and reap every child (the subreaper's orphans included) until none is left."""
    while True:
        kids = _children()
        for pid in kids:
            try:  # noqa: SIM105 - contextlib would cost start-up time
                os.kill(pid, walls.SIGKILL)
            except ProcessLookupError:
                pass
        reaped = False
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                break
            reaped = True
        if not kids and not reaped:
            select.select([], [], [], 0.001)  # a dying child: let it become a zombie


def serve_one(sock: _socket.socket, out: int, start: Child, extra: list[int]) -> bool:
    """Run one request: ``start(out, status_w)`` in a forked child (it sets up and executes
    the command, or writes ``E:reason`` to ``status_w``; ``extra``, the request's other
    descriptors, are the child's: the parent closes them); False when the socket closed
    meanwhile (stop serving)."""
    status_r, status_w = os.pipe2(os.O_CLOEXEC)
    child = os.fork()
    if child == 0:
        sock.close()
        os.close(status_r)
        start(out, status_w)
        os._exit(EXIT_REFUSED)
    os.close(out)
    for fd in extra:
        os.close(fd)
    os.close(status_w)
    refusal = b""
    while chunk := os.read(status_r, 4096):
        refusal += chunk
    os.close(status_r)
    if refusal.startswith(b"E:"):  # the one answer to this request: no "X" follows
        os.waitpid(child, 0)
        reap_all()
        sock.send(refusal)
        return True
    sock.send(b"R%d" % child)
    pidfd = os.pidfd_open(child)
    alive = True
    try:
        while pidfd not in select.select([pidfd, sock.fileno()], [], [])[0]:
            # a message while it runs asks for a stop; the socket closing (the daemon is
            # gone, or dropped the session) stops it too, and ends the serving
            alive = alive and bool(sock.recv(16))
            try:
                os.killpg(child, walls.SIGKILL)
            except ProcessLookupError:
                os.kill(child, walls.SIGKILL)
            if not alive:
                break
        _, status = os.waitpid(child, 0)
    finally:
        os.close(pidfd)
    reap_all()
    if alive:
        sock.send(b"X%d" % status)
    return alive


def serve(sock: _socket.socket, prepare: Callable[[bytes, list[int]], Child]) -> None:
    """Answer requests until the socket closes; ``prepare(data, extra)`` gives the child of
    one request (``extra``: the descriptors after the output one; ValueError, IndexError,
    KeyError, TypeError: a bad request, answered ``E:``)."""
    space = _socket.CMSG_SPACE(4 * MAX_FDS)
    while True:
        data, ancillary, _, _ = sock.recvmsg(1 << 20, space)
        fds = [int.from_bytes(item[2][i:i + 4], sys.byteorder) for item in ancillary
               if item[0] == _socket.SOL_SOCKET and item[1] == _socket.SCM_RIGHTS
               for i in range(0, len(item[2]) - 3, 4)]
        for fd in fds:
            os.set_inheritable(fd, False)  # received descriptors are not close-on-exec
        if not data:
            return
        try:
            if not fds:
                raise ValueError("bad request")
            start = prepare(data, fds[1:])
        except (ValueError, IndexError, KeyError, TypeError) as exc:
            for fd in fds:
                os.close(fd)
            sock.send(f"E:{exc or 'bad request'}".encode())
            continue
        if not serve_one(sock, fds[0], start, fds[1:]):
            return


def main(argv: list[str]) -> int:
    """Build the view ``argv`` describes, then serve its commands."""
    try:
        spec = Spec(argv[1:])
    except (mounts.Refused, ValueError, IndexError):
        return EXIT_REFUSED  # nothing to report on: the session says "ended"
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET, 0, spec.sock)
    os.set_inheritable(spec.sock, False)  # no command may hold it
    try:
        abi = landlock.abi_version()
        if abi < spec.abi:
            raise landlock.Unavailable(f"this kernel's Landlock ABI is {abi}; confinement "
                                       f"needs ABI >= {spec.abi}")
        # no parent-death signal here: it would follow the daemon *thread* that started the
        # session; the socket closing is what ends a session (and kills what it runs)
        walls.prctl(walls.PR_SET_CHILD_SUBREAPER, 1)
        mounts.namespaces(mounts.CLONE_NEWNS | mounts.CLONE_NEWIPC | mounts.CLONE_NEWUTS,
                          spec.userns)
        mounts.file_tree(hide_run=spec.hide_run, masked=spec.masked, scratch=spec.scratch,
                         bus=spec.bus if spec.bus_view else None)
    except (mounts.Refused, landlock.Unavailable, OSError, ValueError) as exc:
        sock.send(f"E:{exc}".encode())
        return EXIT_REFUSED
    sock.send(b"S")

    def prepare(data: bytes, cgroup: list[int]) -> Child:
        if spec.uid == 0 and not cgroup:  # the kernel counts no uid-0 processes
            raise ValueError("a uid-0 run needs a cgroup of its own")
        request = Request(data)
        return lambda out, status_w: _child(spec, request, out, status_w, cgroup)

    try:
        serve(sock, prepare)
    finally:
        reap_all()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
