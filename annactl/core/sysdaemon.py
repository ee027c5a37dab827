"""The system daemon that is installed but not answering, told apart from one never set up.

Before, a system daemon that was stopped (SIGSTOP, a deadlock, a crash the unit gave up on)
looked like no system daemon at all: ``annactl status`` waited 2 s, then 30 s more on the
full client, and then silently showed a per-user daemon's view (37 s in all); ``apply`` told
the person to run ``annactl setup`` again. The socket's own answer says which case it is:

- ``absent`` (ENOENT): no socket. Set up or not is told by the unit file
  (:func:`installed`): installed → "installed but not running";
- ``denied`` (EACCES): this user may not reach ``/run/anna`` (not in group anna): a per-user
  daemon serves them, as designed (:mod:`annactl.core.sysaccess` says why when root is needed);
- ``refused`` (ECONNREFUSED): a socket file nobody listens on — the daemon died and was not
  (yet) restarted;
- ``silent``: the connection was accepted (the kernel queues it) but nothing answered within
  :data:`PROBE_TIMEOUT_S` — the daemon is hung or stopped.

The last three of those, and ``absent`` with the unit installed, are
:func:`not_answering`: a coded ``DAEMON_UNAVAILABLE`` naming the state and where to look
(``systemctl status annad``, ``journalctl -u annad``), never a silent fallback and never the
set-up hint.
"""

from __future__ import annotations

import errno
import socket
from pathlib import Path

from anna_common.errors import DaemonError, ErrorCode

DEFAULT_SOCKET = Path("/run/anna/annad.sock")
"""The system daemon's socket as the unit and ``anna.tmpfiles`` make it."""
UNIT_FILES = (Path("/etc/systemd/system/annad.service"),
              Path("/usr/lib/systemd/system/annad.service"),
              Path("/lib/systemd/system/annad.service"))
"""Where ``annactl setup`` (the first) and a distribution package put the unit."""
PROBE_TIMEOUT_S = 10.0
"""How long the system daemon may take to answer its health before it is "not answering"
(a healthy one answers in milliseconds; this covers a very busy machine)."""
LOOK = "systemctl status annad; journalctl -u annad -n 50"
"""Where the reason is, for every case here."""


def reason_of(exc: BaseException) -> str:
    """``absent``, ``denied``, ``refused``, ``silent`` or ``failed`` for a connection's error."""
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return "silent"
    if isinstance(exc, OSError):
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return "absent"
        if exc.errno in (errno.EACCES, errno.EPERM):
            return "denied"
        if exc.errno == errno.ECONNREFUSED:
            return "refused"
    return "failed"


def installed(socket_path: Path, units: tuple[Path, ...] = UNIT_FILES) -> bool:
    """The system daemon's unit is installed — asked only for the default socket: a socket
    set elsewhere (``ANNA_SYSTEM_SOCKET``, tests) says nothing about this machine's units."""
    if socket_path != DEFAULT_SOCKET:
        return False
    return any(unit.exists() for unit in units)


def not_answering(socket_path: Path, reason: object, *,
                  units: tuple[Path, ...] = UNIT_FILES) -> DaemonError | None:
    """The error for a system daemon that is installed but cannot serve now, or None when the
    answer means "not set up" or "not this user's" (then a per-user daemon serves)."""
    if reason == "silent":
        what = (f"the system daemon is running but did not answer at {socket_path} within "
                f"{PROBE_TIMEOUT_S:.0f} s (hung or stopped)")
    elif reason == "refused":
        what = (f"nothing listens at {socket_path}: the system daemon stopped (it crashed, or "
                "systemd is restarting it)")
    elif reason == "absent" and installed(socket_path, units):
        what = f"the system daemon is installed but not running (no socket at {socket_path})"
    else:
        return None
    return DaemonError(what, code=ErrorCode.DAEMON_UNAVAILABLE,
                       detail={"reason": str(reason), "socket": str(socket_path)},
                       hint=f"see why: {LOOK}; start it again: sudo systemctl restart annad")
