"""Who is calling: the kernel's answer (``SO_PEERCRED``), never the request's.

uvicorn does not pass peer credentials to the application, so
:class:`PeerH11Protocol` (a subclass of uvicorn's h11 protocol, installed with
``Config(http=...)``) reads them from the connection's socket when the
connection is made and puts a :class:`Peer` into that connection's state, which
handlers see as ``request.state.peer``. Supplementary groups come from
``SO_PEERGROUPS`` (the groups the process had when it connected).

Authorisation: root and members of group ``anna`` may submit, execute and roll
back; everyone else only reads (health, telemetry). A per-user daemon serves its
owner only.
"""

from __future__ import annotations

import grp
import json
import socket
import struct
import threading
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

SO_PEERGROUPS = getattr(socket, "SO_PEERGROUPS", 59)
"""Linux socket option (not exported by Python's socket module)."""
PEER_KEY = "peer"
"""Key of the :class:`Peer` in the connection state."""
CONNECTION_KEY = "connection"
"""Key of the connection's number in the connection state (1, 2, ... in the order the
connections were made; the lock-out guard accepts a confirmation only from a connection
made after the plan finished)."""
_UCRED = struct.Struct("3i")


@dataclass(frozen=True, slots=True)
class Peer:
    """The process at the other end of a connection, as the kernel reports it."""

    pid: int
    uid: int
    gid: int
    groups: tuple[int, ...] = ()


def peer_of(sock: socket.socket) -> Peer | None:
    """Credentials of a Unix socket's peer; None when the socket cannot say."""
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    except OSError:
        return None
    pid, uid, gid = _UCRED.unpack(raw)
    groups: tuple[int, ...] = ()
    try:
        data = sock.getsockopt(socket.SOL_SOCKET, SO_PEERGROUPS, 4 * 256)
        groups = struct.unpack(f"{len(data) // 4}I", data[: len(data) // 4 * 4])
    except OSError:
        pass
    return Peer(pid=pid, uid=uid, gid=gid, groups=tuple(groups))


def group_id(name: str) -> int | None:
    """The gid of a group name, or None when the group does not exist."""
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        return None


def authorised(peer: Peer | None, *, user_mode: bool, owner_uid: int, group: str) -> bool:
    """Whether ``peer`` may change the system (submit, execute, roll back)."""
    if peer is None:
        return False
    if user_mode:
        return peer.uid == owner_uid
    if peer.uid == 0:
        return True
    gid = group_id(group)
    return gid is not None and (peer.gid == gid or gid in peer.groups)


def served(peer: Peer | None, *, user_mode: bool, owner_uid: int) -> bool:
    """Whether ``peer`` is served at all: a per-user daemon answers its owner only."""
    if peer is None:
        return False
    return not user_mode or peer.uid == owner_uid


class _Counter:
    """Numbers connections in the order they are made (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0

    def next(self) -> int:
        """The number of a new connection."""
        with self._lock:
            self._last += 1
            return self._last

    def last(self) -> int:
        """The number the newest connection got (0 before the first)."""
        with self._lock:
            return self._last


CONNECTIONS = _Counter()
"""This process's connection numbers."""


MAX_CONNECTIONS = 512
"""Open connections the daemon keeps; one more is closed as soon as it is accepted, so idle
or half-sent connections can never take every file descriptor (``LimitNOFILE`` in the unit
is sized well above this)."""
MAX_CONNECTIONS_PER_UID = 128
"""Open connections one uid may hold: one user cannot take them all from the others."""
HEADER_TIMEOUT_S = 10.0
"""A connection must send a complete request head within this long of being made (and of
its previous response, through uvicorn's keep-alive timeout), or it is closed."""

_OPEN: dict[int | None, int] = {}
"""Open connections per peer uid (None: unknown), touched only on the event loop."""


class PeerH11Protocol(H11Protocol):
    """uvicorn's h11 protocol plus the peer's credentials in the connection state, a cap on
    connections (in all and per uid), a deadline for the request head, and coded JSON for
    requests that are not HTTP."""

    def connection_made(self, transport: Any) -> None:
        """Read ``SO_PEERCRED`` once per connection, before any request is parsed."""
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        peer = None
        if sock is not None and sock.family == socket.AF_UNIX:
            peer = peer_of(sock)
        # a copy: app_state is shared by all connections, the peer belongs to this one
        self.app_state = {**self.app_state, PEER_KEY: peer, CONNECTION_KEY: CONNECTIONS.next()}
        self._uid = peer.uid if peer is not None else None
        _OPEN[self._uid] = _OPEN.get(self._uid, 0) + 1
        if len(self.connections) > MAX_CONNECTIONS or \
                _OPEN[self._uid] > MAX_CONNECTIONS_PER_UID:
            transport.close()  # closed before a byte is read: nothing to answer yet
            return
        self._head_timer = self.loop.call_later(HEADER_TIMEOUT_S, self._head_late)

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the connection in the per-uid count."""
        _OPEN[self._uid] = max(0, _OPEN.get(self._uid, 1) - 1)
        timer = getattr(self, "_head_timer", None)
        if timer is not None:
            timer.cancel()
        super().connection_lost(exc)

    def _head_late(self) -> None:
        """No request head yet: a slow or idle client must not hold the connection."""
        if self.cycle is None and not self.transport.is_closing():
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        """A request that is not valid HTTP (``Content-Length: -1``, a head over h11's size
        limit) gets the protocol's coded JSON error, like every other error."""
        body = json.dumps({"code": "BAD_REQUEST", "message": f"the request is not valid HTTP "
                           f"({msg[:200]})", "detail": {"status": 400}}).encode()
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                      h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()
