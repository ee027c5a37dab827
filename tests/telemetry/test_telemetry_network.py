"""Addresses, listeners and login sessions from the running machine (real psutil, a real
listening socket on loopback)."""

from __future__ import annotations

import socket

from annad.telemetry.network import addresses, collect_network, collect_sessions, listeners


def test_loopback_addresses_are_reported_with_their_prefix() -> None:
    found = {(a.interface, a.family, a.address, a.prefix) for a in addresses()}
    assert ("lo", "ipv4", "127.0.0.1", 8) in found


def test_a_socket_listening_on_loopback_is_a_listener() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        assert not any(x.port == port for x in listeners())  # bound, not listening yet
        sock.listen(1)
        mine = [x for x in listeners() if x.port == port]
    assert [(x.proto, x.address) for x in mine] == [("tcp", "127.0.0.1")]
    assert mine[0].process in (None, "python", "python3") or mine[0].process.startswith("py")


def test_the_collection_is_bounded_and_says_it_ran() -> None:
    info = collect_network()
    assert info.available and len(info.addresses) <= 64 and len(info.listeners) <= 64
    sessions = collect_sessions()
    assert len(sessions) <= 32 and all(s.user for s in sessions)
