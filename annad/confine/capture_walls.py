"""The walls of a captured step beyond its overlays (standard library only: the capture helper
runs as ``python -I -S``).

The overlays catch what a step writes to files; these keep it from acting on the running
system any other way, enforced by the kernel whatever program or spelling tries it:

- :func:`enclose`: a Landlock domain scoping signals and abstract Unix sockets to the step
  (no ``kill`` of a process outside, however it is spelled; and, as every Landlock domain, no
  ptrace of one and no way through its ``/proc/PID/root``, ``fd`` or ``environ``) whose file
  rules (:func:`file_rules`) let it write only beneath its overlays — not into a FIFO under
  the real ``/run`` (a read-only bind stops a write to a file there, not into a FIFO: the
  kind systemd's ``/run/initctl`` reads), nor a device node anywhere — then the seccomp
  program of :mod:`annad.confine.capture_filter`;
- :func:`wall_network`: a root step's processes in the daemon's cgroup whose BPF programs
  refuse every destination on this machine (:mod:`annad.confine.loopback`), or, where that
  could not be built, in a network namespace of their own with no network at all;
- :func:`keep_file_capabilities`: a root step keeps only :data:`KEPT_CAPABILITIES`, what
  changing files as root needs. Everything else — the clock (``sys_time``), network
  configuration (``net_admin``, ``net_raw``), modules, raw I/O, mounts and namespaces
  (``sys_admin``), signals to anyone (``kill``), immutable flags (``linux_immutable``: an
  upper-layer file that could be neither committed nor thrown away), ptrace, ``mknod``… —
  leaves the bounding set, so no setuid or file-capability program gets it back either.
"""

from __future__ import annotations

import _socket
import os

from annad.confine import landlock, mounts, walls

KEPT_CAPABILITIES = (0, 1, 3, 4, 6, 7, 8, 31)
"""chown, dac_override, fowner, fsetid, setgid, setuid, setpcap (a program dropping its own
capabilities), setfcap (a file capability is an xattr the judge sees)."""


LIVE_TREES = ("/proc", "/sys", "/dev", "/run")
"""Kernel, device and runtime trees: the real ones (read-only binds), never overlaid — and
where the FIFOs and device nodes of the running system are, so no Landlock rule reaches
into them (:func:`file_rules`)."""
DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full")
"""The device nodes a captured step may open for writing (its ``/dev`` is the confinement's
minimal one; ``/dev/random`` and ``/dev/urandom`` take no entropy from a step)."""
OWN_TREES = ("/dev/shm",)
"""The step's own writable trees outside its overlays (thrown away with it)."""


def _below(path: str, top: str) -> bool:
    return path != top and path.startswith(top.rstrip("/") + "/")


def file_rules(plan: list[list[object]]) -> tuple[tuple[str, ...], tuple[str, ...],
                                                  tuple[str, ...]]:
    """Where a captured step may write, from its mount plan (:mod:`annad.capture.layers`),
    read in its assembled tree: (files, trees, entry-only directories) for
    :func:`annad.confine.landlock.wall_files`.

    Every overlay is a tree the step may write in — unless one of the :data:`LIVE_TREES`
    lies beneath it, as the real ``/run`` lies beneath the root's overlay. A Landlock rule
    holds for a whole hierarchy, so such a directory gets only
    :data:`annad.confine.landlock.ENTRY_WRITES` (entries made, removed, renamed; nothing
    beneath opened for writing) and each of its directories a rule of its own by the same
    reasoning; a regular file directly in it gets a file rule, a symlink none (its target has
    its own), a FIFO or device node none. What a step cannot do in consequence: write a file
    it creates directly in ``/`` (a new ``/swapfile``); it fails with ``EACCES`` and nothing
    of it lands. Other read-only binds (a squashfs, a FUSE or network share) do not split
    their parent: a split ``/tmp`` (an AppImage's FUSE mount) or home (an sshfs) would refuse
    every new file there; their files are read-only to the step, their device nodes ``nodev``."""
    overlays = [str(op[1]) for op in plan if op[0] == "overlay"]
    walled = {str(op[1]) for op in plan if op[0] != "overlay" and str(op[1]) in LIVE_TREES}
    files: list[str] = []
    trees: list[str] = []
    entries: list[str] = []
    done: set[str] = set()

    def grant(directory: str) -> None:
        if directory in done or not os.path.isdir(directory):  # noqa: PTH112
            return  # a mount gone since the plan was made: its parent's layer holds its path
        done.add(directory)
        if not any(_below(w, directory) for w in walled):
            trees.append(directory)
            return
        entries.append(directory)
        try:
            found = list(os.scandir(directory))
        except OSError:
            return
        for entry in sorted(found, key=lambda e: e.name):
            if entry.path in walled:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    grant(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    files.append(entry.path)
            except OSError:
                continue

    for point in overlays:
        grant(point)
    files += [path for path in DEVICE_FILES if os.path.exists(path)]  # noqa: PTH110
    trees += [path for path in OWN_TREES if os.path.isdir(path)]  # noqa: PTH112
    return tuple(files), tuple(trees), tuple(entries)


def enclose(program: bytes, plan: list[list[object]]) -> None:
    """Landlock's scope and file rules (:func:`file_rules` of the step's mount ``plan``), then
    the seccomp program: in the step's process, after its tree is assembled and while it
    still has ``CAP_SYS_ADMIN`` (both need it, or no_new_privs — which would also take a user
    step's ``sudo`` away). Raises; the step then never runs."""
    landlock.wall_files(*file_rules(plan))
    walls.load_filter(program)


def keep_file_capabilities(uid: int) -> None:
    """Every capability but :data:`KEPT_CAPABILITIES` out of the bounding set, no ambient
    ones; for a root step (``uid`` 0) the effective and permitted sets are exactly those kept
    (a step of another uid loses them all when it becomes that uid)."""
    walls.bound_capabilities(KEPT_CAPABILITIES)
    if uid == 0:
        walls.set_capabilities(KEPT_CAPABILITIES)


def wall_network(spec: dict[str, object]) -> None:
    """What the daemon decided for the step's network (``spec["network"]``, none for a per-user
    step): join the loopback wall's cgroup (``join``: its ``cgroup.procs``), or take an empty
    network namespace (``none``). First in the step's process, before it has a socket (a
    socket belongs to the cgroup it was made in) and while ``/sys`` is still writable; the
    step's view of it is read-only afterwards, so it cannot leave. Raises; nothing runs.

    Joined, the wall is tried before it is trusted (:func:`walled_here`): where the kernel
    does not run it for this process's sockets — cgroup v2 socket matching switched off by a
    v1 ``net_cls``/``net_prio`` in use, the programs gone — the step gets the empty network
    namespace instead, and its output says so."""
    network = spec.get("network")
    if not isinstance(network, dict):
        return
    if "join" in network:
        if not _inside(str(network["join"])):  # born there: the helper was moved in
            fd = os.open(str(network["join"]), os.O_WRONLY | os.O_CLOEXEC)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)
        if walled_here():
            return
        os.write(2, b"anna: the loopback wall does not hold here; this step has no network\n")
    mounts.namespaces(mounts.CLONE_NEWNET, userns=False)


def _inside(procs: str) -> bool:
    """Whether this process is in the cgroup v2 leaf whose ``cgroup.procs`` is ``procs``
    (leaf names are unique: the daemon's pid is in them)."""
    leaf = os.path.basename(os.path.dirname(procs))  # noqa: PTH119, PTH120
    with open("/proc/self/cgroup") as table:  # noqa: PTH123
        for line in table:
            if line.startswith("0::"):
                return line.rstrip("\n").rsplit("/", 1)[-1] == leaf
    return False


def walled_here() -> bool:
    """Whether this process's sockets meet the wall: a UDP ``connect`` to 127.0.0.1 (which
    sends nothing) must be refused with ``EPERM``."""
    probe = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        probe.connect(("127.0.0.1", 9))
    except PermissionError:
        return True
    except OSError:
        return False
    finally:
        probe.close()
    return False
