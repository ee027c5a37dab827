"""Interface addresses, listening sockets and logged-in users (no process spawned).

So "show my ip address", "what is listening?" and "who is logged in?" are answered from the
snapshot offline, as the kernel and uptime are. Listening sockets come from the kernel's
socket tables (``proc/net``), without their owning process (see :func:`listeners`).
Interface names and user names are untrusted strings.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import psutil

from anna_common.telemetry import Address, Listener, LoginSession, NetworkInfo

MAX_ADDRESSES = 64
"""Interface addresses kept (a bridge-heavy host can have hundreds)."""
MAX_LISTENERS = 64
"""Listening sockets kept."""
MAX_SESSIONS = 32
"""Login sessions kept."""
MAX_TEXT = 64
"""Longest interface, process, user, terminal or host string kept."""


def _prefix(netmask: str | None) -> int | None:
    if not netmask:
        return None
    try:
        bits = bin(int(ipaddress.ip_address(netmask))).count("1")
    except ValueError:
        return None
    return bits


def addresses() -> list[Address]:
    """Every IPv4 and IPv6 address of every interface, the interface's order kept."""
    found: list[Address] = []
    for name, entries in psutil.net_if_addrs().items():
        for entry in entries:
            if entry.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            family = "ipv4" if entry.family == socket.AF_INET else "ipv6"
            found.append(Address(interface=name[:MAX_TEXT], family=family,
                                 address=entry.address.split("%")[0][:64],
                                 prefix=_prefix(entry.netmask)))
    return found[:MAX_ADDRESSES]


def _address(hexaddr: str) -> str:
    """An address from ``/proc/net``: IPv4 is one little-endian word, IPv6 four."""
    raw = bytes.fromhex(hexaddr)
    if len(raw) == 4:
        return str(ipaddress.IPv4Address(raw[::-1]))
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    return str(ipaddress.IPv6Address(words))


def parse_proc_net(text: str, proto: str) -> list[tuple[str, str, int]]:
    """(proto, address, port) of the listening sockets in one ``/proc/net`` table: TCP in
    state LISTEN (0A), UDP bound with no peer (state 07, remote port 0)."""
    found = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 4 or ":" not in fields[1]:
            continue
        local, remote, state = fields[1], fields[2], fields[3]
        if (proto == "tcp" and state != "0A") or (proto == "udp" and (
                state != "07" or not remote.endswith(":0000"))):
            continue
        host, _, port = local.rpartition(":")
        try:
            found.append((proto, _address(host), int(port, 16)))
        except ValueError:
            continue
    return found


def listeners(proc: Path = Path("/proc")) -> list[Listener]:
    """Listening TCP sockets and bound UDP sockets, lowest port first, read from the
    kernel's tables (``proc/net``) in a few milliseconds. Which program owns each is not
    looked up: that needs every process's file descriptors (psutil took 50 ms a snapshot
    at load 20), so the answer points to ``ss -tulpn`` for it."""
    rows: set[tuple[str, str, int]] = set()
    for table, proto in (("tcp", "tcp"), ("tcp6", "tcp"), ("udp", "udp"), ("udp6", "udp")):
        try:
            text = (proc / "net" / table).read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        rows.update(parse_proc_net(text, proto))
    ordered = sorted(rows, key=lambda r: (r[2], r[0], r[1]))
    return [Listener(proto="tcp" if proto == "tcp" else "udp", address=address, port=port)
            for proto, address, port in ordered[:MAX_LISTENERS]]


def collect_network(proc: Path = Path("/proc")) -> NetworkInfo:
    """Addresses and listeners now."""
    return NetworkInfo(available=True, addresses=addresses(), listeners=listeners(proc))


def collect_sessions() -> list[LoginSession]:
    """Logged-in users from utmp (what ``who`` prints)."""
    return [LoginSession(user=(u.name or "")[:MAX_TEXT], terminal=(u.terminal or "")[:MAX_TEXT],
                         host=(u.host or "")[:MAX_TEXT], started=float(u.started or 0.0))
            for u in psutil.users()[:MAX_SESSIONS]]
