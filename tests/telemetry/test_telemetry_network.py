"""Addresses, listeners and login sessions from the running machine (real psutil, a real
listening socket on loopback)."""

from __future__ import annotations

import socket

from annad.telemetry.network import (
    addresses,
    collect_network,
    collect_sessions,
    listeners,
    parse_proc_net,
)


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
    assert [(x.proto, x.address, x.process) for x in mine] == [("tcp", "127.0.0.1", None)]


def test_the_collection_is_bounded_and_says_it_ran() -> None:
    info = collect_network()
    assert info.available and len(info.addresses) <= 64 and len(info.listeners) <= 64
    sessions = collect_sessions()
    assert len(sessions) <= 32 and all(s.user for s in sessions)


TCP6 = """  sl  local_address                         remote_address                        st
   0: 00000000000000000000000000000000:0016 00000000000000000000000000000000:0000 0A 0
   1: 00000000000000000000000001000000:0277 00000000000000000000000000000000:0000 0A 0
   2: 00000000000000000000000001000000:D431 00000000000000000000000001000000:0016 01 0
"""
UDP = """  sl  local_address rem_address   st
   0: 3500007F:0035 00000000:0000 07 0
   1: 0100007F:9C40 0100007F:0035 01 0
   2: garbage
"""


def test_the_kernel_tables_are_read_as_ss_reads_them() -> None:
    assert parse_proc_net(TCP6, "tcp") == [("tcp", "::", 22), ("tcp", "::1", 631)]
    assert parse_proc_net(UDP, "udp") == [("udp", "127.0.0.53", 53)]  # bound, no peer
