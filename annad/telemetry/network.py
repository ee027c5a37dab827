"""Interface addresses, listening sockets and logged-in users (psutil, no process spawned).

So "show my ip address", "what is listening?" and "who is logged in?" are answered from the
snapshot offline, as the kernel and uptime are. Listening sockets come from the kernel's
socket tables (``/proc/net``); the owning process is named only where the daemon may read
it (a per-user daemon sees its own), otherwise left empty rather than guessed. Interface
names, process names and user names are untrusted strings.
"""

from __future__ import annotations

import ipaddress
import socket

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


def _names(pids: set[int]) -> dict[int, str]:
    names: dict[int, str] = {}
    for pid in pids:
        try:
            names[pid] = psutil.Process(pid).name()[:MAX_TEXT]
        except psutil.Error:
            continue
    return names


def listeners() -> list[Listener]:
    """Listening TCP sockets and bound UDP sockets with no peer, lowest port first."""
    rows: dict[tuple[str, str, int], int | None] = {}
    for conn in psutil.net_connections(kind="inet"):
        if not conn.laddr:
            continue
        tcp = conn.type == socket.SOCK_STREAM
        if (tcp and conn.status != psutil.CONN_LISTEN) or (not tcp and conn.raddr):
            continue
        key = ("tcp" if tcp else "udp", str(conn.laddr.ip), int(conn.laddr.port))
        rows[key] = rows.get(key) or conn.pid
    names = _names({pid for pid in rows.values() if pid})
    found = [Listener(proto="tcp" if proto == "tcp" else "udp", address=ip[:64], port=port,
                      process=names.get(pid) if pid else None)
             for (proto, ip, port), pid in sorted(rows.items(), key=lambda r: (r[0][2], r[0]))]
    return found[:MAX_LISTENERS]


def collect_network() -> NetworkInfo:
    """Addresses and listeners now."""
    return NetworkInfo(available=True, addresses=addresses(), listeners=listeners())


def collect_sessions() -> list[LoginSession]:
    """Logged-in users from utmp (what ``who`` prints)."""
    return [LoginSession(user=(u.name or "")[:MAX_TEXT], terminal=(u.terminal or "")[:MAX_TEXT],
                         host=(u.host or "")[:MAX_TEXT], started=float(u.started or 0.0))
            for u in psutil.users()[:MAX_SESSIONS]]
