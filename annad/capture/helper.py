"""The capture helper: runs approved steps with their file writes captured (a script).

Started by :func:`annad.confine.capture_run.run_capture` as ``python -I -S capture_helper.py --
SOCK_FD`` and kept for the steps that follow (:class:`annad.confine.session.Pool`, as the
confinement helper is: an interpreter's start-up is paid once per plan, not once per step).
It says ``S`` on its socket and then serves one request at a time with the confinement
helper's loop (:func:`annad.confine.helper.serve`: a forked child per step, ``R<pid>``, the
helper a child subreaper that kills everything the step left, ``X<wait status>``; its socket
closing — the daemon ended — kills the step). A request is the step's spec (JSON) and the
descriptor its output goes to. The daemon decided the mount plan
(:mod:`annad.capture.layers`); the child only carries it out, in a new **mount**
namespace of its own (the PID and network namespaces stay the machine's: the step was
approved, ``systemctl status`` or ``ss`` must tell the truth):

1. every mount becomes private (nothing propagates back to the machine);
2. a new root is assembled at ``root`` (an empty directory on the state disk): each real,
   writable file system gets an overlay whose lower layer is the real one and whose upper
   and work directories are ``layers/N/u`` and ``layers/N/w`` on the state disk — fresh for
   every step — with the preview's options (:data:`annad.capture.tree.OPTIONS`:
   the upper layer holds complete files and plain directories); ``/proc``, ``/sys`` and
   ``/run`` are the real ones, read-only (a write there would not be captured, so it
   fails); ``/dev`` is the minimal one of the confinement (no disk, no memory device: a
   device write is not a file change); the overlays are ``nodev``;
3. ``pivot_root`` into it and the old root detached, so no path reaches the real tree;
4. the walls of :mod:`annad.confine.capture_walls`: what acts on the running system other
   than through files is refused by the kernel (Landlock file rules: writes only beneath
   the overlays, no FIFO under the real /run, no device; signals and abstract sockets
   scoped to the step, its own IPC namespace, the seccomp program the daemon compiled — no
   Unix socket client, no clock, no keyring, no mount —, and only the capabilities changing
   files needs left in the bounding set); a user-scope step becomes its owner;
5. ``bash -c`` is executed in this very process.

A per-user daemon's helper (not root; ``userns`` in the spec) makes a **user** namespace with
the mount namespace, its uid and gid mapped to themselves, and mounts the overlays there with
``userxattr`` (:mod:`annad.capture.unprivileged` made the plan for that); the upper root of
an overlay keeps the daemon's owner and shows the real directory's bits as this uid gets them;
the step runs as the daemon's own uid and groups, with no capability left after ``exec``.
``{"probe": DIR}`` asks whether this kernel lets it (:func:`_probe`).

When the last process of the namespace has ended (the helper killed and reaped them all
before its ``X``), the overlays are gone and the upper layers stay on the state disk: they
are the step's change set, read back by the daemon. Any failure before the command is
reported as ``E:reason``; nothing falls back to running live.
"""

# ruff: noqa: PTH101, PTH102, PTH103, PTH110 - no pathlib: start-up time
from __future__ import annotations

import _socket
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # noqa: PTH100, PTH120
from annad.capture.tree import OPTIONS, USERNS_OPTIONS
from annad.confine import capture_walls, helper, mounts, walls

READ_ONLY = mounts.MOUNT_ATTR_RDONLY | mounts.MOUNT_ATTR_NOSUID | mounts.MOUNT_ATTR_NODEV
EXIT_REFUSED = 125
"""The exit status when the capture could not be built (the confinement helper's)."""
BASH = "/bin/bash"
VOLATILE = ",volatile"
"""The overlays skip every sync of their upper file system: without it the end of each
step's mount namespace flushes the whole state disk (``sync_fs`` of the upper one, with
whatever else is written there: milliseconds to tens of them per step on a busy disk).
Nothing is lost: the commit flushes the upper layers itself (one ``syncfs``, with the
backups) before anything of them lands (:func:`annad.capture.commit.prepare`); what was
never committed is thrown away after a crash anyway, and a volatile upper layer is never
mounted again (overlayfs would refuse it)."""


def _overlay(index: int, point: str, root: str, layers: str, seen: dict[str, int] | None
             ) -> None:
    upper, work = f"{layers}/{index}/u", f"{layers}/{index}/w"
    os.makedirs(upper, mode=0o700)
    os.makedirs(work, mode=0o700)
    info = mounts.overlay_point(point, root + point)
    if info is None:
        return  # gone since the daemon read the mount table: the parent's layer captures it
    # the merged root shows the upper's owner and mode: those of the real directory; in a
    # user namespace the owner stays the daemon's, so it gets the bits the real one gives it
    if seen is not None:
        os.chmod(upper, seen.get(point, info.st_mode & 0o7777))
    else:
        os.chown(upper, info.st_uid, info.st_gid)
        os.chmod(upper, info.st_mode & 0o7777)
    # nodev: a device node in a lower layer (a loop device's, one a program left in /var)
    # opens nothing through the overlay; a FIFO through it is the overlay's own pipe
    options = (f"lowerdir={point},upperdir={upper},workdir={work},"
               f"{OPTIONS if seen is None else USERNS_OPTIONS}")
    try:
        mounts.mount("anna-capture", root + point, "overlay", mounts.MS_NODEV,
                     options + VOLATILE)
    except mounts.Refused:  # a kernel before 5.10: the overlay flushes the disk as it goes
        mounts.mount("anna-capture", root + point, "overlay", mounts.MS_NODEV, options)


def _as_seen(plan: list[list[object]]) -> dict[str, int]:
    """Each overlaid real directory's mode with its owner bits as this uid gets them (a
    directory of someone else's shown as this uid's own must not let it write where it may
    not). Read before the user namespace, where an unmapped owner reads as the overflow id."""
    uid, groups = os.getuid(), {os.getgid(), *os.getgroups()}
    out = {}
    for op in plan:
        try:
            info = os.stat(str(op[1])) if op[0] == "overlay" else None  # noqa: PTH116
        except OSError:
            continue
        if info is None:
            continue
        mode = info.st_mode & 0o7777
        if info.st_uid != uid:
            bits = (mode >> 3) & 0o7 if info.st_gid in groups else mode & 0o7
            mode = (mode & ~0o700) | (bits << 6)
        out[str(op[1])] = mode
    return out


def _assemble(spec: dict[str, object], seen: dict[str, int] | None) -> None:
    root, layers = str(spec["root"]), str(spec["layers"])
    mounts.mount("none", "/", None, mounts.MS_REC | mounts.MS_PRIVATE, None)
    for op in list(spec["plan"]):  # type: ignore[call-overload]
        kind, point = str(op[0]), str(op[1])
        if kind == "overlay":
            _overlay(int(op[2]), point, root, layers, seen)
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
    if not spec.get("userns"):  # in the user namespace: the daemon's own groups, unchangeable
        os.setgroups([int(g) for g in list(spec["groups"])])  # type: ignore[call-overload]
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.getgid() != gid:
        raise mounts.Refused("could not switch to the step's identity")


def _child(spec: dict[str, object], out: int, status_w: int) -> None:
    """In the forked child: its own session and output, the capture, the identity, bash."""
    try:
        helper.as_run(out)
        # a per-user daemon: a user namespace of its own, its uid and gid mapped to themselves;
        # its own IPC namespace: SysV and POSIX IPC objects die with the step
        userns = bool(spec.get("userns"))
        capture_walls.wall_network(spec)  # before any namespace: the cgroup is the machine's
        seen = _as_seen(list(spec["plan"])) if userns else None  # type: ignore[call-overload]
        mounts.namespaces(mounts.CLONE_NEWNS | mounts.CLONE_NEWIPC, userns)
        _assemble(spec, seen)
        capture_walls.enclose(bytes.fromhex(str(spec["seccomp"])),
                              list(spec["plan"]))  # type: ignore[call-overload]
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


def _probe(top: str, status_w: int) -> None:
    """In the forked child: whether this uid can capture here (a per-user daemon asks once):
    a user namespace, an overlay with ``userxattr`` in ``top`` (an empty directory of the
    daemon's on its state disk), a write through it seen in the upper layer. Exits 0 if so."""
    try:
        mounts.namespaces(mounts.CLONE_NEWNS, True)
        mounts.mount("none", "/", None, mounts.MS_REC | mounts.MS_PRIVATE, None)
        for name in ("l", "u", "w", "m"):
            os.mkdir(f"{top}/{name}", 0o700)
        mounts.mount("anna-capture", f"{top}/m", "overlay", 0,
                     f"lowerdir={top}/l,upperdir={top}/u,workdir={top}/w,{USERNS_OPTIONS}")
        os.close(os.open(f"{top}/m/f", os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
        if not os.path.exists(f"{top}/u/f"):
            raise mounts.Refused("a write through the overlay did not reach its upper layer")
    except BaseException as exc:
        os.write(status_w, f"E:{exc}".encode())
        os._exit(EXIT_REFUSED)
    os._exit(0)


def prepare(data: bytes, extra: list[int]) -> helper.Child:
    """The child of one request (a spec in JSON and its output descriptor only; ValueError,
    KeyError, TypeError: bad). A spec ``{"probe": DIR}`` asks :func:`_probe` instead."""
    if extra:
        raise ValueError("a captured step takes one descriptor")
    spec = json.loads(data)
    if set(spec) == {"probe"}:
        top = str(spec["probe"])
        return lambda _out, status_w: _probe(top, status_w)
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
