"""The loopback wall's backstop: an address the machine got after the wall was built.

``unshare -n PYTHON loopback_driver.py``: in a network namespace of its own (the leaf and its
programs are the machine's cgroup v2; the addresses and listeners are this namespace's), the
driver builds the wall for the addresses there (loopback only), then adds 192.0.2.1 and
2001:db8::1 to ``lo`` — as a new lease does while a step runs — with a UDP listener on each
and a stand-in resolver on 127.0.0.53:53. A forked child joins the leaf, as a captured step
does, and sends to each: the ``connect``/``sendmsg`` hooks do not know the new addresses;
the egress program sees the packets leave by ``lo`` and drops them. Prints one JSON object:
the errno of each send (0: sent) and whether each listener got a datagram.

``loopback_driver.py dnat``: the machine's own firewall rewrites a packet to an address
elsewhere into one to this machine (``nat OUTPUT`` DNAT to 127.0.0.1 and ``::1``; the
addresses elsewhere are routed out of a veth link). The ``connect``/``sendmsg`` hooks see
the address elsewhere and let it pass; the egress program sees the rewritten packet leave
by ``lo`` and drops it. A child outside the leaf shows the rewrite reaches the listeners;
one in the leaf sends UDP and connects TCP. Outside, the driver waits for the handshake and
the listeners (conditions, bounded by ``WAIT_S``); inside, what proves nothing got through
is synchronous: the send's errno, and ``lo``'s count of packets sent, which a packet the
egress program drops never reaches. Prints, per child, the errnos, the TCP state, the
packets ``lo`` sent for the child in the leaf and what the listeners got.

Then the capture's own join (:func:`annad.confine.capture_walls.wall_network`) twice: into
the wall's leaf, and into a bare leaf with no program (a wall the kernel does not run, as
with v1 ``net_cls`` in use): the first stays walled (a UDP ``connect`` to 127.0.0.1 is
``EPERM``), the second falls back to no network (``ENETUNREACH``), with ``wall_*`` the errnos.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from annad.confine import capture_walls, cgroups, loopback
from tests.waiting import WAIT_S


def _bound(family: int, address: tuple[str, int]) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.setblocking(False)
    return sock


def _received(sock: socket.socket) -> bool:
    """Whether a datagram arrived (it is queued when the sender's call returned)."""
    try:
        sock.recv(64)
    except BlockingIOError:
        return False
    return True


def _sends(procs: Path, targets: dict[str, tuple[int, tuple[str, int]]]) -> dict[str, int]:
    """In the child: join the leaf, send to each target; the errno of each (0: sent)."""
    fd = os.open(procs, os.O_WRONLY)
    os.write(fd, b"0")
    os.close(fd)
    out = {}
    for name, (family, address) in targets.items():
        try:
            socket.socket(family, socket.SOCK_DGRAM).sendto(b"hi", address)
            out[name] = 0
        except OSError as exc:
            out[name] = exc.errno or -1
    return out


def _in_child(work: Callable[[], object]) -> object:
    """``work()`` in a forked child; what it returned (JSON through a pipe)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - reports through the pipe
        try:
            os.write(write, json.dumps(work()).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        out = json.loads(pipe.read())
    os.waitpid(pid, 0)
    return out


def _joined(procs: Path) -> int:
    """In the child: the capture's join, then a UDP connect to 127.0.0.1; its errno."""
    capture_walls.wall_network({"network": {"join": str(procs)}})
    try:
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).connect(("127.0.0.1", 9))
    except OSError as exc:
        return exc.errno or -1
    return 0


ELSEWHERE = {"v4": ("198.51.100.7", "127.0.0.1"), "v6": ("2001:db8:100::7", "::1")}
"""Per family: the address elsewhere a step sends to, and the local one DNAT makes it."""
_TCP_STATES = {1: "established", 2: "syn_sent"}


def _rewrite_elsewhere(ports: dict[str, int]) -> None:
    """Route the addresses elsewhere out of a veth link; DNAT them (port 7777) to the local
    address, at the family's port of ``ports``."""
    for argv in (["ip", "link", "add", "anna0", "type", "veth", "peer", "name", "anna1"],
                 ["ip", "addr", "add", "10.200.0.1/24", "dev", "anna0"],
                 ["ip", "addr", "add", "fd00:200::1/64", "dev", "anna0", "nodad"],
                 ["ip", "link", "set", "anna0", "up"], ["ip", "link", "set", "anna1", "up"],
                 ["ip", "route", "add", "198.51.100.0/24", "via", "10.200.0.2"],
                 ["ip", "-6", "route", "add", "2001:db8:100::/64", "via", "fd00:200::2"]):
        subprocess.run(argv, check=True)
    for tool, name in (("iptables", "v4"), ("ip6tables", "v6")):
        far, near = ELSEWHERE[name]
        target = f"{near}:{ports[name]}" if name == "v4" else f"[{near}]:{ports[name]}"
        for proto in ("udp", "tcp"):
            done = subprocess.run([tool, "-t", "nat", "-A", "OUTPUT", "-d", far, "-p", proto,
                                   "--dport", "7777", "-j", "DNAT", "--to-destination", target],
                                  capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"no nat table here: {tool}: {done.stderr.strip()}")


def _reach_elsewhere(procs: Path | None) -> dict[str, object]:
    """In the child: join the leaf (unless None), send UDP to and connect TCP to each
    address elsewhere; the errno of each send and connect and the TCP state after it
    (outside the leaf once the handshake is done, or a minute has passed)."""
    if procs is not None:
        fd = os.open(procs, os.O_WRONLY)
        os.write(fd, b"0")
        os.close(fd)
    out: dict[str, object] = {}
    for name, (far, _) in ELSEWHERE.items():
        family = socket.AF_INET if name == "v4" else socket.AF_INET6
        try:
            socket.socket(family, socket.SOCK_DGRAM).sendto(b"hi", (far, 7777))
            out[f"udp_{name}"] = 0
        except OSError as exc:
            out[f"udp_{name}"] = exc.errno or -1
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setblocking(False)
        out[f"tcp_{name}"] = sock.connect_ex((far, 7777))
        if procs is None:  # writable: the handshake ended, one way or the other
            select.select([], [sock], [], WAIT_S)
        state = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0]
        out[f"tcp_state_{name}"] = _TCP_STATES.get(state, state)
        sock.close()
    return out


def _got(listeners: dict[str, socket.socket], *, wait: float) -> dict[str, bool]:
    """Which listeners got something (a datagram, a connection) within ``wait`` seconds
    each, each emptied."""
    got = {}
    for name, sock in listeners.items():
        got[name] = bool(select.select([sock], [], [], wait)[0])
        if got[name] and sock.type == socket.SOCK_STREAM:
            sock.accept()[0].close()
        elif got[name]:
            sock.recv(64)
    return got


def _lo_sent() -> int:
    """Packets this namespace's loopback device has sent (counted as each leaves, in the
    sender's own call: a packet the egress program drops is never counted)."""
    for line in Path("/proc/net/dev").read_text().splitlines():
        name, _, counters = line.partition(":")
        if name.strip() == "lo":
            return int(counters.split()[9])
    raise SystemExit("no lo in /proc/net/dev")


def dnat() -> int:
    """Listeners on 127.0.0.1 and ``::1``, the rewrite, one child outside the leaf and one in
    it; print what each did and what the listeners got."""
    listeners: dict[str, socket.socket] = {}
    for name, (_, near) in ELSEWHERE.items():
        family = socket.AF_INET if name == "v4" else socket.AF_INET6
        udp = _bound(family, (near, 0))
        tcp = socket.socket(family, socket.SOCK_STREAM)
        tcp.bind((near, udp.getsockname()[1]))
        tcp.listen(8)
        tcp.setblocking(False)
        listeners |= {f"udp_{name}": udp, f"tcp_{name}": tcp}
    _rewrite_elsewhere({name: listeners[f"udp_{name}"].getsockname()[1] for name in ELSEWHERE})
    procs = loopback.prepare() / "cgroup.procs"
    sent = _lo_sent()
    outside = _in_child(lambda: _reach_elsewhere(None))
    outside_got = _got(listeners, wait=WAIT_S)
    outside_sent = _lo_sent() - sent
    sent = _lo_sent()
    inside = _in_child(lambda: _reach_elsewhere(procs))
    inside_sent = _lo_sent() - sent
    inside_got = _got(listeners, wait=0)
    print(json.dumps({"outside": outside, "outside_got": outside_got,
                      "outside_lo_sent": outside_sent, "inside": inside,
                      "inside_lo_sent": inside_sent, "inside_got": inside_got}))
    return 0


def main() -> int:
    """Build the wall, add the addresses, send from the leaf; print what happened."""
    if os.readlink("/proc/self/ns/net") == os.readlink(f"/proc/{os.getppid()}/ns/net"):
        raise SystemExit("run the driver as unshare -n: its addresses must not be the machine's")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    if sys.argv[1:] == ["dnat"]:
        return dnat()
    procs = loopback.prepare() / "cgroup.procs"
    # an IPv6 address is "tentative" (bind: EADDRNOTAVAIL) until duplicate address detection
    # ends, which can take a while on a busy machine: nodad, as a lease's address is usable
    for address, flags in (("192.0.2.1/32", []), ("2001:db8::1/128", ["nodad"])):
        subprocess.run(["ip", "addr", "add", address, "dev", "lo", *flags], check=True)
    listeners = {"new_v4": _bound(socket.AF_INET, ("192.0.2.1", 0)),
                 "new_v6": _bound(socket.AF_INET6, ("2001:db8::1", 0)),
                 "resolver": _bound(socket.AF_INET, ("127.0.0.53", 53))}
    targets: dict[str, tuple[int, tuple[str, int]]] = {
        name: (int(sock.family), sock.getsockname()[:2]) for name, sock in listeners.items()}
    sent = _in_child(lambda: _sends(procs, targets))
    received = {name: _received(s) for name, s in listeners.items()}
    base = cgroups.v2_directory()
    assert not isinstance(base, str), base
    bare = base / f"anna-test-bare-{os.getpid()}"
    bare.mkdir()
    try:
        walled = _in_child(lambda: _joined(procs))
        unwalled = _in_child(lambda: _joined(bare / "cgroup.procs"))
    finally:
        bare.rmdir()
    print(json.dumps({"sent": sent, "received": received, "wall_joined": walled,
                      "wall_bare": unwalled}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
