"""Whom annactl is about to talk to: the daemon's identity, checked before anything is sent.

annactl sends a daemon its plans, its session environment and (on ``apply``) the person's
approval; it shows what the daemon answers as Anna's verdict. Whatever listens at the socket
path gets all of that — so a socket another user planted there (a world-writable runtime
directory, a stale ``ANNA_SOCKET``, a path set in a shared config) could collect approvals and
answer "rolled back" for things it never did. The kernel says who is on the other end:

- the socket file's owner (``lstat``: a symlink is not followed), and
- the connected peer's credentials (``SO_PEERCRED``: the uid of the process that called
  ``listen``, which no one can forge),

and both must be root or this user: the system daemon runs as root, a per-user daemon as
the person. Anyone else is refused (``DAEMON_UNTRUSTED``) before a byte is written.
"""

from __future__ import annotations

import os
import socket
import stat
import struct
from typing import TYPE_CHECKING

from anna_common.errors import DaemonError, ErrorCode

if TYPE_CHECKING:
    from pathlib import Path

_UCRED = struct.Struct("3i")
"""``struct ucred``: pid, uid, gid."""


def trusted_uids(me: int | None = None) -> frozenset[int]:
    """The uids a daemon of this user may run as: root (the system daemon) and the user."""
    return frozenset({0, os.getuid() if me is None else me})


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a connected Unix socket."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    return int(_UCRED.unpack(raw)[1])


def check_daemon(sock: socket.socket, path: Path, *, me: int | None = None) -> None:
    """Refuse a daemon at ``path`` (``sock``: connected to it) that is not root's or this
    user's, by the socket file's owner and the peer's credentials."""
    allowed = trusted_uids(me)
    try:
        info = os.lstat(path)
    except OSError as exc:  # replaced or removed between connect and now
        raise _untrusted(path, f"its socket cannot be checked ({exc.strerror or exc})") from None
    if not stat.S_ISSOCK(info.st_mode):
        raise _untrusted(path, "it is not a socket")
    if info.st_uid not in allowed:
        raise _untrusted(path, f"the socket belongs to uid {info.st_uid}")
    uid = peer_uid(sock)
    if uid not in allowed:
        raise _untrusted(path, f"the process listening there runs as uid {uid}")


def _untrusted(path: Path, why: str) -> DaemonError:
    return DaemonError(f"refusing to talk to {path}: {why}, neither root nor you",
                       code=ErrorCode.DAEMON_UNTRUSTED,
                       detail={"socket": str(path), "reason": "untrusted"},
                       hint="an annad runs as root (the system daemon) or as you (your "
                       "per-user one); check ANNA_SOCKET / the socket settings and who made "
                       "that file")
