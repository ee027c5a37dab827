"""The loopback wall's backstop: an address the machine got after the wall was built.

``unshare -n PYTHON loopback_driver.py``: in a network namespace of its own (the leaf and its
programs are the machine's cgroup v2; the addresses and listeners are this namespace's), the
driver builds the wall for the addresses there (loopback only), then adds 192.0.2.1 and
2001:db8::1 to ``lo`` — as a new lease does while a step runs — with a UDP listener on each
and a stand-in resolver on 127.0.0.53:53. A forked child joins the leaf, as a captured step
does, and sends to each: the ``connect``/``sendmsg`` hooks do not know the new addresses;
the egress program sees the packets leave by ``lo`` and drops them. Prints one JSON object:
the errno of each send (0: sent) and whether each listener got a datagram.

Then the capture's own join (:func:`annad.confine.capture_walls.wall_network`) twice: into
the wall's leaf, and into a bare leaf with no program (a wall the kernel does not run, as
with v1 ``net_cls`` in use): the first stays walled (a UDP ``connect`` to 127.0.0.1 is
``EPERM``), the second falls back to no network (``ENETUNREACH``), with ``wall_*`` the errnos.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from annad.confine import capture_walls, cgroups, loopback


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


def main() -> int:
    """Build the wall, add the addresses, send from the leaf; print what happened."""
    if os.readlink("/proc/self/ns/net") == os.readlink(f"/proc/{os.getppid()}/ns/net"):
        raise SystemExit("run the driver as unshare -n: its addresses must not be the machine's")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
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
