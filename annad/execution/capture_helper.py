"""The capture helper: runs approved steps with their file writes captured (a script).

Started by :func:`annad.confine.capture_run.run_capture` as ``python -I -S capture_helper.py --
SOCK_FD`` and kept for the steps that follow (:class:`annad.confine.session.Pool`, as the
confinement helper is: an interpreter's start-up is paid once per plan, not once per step).
It says ``S`` on its socket and then serves one request at a time with the confinement
helper's loop (:func:`annad.confine.helper.serve`: a forked child per step, ``R<pid>``, the
helper a child subreaper that kills everything the step left, ``X<wait status>``; its socket
closing — the daemon ended — kills the step). A request is the step's spec (JSON) and the
descriptor its output goes to. The daemon decided the mount plan
(:mod:`annad.execution.capture`); the child only carries it out, in a new **mount**
namespace of its own (the PID and network namespaces stay the machine's: the step was
approved, ``systemctl status`` or ``ss`` must tell the truth):

1. every mount becomes private (nothing propagates back to the machine);
2. a new root is assembled at ``root`` (an empty directory on the state disk): each real,
   writable file system gets an overlay whose lower layer is the real one and whose upper
   and work directories are ``layers/N/u`` and ``layers/N/w`` on the state disk — fresh for
   every step — with the preview's options (:data:`annad.preview.overlay_helper.OPTIONS`:
   the upper layer holds complete files and plain directories); ``/proc``, ``/sys`` and
   ``/run`` are the real ones, read-only (a write there would not be captured, so it
   fails); ``/dev`` is the minimal one of the confinement (no disk, no memory device: a
   device write is not a file change);
3. ``pivot_root`` into it and the old root detached, so no path reaches the real tree;
4. the walls of :mod:`annad.confine.capture_walls`: what acts on the running system other
   than through files is refused by the kernel (signals and abstract sockets scoped to the
   step, its own IPC namespace, the seccomp program the daemon compiled — no Unix socket
   client, no clock, no keyring, no mount —, and only the capabilities changing files needs
   left in the bounding set); a user-scope step becomes its owner;
5. ``bash -c`` is executed in this very process.

When the last process of the namespace has ended (the helper killed and reaped them all
before its ``X``), the overlays are gone and the upper layers stay on the state disk: they
are the step's change set, read back by the daemon. Any failure before the command is
reported as ``E:reason``; nothing falls back to running live.
"""

# ruff: noqa: PTH101, PTH103, PTH110 - no pathlib: start-up time
from __future__ import annotations

import _socket
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # noqa: PTH100, PTH120
from annad.confine import capture_walls, helper, mounts, walls
from annad.preview.overlay_helper import OPTIONS

READ_ONLY = mounts.MOUNT_ATTR_RDONLY | mounts.MOUNT_ATTR_NOSUID | mounts.MOUNT_ATTR_NODEV
EXIT_REFUSED = 125
"""The exit status when the capture could not be built (the confinement helper's)."""
BASH = "/bin/bash"


def _overlay(index: int, point: str, root: str, layers: str) -> None:
    upper, work = f"{layers}/{index}/u", f"{layers}/{index}/w"
    os.makedirs(upper, mode=0o700)
    os.makedirs(work, mode=0o700)
    info = mounts.overlay_point(point, root + point)
    if info is None:
        return  # gone since the daemon read the mount table: the parent's layer captures it
    # the merged root shows the upper's owner and mode: those of the real directory
    os.chown(upper, info.st_uid, info.st_gid)
    os.chmod(upper, info.st_mode & 0o7777)
    mounts.mount("anna-capture", root + point, "overlay", 0,
              f"lowerdir={point},upperdir={upper},workdir={work},{OPTIONS}")


def _assemble(spec: dict[str, object]) -> None:
    root, layers = str(spec["root"]), str(spec["layers"])
    mounts.mount("none", "/", None, mounts.MS_REC | mounts.MS_PRIVATE, None)
    for op in list(spec["plan"]):  # type: ignore[call-overload]
        kind, point = str(op[0]), str(op[1])
        if kind == "overlay":
            _overlay(int(op[2]), point, root, layers)
        elif kind == "dev":  # the confinement's, with a writable /dev/shm of its own
            mounts.minimal_dev(root + "/dev", mounts.device_clones(), shm=True)
        elif os.path.exists(root + point):  # a mount point the new tree does not show
            mounts.mount(point, root + point, None, mounts.MS_BIND | mounts.MS_REC, None)
            mounts.setattr_(root + point, READ_ONLY, recursive=True)
    mounts.pivot_into(root)


def _become(spec: dict[str, object]) -> None:
    """The step's identity: root with the file capabilities only, anyone else as themselves."""
    uid, gid = int(str(spec["uid"])), int(str(spec["gid"]))
    capture_walls.keep_file_capabilities(uid)
    if uid == 0:
        return
    os.setgroups([int(g) for g in list(spec["groups"])])  # type: ignore[call-overload]
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.getgid() != gid:
        raise mounts.Refused("could not switch to the step's identity")


def _child(spec: dict[str, object], out: int, status_w: int) -> None:
    """In the forked child: its own session and output, the capture, the identity, bash."""
    try:
        os.setsid()
        devnull = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
        os.dup2(devnull, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        # its own IPC namespace: SysV and POSIX IPC objects die with the step
        mounts.check(mounts.libc.unshare(mounts.CLONE_NEWNS | mounts.CLONE_NEWIPC),
                     "unshare the mount and IPC namespaces")
        _assemble(spec)
        capture_walls.enclose(bytes.fromhex(str(spec["seccomp"])))
        _become(spec)
        # after the identity change, which clears it: the helper's death ends the step
        walls.prctl(walls.PR_SET_PDEATHSIG, walls.SIGKILL)
        walls.default_signals()
        try:
            os.chdir(str(spec["cwd"]) or "/")
        except OSError:
            os.chdir("/")
        env = {str(k): str(v) for k, v in dict(spec["env"]).items()}  # type: ignore[call-overload]
        os.execve(BASH, [BASH, "--noprofile", "--norc", "-c", str(spec["command"])], env)  # noqa: S606
    except BaseException as exc:
        os.write(status_w, f"E:{exc}".encode())
    os._exit(EXIT_REFUSED)


def prepare(data: bytes, extra: list[int]) -> helper.Child:
    """The child of one request (a spec in JSON and its output descriptor only; ValueError,
    KeyError, TypeError: bad)."""
    if extra:
        raise ValueError("a captured step takes one descriptor")
    spec = json.loads(data)
    for key in ("root", "layers", "plan", "uid", "gid", "groups", "env", "cwd", "command",
                "seccomp"):
        if key not in spec:
            raise KeyError(key)
    return lambda out, status_w: _child(spec, out, status_w)


def main(argv: list[str]) -> int:
    """Serve captured steps on the socket ``argv`` names until it closes."""
    try:
        fd = int(argv[2])
    except (IndexError, ValueError):
        return EXIT_REFUSED
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET, 0, fd)
    os.set_inheritable(fd, False)  # no step may hold it
    try:
        walls.prctl(walls.PR_SET_CHILD_SUBREAPER, 1)  # every orphan of a step is ours to kill
    except (mounts.Refused, OSError) as exc:
        sock.send(f"E:{exc}".encode())
        return EXIT_REFUSED
    sock.send(b"S")
    try:
        helper.serve(sock, prepare)
    finally:
        helper.reap_all()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
