"""Which daemon made a cgroup leaf, and whether it has surely ended.

Run leaves (:mod:`annad.confine.cgroups`) and the loopback wall's leaf
(:mod:`annad.confine.loopback`) are named after the daemon that made them, and a starting
daemon removes the leaves of dead daemons. A pid names a process only within its PID
namespace: a daemon in a container, or in a test's ``unshare --pid``, has a pid that may
be no process — or another one — in the machine's namespace, and the other way round.
Taking a live daemon's just-made leaf for a dead one's removed it under the run about to
join it (ENODEV, seen with two test suites side by side). So a leaf's name carries its
daemon's PID namespace, and a daemon judges only the leaves of its own, through its own
``/proc``.
"""

from __future__ import annotations

import os
from pathlib import Path

_INIT_PID_NS = 0xEFFFFFFC
"""The initial PID namespace's inode number (the kernel's PROC_PID_INIT_INO)."""


def _pid_namespace() -> int | None:
    try:
        return Path("/proc/self/ns/pid").stat().st_ino
    except OSError:
        return None


def owner() -> str:
    """How this daemon names itself in its leaves: its pid in the machine's own PID
    namespace, ``ns<inode>-<pid>`` in another (a container, a test's ``unshare --pid``) —
    the same number names two processes in two namespaces, and a sweep must tell them
    apart (:func:`gone`)."""
    namespace = _pid_namespace()
    return str(os.getpid()) if namespace == _INIT_PID_NS else f"ns{namespace}-{os.getpid()}"


def gone(name: str) -> bool:
    """Whether the daemon that named a leaf ``name`` (an :func:`owner`) has surely ended.

    Only a daemon of this PID namespace (the same ``ns`` part, none for the machine's own)
    can be judged, and only through a ``/proc`` of this namespace: elsewhere a missing
    ``/proc/PID`` says nothing, and taking a live daemon's just-made leaf for a dead one's
    removed it under the run about to join it (ENODEV)."""
    namespace, _, pid = name.rpartition("-")
    if not pid.isdigit():
        return False
    ours = owner().rpartition("-")[0]
    try:
        own_proc = str(Path("/proc/self").readlink()) == str(os.getpid())
    except OSError:
        return False
    return namespace == ours and own_proc and not Path("/proc", pid).exists()
