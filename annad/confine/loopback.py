"""No service of this machine is reached from a captured step: cgroup BPF on its sockets.

A captured step keeps TCP and UDP (a file step may download what it writes), but a service
listening on this machine — a local admin API, a database, a resolver's control port, Anna's
own — would be acted on live, where no judge sees it. The seccomp filter cannot tell
destinations apart (``connect`` takes a pointer) and Landlock's network rules know ports only,
so the kernel's cgroup hooks do it: every root capture's process joins one cgroup v2 leaf of
this daemon (:data:`LEAF`), and on that leaf the programs of
:mod:`annad.confine.loopback_bpf` answer ``EPERM``:

- ``connect`` (TCP, a UDP ``connect``, a TCP Fast Open ``sendto``) and UDP ``sendmsg`` to
  ``127.0.0.0/8``, ``0.0.0.0/8`` (Linux delivers ``0.0.0.0`` to the machine itself), ``::1``,
  ``::``, their v4-mapped forms, multicast and broadcast (looped back to local listeners),
  and every address of this machine's interfaces with each link's broadcast address —
  read again before each step (``getifaddrs``), so a new lease is covered;
- ``bind`` to a port asked by number (the step would stand in for a local service);
- the backstop: any packet of the step's sockets that leaves by the loopback device — what
  the machine delivers to itself, whatever the address said (one added during the step, a
  ``nat OUTPUT`` rewrite) — is dropped.

Port 53 stays open on the loopback ranges: a step resolving a name asks the machine's stub
resolver there (systemd-resolved's ``127.0.0.53``, dnsmasq); a resolver on loopback that takes
dynamic updates from localhost is the one service that remains (docs/security.md).

:func:`walled` is the daemon's one call (the capture pool's,
:func:`annad.confine.capture_run.run_capture`): it adds to a root step's spec either
``{"join": PROCS}`` — the leaf's ``cgroup.procs``, which the capture's child writes itself into
before any namespace or socket (:func:`annad.confine.capture_walls.wall_network`) — or, when
the leaf or its programs cannot be made, ``{"none": why}``: the child then takes a network
namespace of its own, with no network at all. Fail closed, never open. A per-user daemon's
steps are not walled: loading cgroup BPF needs ``CAP_BPF`` and ``CAP_NET_ADMIN``, and what a
user's own step reaches on loopback the user reaches anyway (no escalation).
"""

from __future__ import annotations

import atexit
import ctypes
import json
import logging
import os
import socket
import struct
import threading
from pathlib import Path

from annad.confine import cgroups, leafowner
from annad.confine.loopback_bpf import ATTACH, MAX_ADDRESSES, Unavailable, programs

__all__ = ["MAX_ADDRESSES", "Unavailable", "load", "own_addresses", "prepare", "programs",
           "walled"]

log = logging.getLogger(__name__)

LEAF = "anna-capture-net-"
"""Name of this daemon's leaf (``anna-capture-net-<owner>``, :func:`annad.confine.leafowner.owner`),
beneath its own cgroup v2."""
_SYS_BPF = {"x86_64": 321, "aarch64": 280, "riscv64": 280, "armv7l": 386, "i686": 357}
_BPF_PROG_LOAD, _BPF_PROG_ATTACH = 5, 8
_CGROUP_SKB, _CGROUP_SOCK_ADDR = 8, 18
_IFF_BROADCAST = 0x2
_LOCK = threading.Lock()
_LEAF: list[Path] = []
_SAID: set[str] = set()
"""Why the wall could not be built, each reason logged once (not once per step)."""
_LAST: list[str | None] = []
"""The last answer: why the wall could not be built, or None (it holds)."""
_ATTACHED: list[tuple[list[str], list[str]]] = []
"""The addresses the leaf's programs refuse now: built and loaded again only when the
machine's addresses changed (assembling them costs milliseconds; reading the addresses,
tenths of one)."""
_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.syscall.restype = ctypes.c_long


class _IfAddrs(ctypes.Structure):
    """``struct ifaddrs`` (the broadcast/destination union as one pointer)."""


_IfAddrs._fields_ = [("next", ctypes.POINTER(_IfAddrs)), ("name", ctypes.c_char_p),
                     ("flags", ctypes.c_uint), ("addr", ctypes.c_void_p),
                     ("netmask", ctypes.c_void_p), ("ifu", ctypes.c_void_p),
                     ("data", ctypes.c_void_p)]


# -- the programs ---------------------------------------------------------------------------

def own_addresses() -> tuple[list[str], list[str]]:
    """This machine's interface addresses now (``getifaddrs``), IPv4 ones with their
    broadcast address: IPv4 and IPv6 as /32, /128."""
    head = ctypes.POINTER(_IfAddrs)()
    if _LIBC.getifaddrs(ctypes.byref(head)) != 0:
        error = ctypes.get_errno()
        raise Unavailable(f"cannot list this machine's addresses: {os.strerror(error)}")
    v4: set[str] = set()
    v6: set[str] = set()
    try:
        entry = head
        while entry:
            addr = entry.contents.addr
            if addr:
                family = ctypes.c_ushort.from_address(addr).value
                if family == socket.AF_INET:
                    v4.add(f"{socket.inet_ntop(family, ctypes.string_at(addr + 4, 4))}/32")
                    other = entry.contents.ifu  # the broadcast address, if the link has one
                    if entry.contents.flags & _IFF_BROADCAST and other:
                        raw = ctypes.string_at(other + 4, 4)
                        v4.add(f"{socket.inet_ntop(family, raw)}/32")
                elif family == socket.AF_INET6:
                    raw = ctypes.string_at(addr + 8, 16)
                    v6.add(f"{socket.inet_ntop(family, raw)}/128")
            entry = entry.contents.next
    finally:
        _LIBC.freeifaddrs(head)
    return sorted(v4), sorted(v6)




def _bpf(command: int, attr: bytes) -> int:
    number = _SYS_BPF.get(os.uname().machine)
    if number is None:
        raise Unavailable(f"bpf(2) is not known on {os.uname().machine}")
    buffer = ctypes.create_string_buffer(attr, 128)  # the rest of union bpf_attr: zero
    result = int(_LIBC.syscall(ctypes.c_long(number), ctypes.c_int(command), buffer,
                              ctypes.c_uint(128)))
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
    return result


def load(hook: str, code: bytes) -> int:
    """Load one hook's program; its descriptor (OSError with the verifier's log if refused)."""
    attach_type, _ = ATTACH[hook]
    insns = ctypes.create_string_buffer(code, len(code))
    licence = ctypes.create_string_buffer(b"GPL")
    verifier = ctypes.create_string_buffer(1 << 16)

    def attr(level: int) -> bytes:
        # union bpf_attr, BPF_PROG_LOAD: type, count, insns, license, log level/size/buffer,
        # kern_version, flags, name, ifindex, expected_attach_type
        kind = _CGROUP_SKB if hook == "egress" else _CGROUP_SOCK_ADDR
        return struct.pack("<IIQQIIQII16sII", kind, len(code) // 8,
                           ctypes.addressof(insns), ctypes.addressof(licence), level,
                           len(verifier) if level else 0,
                           ctypes.addressof(verifier) if level else 0, 0, 0,
                           f"anna_{hook}".encode(), 0, attach_type)

    try:
        return _bpf(_BPF_PROG_LOAD, attr(0))
    except OSError:
        pass
    try:  # again, for the verifier's reason
        return _bpf(_BPF_PROG_LOAD, attr(1))
    except OSError as exc:
        why = verifier.value.decode(errors="replace").strip().splitlines()[-2:]
        raise OSError(exc.errno, f"{exc.strerror} {why}") from None


def attach(directory: Path, codes: dict[str, bytes]) -> None:
    """Load ``codes`` and attach them to the cgroup ``directory``, each replacing the one
    there before (flags 0 keep exactly one program per hook)."""
    target = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for hook, code in codes.items():
            prog = load(hook, code)
            try:
                _bpf(_BPF_PROG_ATTACH, struct.pack("<IIII", target, prog, ATTACH[hook][0], 0))
            finally:
                os.close(prog)  # the cgroup holds the program
    finally:
        os.close(target)


def _leaf() -> Path:
    """This daemon's leaf (made once; stale ones of dead daemons removed)."""
    if _LEAF:
        return _LEAF[0]
    base = cgroups.v2_directory()
    if isinstance(base, str):
        raise Unavailable(base)
    for stale in base.glob(f"{LEAF}*"):
        if leafowner.gone(stale.name[len(LEAF):]):
            try:
                stale.rmdir()
            except OSError as exc:
                log.warning("cannot remove the stale cgroup %s: %s", stale, exc.strerror)
    directory = base / f"{LEAF}{leafowner.owner()}"
    directory.mkdir(exist_ok=True)
    _LEAF.append(directory)
    atexit.register(_remove, directory)
    return directory


def _remove(directory: Path) -> None:
    """At the daemon's exit: its leaf, empty by then (its programs go with it)."""
    try:
        directory.rmdir()
    except OSError as exc:
        log.debug("cannot remove the cgroup %s: %s", directory, exc.strerror)  # busy: next start


def prepare() -> Path:
    """The leaf with this machine's programs on it now; Unavailable says why not."""
    with _LOCK:
        if _LEAF and not _LEAF[0].is_dir():  # removed behind this daemon's back: made again
            _LEAF.clear()
            _ATTACHED.clear()
        try:
            directory = _leaf()
            addresses = own_addresses()
            if [addresses] != _ATTACHED:
                _ATTACHED.clear()
                attach(directory, programs(*addresses))
                _ATTACHED.append(addresses)
        except OSError as exc:
            raise Unavailable(f"the loopback wall could not be set up: {exc}") from None
        return directory


def adopt(pid: int) -> None:
    """A root daemon's capture helper ``pid`` into the leaf, so that its steps are born there;
    where that fails, each step joins on its own (:func:`walled` still names the leaf)."""
    if os.geteuid() != 0:
        return
    try:
        with _LOCK:
            directory = _leaf()
        (directory / "cgroup.procs").write_text(str(pid))
    except (OSError, Unavailable) as exc:
        log.debug("capture helper %d not moved into the loopback wall: %s", pid, exc)


def problem() -> str | None:
    """Why the wall could not be built the last time a root step asked for it (or at the
    daemon's start), or None while it holds: ``GET /v1/health`` says it."""
    return _LAST[-1] if _LAST else None


def check() -> str | None:
    """At a root daemon's start: build the wall once, so that health and the log say before
    any step whether captured steps will have a network; the reason, or None."""
    try:
        prepare()
    except Unavailable as exc:
        _said(str(exc))
        return str(exc)
    _LAST[:] = [None]
    return None


def _said(why: str) -> None:
    _LAST[:] = [why]
    if why not in _SAID:
        _SAID.add(why)
        log.warning("%s; captured steps run with no network at all", why)


def walled(spec: str) -> str:
    """A step's spec (JSON) with its network wall: a root step's ``network`` is the leaf's
    ``cgroup.procs`` to join, or no network at all when the wall cannot be built. A per-user
    (``userns``) step or a probe is returned as it is."""
    data = json.loads(spec)
    if not isinstance(data, dict) or data.get("userns") or "probe" in data:
        return spec
    try:
        data["network"] = {"join": str(prepare() / "cgroup.procs")}
        _LAST[:] = [None]
    except Unavailable as exc:
        _said(str(exc))
        data["network"] = {"none": str(exc)}
    return json.dumps(data)
