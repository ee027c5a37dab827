"""One control group per confined run: a bound on the run's processes and memory together.

Resource limits (``setrlimit``) bound each process, and ``RLIMIT_NPROC`` counts a uid's
processes — but the kernel exempts uid 0 from it, so a capless-root read could fork without
end until its timeout. A cgroup bounds the run as a whole whatever its uid: every confined
command gets a leaf of its own with ``pids.max`` (processes and threads of the run) and a
memory cap (its allocations and page cache together; no swap where the kernel counts it), and
the leaf is removed once the run's processes are gone.

Where leaves go: beneath the daemon's own cgroup, nowhere else.

- **cgroup v2** (Arch, any systemd host): the daemon's cgroup must offer the ``pids`` and
  ``memory`` controllers (``Delegate=yes`` in annad.service). A cgroup with processes cannot
  hand controllers to children, so on first use the daemon — when it is the only process
  there — moves itself into a child ``anna-daemon`` and enables the controllers for its
  children (what systemd's delegation documentation asks of a delegated service).
- **cgroup v1** (a hybrid layout, as on the test machine): leaves in the ``pids`` and
  ``memory`` hierarchies beneath the daemon's cgroup in each, where the daemon may write.

A run joins its leaf through descriptors of the leaf's ``cgroup.procs`` opened here and passed
to the helper, whose forked child writes itself in before any wall or command: the command's
view of /sys/fs/cgroup is read-only and Landlock forbids it every write, so it can neither
leave the leaf nor change its limits. Where no leaf can be made, :class:`Unavailable` says why,
and a run with a uid-0 process is refused (:func:`annad.confine.runner.run_confined` for a
check or an INFO step, :func:`annad.confine.runner.run_overlay` for a preview with a root
step): never silently less confined. Runs of the owner's own uid still go, bounded by its
``RLIMIT_NPROC``.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import os
import select
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from annad.confine.leafowner import gone, owner

if TYPE_CHECKING:
    from collections.abc import Iterator

    from annad.confine.spec import RunLimits

log = logging.getLogger(__name__)

CONTROLLERS = ("pids", "memory")
"""What a leaf needs: a process count and a memory cap for the whole run."""
DAEMON_LEAF = "anna-daemon"
"""(cgroup v2) Where the daemon moves itself so that its cgroup may have limited children."""
RUN_PREFIX = "anna-run-"
"""Name of every run's leaf: ``anna-run-<owner>-<n>``, the owner as :func:`owner` writes it."""
REMOVE_S = 5.0
"""How long removing a leaf may take (killing what is left in it, then ``rmdir``)."""
_COUNTER = itertools.count(1)
_LOCK = threading.Lock()


class Unavailable(Exception):
    """No leaf can be made here: the reason (for the refusal the caller reports)."""


@dataclass(frozen=True, slots=True)
class Leaf:
    """One run's cgroup: its directory in each hierarchy (one for v2, pids and memory for v1)."""

    dirs: tuple[Path, ...]

    def procs_fds(self) -> list[int]:
        """Descriptors of each ``cgroup.procs`` for writing: a process that writes ``0`` to
        them joins the leaf (the caller closes them once they are passed on)."""
        fds: list[int] = []
        try:
            for directory in self.dirs:
                fds.append(os.open(directory / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC))
        except OSError:
            for fd in fds:
                os.close(fd)
            raise
        return fds

    def pids(self) -> set[int]:
        """The processes in the leaf now."""
        found: set[int] = set()
        for directory in self.dirs:
            with contextlib.suppress(OSError):
                found |= {int(p) for p in (directory / "cgroup.procs").read_text().split()}
        return found

    def remove(self) -> bool:
        """Kill whatever is still in the leaf and remove it; False when it could not be."""
        deadline = time.monotonic() + REMOVE_S
        for directory in self.dirs:
            while True:
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        log.error("cannot remove the run's cgroup %s: %s", directory, exc)
                        return False
                self._kill(directory)
                select.select([], [], [], 0.002)  # killed processes leave within moments
        return True

    @staticmethod
    def _kill(directory: Path) -> None:
        kill = directory / "cgroup.kill"
        if kill.exists():
            with contextlib.suppress(OSError):
                kill.write_text("1")
                return
        with contextlib.suppress(OSError):
            for pid in (directory / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)


@dataclass(frozen=True, slots=True)
class _Hierarchy:
    version: int
    """1 or 2."""
    base: Path
    """The daemon's own cgroup there (leaves are made beneath it)."""


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """cgroup mounts: (mount root, mount point, type, super options)."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, after = left.split(), right.split()
        if len(fields) >= 5 and len(after) >= 3 and after[0] in ("cgroup", "cgroup2"):
            found.append((fields[3], fields[4].replace("\\040", " "), after[0],
                          set(after[2].split(","))))
    return found


def _own() -> dict[str, str]:
    """The daemon's cgroup path per hierarchy key ("" for v2, else the controller list)."""
    own = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        own[controllers] = path
    return own


def _under(root: str, point: str, path: str) -> Path | None:
    if root != "/" and not (path == root or path.startswith(root.rstrip("/") + "/")):
        return None  # the daemon's cgroup is not visible in this mount
    rel = path[len(root):] if root != "/" else path
    return Path(point, rel.lstrip("/"))


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _v2(own: dict[str, str]) -> _Hierarchy | str:
    mounts = [m for m in _mounts() if m[2] == "cgroup2"]
    if "" not in own or not mounts:
        return "there is no cgroup v2 hierarchy"
    base = _under(mounts[0][0], mounts[0][1], own[""])
    if base is None:
        return "the daemon's cgroup is outside the mounted cgroup v2 tree"
    missing = set(CONTROLLERS) - set(_read(base / "cgroup.controllers").split())
    if missing:
        return (f"the daemon's cgroup v2 ({own['']}) offers no "
                f"{' and '.join(sorted(missing))} controller (annad.service needs "
                "Delegate=pids memory, on a machine whose cgroup v2 has them)")
    if set(CONTROLLERS) <= set(_read(base / "cgroup.subtree_control").split()):
        return _Hierarchy(2, base)
    if own[""] == "/":
        return "the daemon runs in the root cgroup, whose controllers it does not change"
    procs = _read(base / "cgroup.procs").split()
    if procs != [str(os.getpid())]:
        return (f"the daemon's cgroup ({own['']}) holds other processes too: it is not "
                "delegated to the daemon alone (annad.service needs Delegate=yes)")
    try:
        (base / DAEMON_LEAF).mkdir(exist_ok=True)
        (base / DAEMON_LEAF / "cgroup.procs").write_text(str(os.getpid()))
        (base / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in CONTROLLERS))
    except OSError as exc:
        return f"cannot enable the pids and memory controllers in {base}: {exc}"
    return _Hierarchy(2, base)


def _v1(own: dict[str, str]) -> list[_Hierarchy] | str:
    found: list[_Hierarchy] = []
    mounts = [m for m in _mounts() if m[2] == "cgroup"]
    for controller in CONTROLLERS:
        mount = next((m for m in mounts if controller in m[3]), None)
        key = next((k for k in own if controller in k.split(",")), None)
        if mount is None or key is None:
            return f"no cgroup hierarchy has the {controller} controller"
        base = _under(mount[0], mount[1], own[key])
        if base is None or not os.access(base, os.W_OK):
            return f"the daemon may not make cgroups in the {controller} hierarchy ({base})"
        if all(h.base != base for h in found):  # co-mounted controllers: one directory
            found.append(_Hierarchy(1, base))
    return found


_PREPARED: list[_Hierarchy] | str | None = None


def prepare() -> str | None:
    """Find (once) where leaves go; None when they can be made, else why not. The daemon
    calls it at start, before it runs anything (v2 moves the daemon, alone, into a child)."""
    global _PREPARED  # noqa: PLW0603 - one answer per daemon process
    with _LOCK:
        if _PREPARED is None:
            try:
                own = _own()
                v2 = _v2(own)
                if isinstance(v2, _Hierarchy):
                    _PREPARED = [v2]
                else:
                    v1 = _v1(own)
                    _PREPARED = v1 if isinstance(v1, list) else f"{v2}; cgroup v1: {v1}"
            except (OSError, ValueError) as exc:
                _PREPARED = f"cannot read this process's cgroups: {exc}"
            if isinstance(_PREPARED, list):
                _remove_stale(_PREPARED)
        return _PREPARED if isinstance(_PREPARED, str) else None


def _remove_stale(hierarchies: list[_Hierarchy]) -> None:
    """Leaves a killed daemon left behind (its runs ended with it; an empty directory stays):
    removed when the daemon that made them is gone (:func:`gone`) — another daemon's are
    left alone, whichever PID namespace it runs in."""
    for hierarchy in hierarchies:
        for leaf in hierarchy.base.glob(f"{RUN_PREFIX}*"):
            if gone(leaf.name[len(RUN_PREFIX):].rpartition("-")[0]):
                Leaf((leaf,)).remove()


def make_leaf(processes: int, memory: int) -> Leaf:
    """A new leaf allowing ``processes`` tasks and ``memory`` bytes; raises Unavailable."""
    why = prepare()
    if why is not None:
        raise Unavailable(why)
    assert isinstance(_PREPARED, list)
    name = f"{RUN_PREFIX}{owner()}-{next(_COUNTER)}"
    made: list[Path] = []
    written: set[str] = set()
    try:
        for hierarchy in _PREPARED:
            directory = hierarchy.base / name
            directory.mkdir()
            made.append(directory)
            written |= _limit(hierarchy.version, directory, processes, memory)
    except OSError as exc:
        Leaf(tuple(made)).remove()
        raise Unavailable(f"cannot make the run's cgroup: {exc}") from None
    if "pids.max" not in written or not written & {"memory.max", "memory.limit_in_bytes"}:
        Leaf(tuple(made)).remove()
        raise Unavailable("the run's cgroup has no process or memory limit to set")
    return Leaf(tuple(made))


def _limit(version: int, directory: Path, processes: int, memory: int) -> set[str]:
    """Write the limits the leaf's files offer (in order: a v1 swap cap must not be below
    the memory cap); the names written."""
    files = {"pids.max": str(processes)}
    if version == 2:
        files |= {"memory.max": str(memory), "memory.swap.max": "0", "memory.oom.group": "1"}
    else:
        files |= {"memory.limit_in_bytes": str(memory),
                  "memory.memsw.limit_in_bytes": str(memory)}
    written = set()
    for name, value in files.items():
        path = directory / name
        if path.exists():
            path.write_text(value)
            written.add(name)
    return written


def _needed(exc: Unavailable) -> Unavailable:
    return Unavailable(f"a uid-0 run needs a cgroup of its own to bound its processes and "
                       f"memory (the kernel does not count uid 0's), and {exc}")


@contextlib.contextmanager
def run_cgroup(processes: int, memory: int, *, required: bool) -> Iterator[tuple[int, ...]]:
    """A leaf for one run, removed after it: yields its ``cgroup.procs`` descriptors (closed
    after). No leaf possible: Unavailable when ``required``, else no descriptors (the run's
    uid's RLIMIT_NPROC then bounds its processes)."""
    try:
        leaf = make_leaf(processes, memory)
        fds = tuple(leaf.procs_fds())
    except Unavailable as exc:
        if required:
            raise _needed(exc) from None
        yield ()
        return
    except OSError as exc:
        leaf.remove()
        raise Unavailable(f"cannot join the run's cgroup: {exc}") from None
    try:
        yield fds
    finally:
        for fd in fds:
            os.close(fd)
        leaf.remove()


@contextlib.contextmanager
def leaf_for(limits: RunLimits, *, required: bool) -> Iterator[Leaf | None]:
    """A leaf with ``limits`` (processes, run memory), removed (whatever is left in it
    killed) on leaving. No leaf possible: Unavailable when ``required`` (a preview with a
    uid-0 step), else None (the steps' uids' RLIMIT_NPROC then bound their processes)."""
    try:
        leaf = make_leaf(limits.processes, limits.run_memory)
    except Unavailable as exc:
        if required:
            raise _needed(exc) from None
        yield None
        return
    try:
        yield leaf
    finally:
        leaf.remove()


def leaves() -> list[Path]:
    """This daemon's run leaves that exist now (tests and diagnostics)."""
    if not isinstance(_PREPARED, list):
        return []
    return sorted(p for h in _PREPARED for p in h.base.glob(f"{RUN_PREFIX}{owner()}-*"))


def v2_directory() -> Path | str:
    """The daemon's own cgroup v2 directory (the parent of :data:`DAEMON_LEAF` once it moved
    there), or why there is none: where a leaf needing no controller goes (cgroup BPF)."""
    try:
        own = _own()
        mounts = [m for m in _mounts() if m[2] == "cgroup2"]
    except (OSError, ValueError) as exc:
        return f"cannot read this process's cgroups: {exc}"
    if "" not in own or not mounts:
        return "there is no cgroup v2 hierarchy"
    base = _under(mounts[0][0], mounts[0][1], own[""])
    if base is None:
        return "the daemon's cgroup is outside the mounted cgroup v2 tree"
    return base.parent if base.name == DAEMON_LEAF else base
