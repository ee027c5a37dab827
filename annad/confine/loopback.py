"""No service of this machine is reached from a captured step: cgroup BPF on its sockets.

A captured step keeps TCP and UDP (a file step may download what it writes), but a service
listening on this machine — a local admin API, a database, a resolver's control port, Anna's
own — would be acted on live, where no judge sees it. The seccomp filter cannot tell
destinations apart (``connect`` takes a pointer) and Landlock's network rules know ports only,
so the kernel's cgroup socket hooks do it: every root capture's process joins one cgroup v2
leaf of this daemon (:data:`LEAF`), and on that leaf four ``BPF_PROG_TYPE_CGROUP_SOCK_ADDR``
programs (``connect`` and UDP ``sendmsg``, IPv4 and IPv6; a TCP Fast Open ``sendto`` and a
UDP ``connect`` pass the ``connect`` hook) refuse with ``EPERM`` a destination in:

- ``127.0.0.0/8`` and ``0.0.0.0/8`` (Linux delivers ``0.0.0.0`` to the machine itself);
- ``::1``, ``::`` and their v4-mapped forms ``::ffff:127.0.0.0/104``, ``::ffff:0.0.0.0/104``;
- every address of this machine's interfaces (and its v4-mapped form), read when the
  programs are loaded — again before each step, so a new DHCP lease is covered.

Port 53 on the loopback ranges stays open: a step resolving a name asks the machine's stub
resolver there (systemd-resolved's ``127.0.0.53``, dnsmasq); a resolver on loopback that takes
dynamic updates from localhost is the one service that remains (docs/security.md).

The programs are a few instructions each, assembled here (no library loads cgroup BPF from
Python without a compiler) and handed to ``bpf(2)`` through ``ctypes``. :func:`walled` is the
daemon's one call (the capture pool's, :mod:`annad.confine.capture_run`): it adds to a root
step's spec either ``{"join": PROCS}`` — the leaf's ``cgroup.procs``, which the capture's child
writes itself into before any wall (:func:`annad.confine.capture_walls.wall_network`) — or,
when the leaf or its programs cannot be made, ``{"none": why}``: the child then takes a network
namespace of its own, with no network at all. Fail closed, never open. A per-user daemon's
steps are not walled: loading cgroup BPF needs ``CAP_BPF`` and ``CAP_NET_ADMIN``, and what a
user's own step reaches on loopback the user reaches anyway (no escalation).
"""

from __future__ import annotations

import atexit
import ctypes
import ipaddress
import json
import logging
import os
import socket
import struct
import sys
import threading
from pathlib import Path

from annad.confine import cgroups

log = logging.getLogger(__name__)

LEAF = "anna-capture-net-"
"""Name of this daemon's leaf (``anna-capture-net-<pid>``), beneath its own cgroup v2."""
REFUSED_V4 = ("127.0.0.0/8", "0.0.0.0/8", "224.0.0.0/4", "255.255.255.255/32")
REFUSED_V6 = ("::1/128", "::/128", "::ffff:127.0.0.0/104", "::ffff:0.0.0.0/104", "ff00::/8",
              "::ffff:224.0.0.0/100", "::ffff:255.255.255.255/128")
"""Loopback and "this host" destinations, whatever the machine's addresses; and multicast and
broadcast, which the kernel loops back to the machine's own listeners too."""
DNS_PORT = 53
RESOLVER_V4 = ("127.0.0.0/8",)
RESOLVER_V6 = ("::1/128", "::ffff:127.0.0.0/104")
"""Where a stub resolver listens: port 53 there stays open."""
MAX_ADDRESSES = 256
"""More interface addresses than this: the program would be long; refused (fail closed)."""

_SYS_BPF = {"x86_64": 321, "aarch64": 280, "riscv64": 280, "armv7l": 386, "i686": 357}
_BPF_PROG_LOAD, _BPF_PROG_ATTACH = 5, 8
_CGROUP_SOCK_ADDR = 18
_ATTACH = {"connect4": (10, 4), "connect6": (11, 6), "sendmsg4": (14, 4), "sendmsg6": (15, 6),
           "bind4": (8, 4), "bind6": (9, 6)}
"""Hook: (``BPF_CGROUP_*`` attach type, IP version)."""
_IFF_BROADCAST = 0x2
_USER_IP4, _USER_IP6, _USER_PORT = 4, 8, 24
"""Offsets in ``struct bpf_sock_addr`` (the destination, in network byte order)."""
_LOCK = threading.Lock()
_LEAF: list[Path] = []
_SAID: set[str] = set()
"""Why the wall could not be built, each reason logged once (not once per step)."""
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


class Unavailable(Exception):
    """The wall cannot be built here: why (the step then runs with no network)."""


# -- the programs ---------------------------------------------------------------------------

# opcodes (linux/bpf_common.h, linux/bpf.h): 32-bit ALU and jumps act on the low word only
_LDX_W, _AND32_K, _MOV32_X, _MOV64_K = 0x61, 0x54, 0xBC, 0xB7
_JEQ32_K, _JNE32_K, _JA, _EXIT = 0x16, 0x56, 0x05, 0x95
_ALLOW, _DENY = "allow", "deny"


def _word(data: bytes) -> int:
    """Four bytes in network order as the program loads them (a native-order u32), as the
    signed 32-bit immediate an instruction carries."""
    value = int.from_bytes(data, sys.byteorder)
    return value - (1 << 32) if value >= 1 << 31 else value


def _words(network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> list[tuple[int, int]]:
    """(mask, value) per 32-bit word of ``network``'s address, masks of 0 left out."""
    address, mask = network.network_address.packed, network.netmask.packed
    out = []
    for i in range(0, len(address), 4):
        if mask[i:i + 4] != b"\0\0\0\0":
            out.append((_word(mask[i:i + 4]), _word(address[i:i + 4])))
    return out


class _Assembler:
    """Instructions with symbolic jump targets: a rule's "next" or the allow/deny exits."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int, int, int | str, int]] = []
        self.labels: dict[str, int] = {}

    def emit(self, op: int, dst: int = 0, src: int = 0, off: int | str = 0,
             imm: int = 0) -> None:
        self.code.append((op, dst, src, off, imm))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def match(self, network: ipaddress.IPv4Network | ipaddress.IPv6Network, target: str,
              name: str) -> None:
        """Jump to ``target`` when the destination (words in r2..r5) is in ``network``."""
        for index, (mask, value) in enumerate(_words(network)):
            self.emit(_MOV32_X, 6, 2 + index)
            if mask != -1:
                self.emit(_AND32_K, 6, imm=mask)
            self.emit(_JNE32_K, 6, off=name, imm=value)
        self.emit(_JA, off=target)
        self.label(name)

    def bytes(self) -> bytes:
        out = b""
        for at, (op, dst, src, off, imm) in enumerate(self.code):
            offset = self.labels[off] - at - 1 if isinstance(off, str) else off
            out += struct.pack("<BBhi", op, (src << 4) | dst, offset, imm)
        return out


def program(version: int, refused: list[str], resolvers: list[str]) -> bytes:
    """The instructions of one hook: ``EPERM`` (return 0) for a destination in ``refused``
    unless it is port 53 in ``resolvers``; everything else allowed (return 1)."""
    asm = _Assembler()
    if version == 4:
        asm.emit(_LDX_W, 2, 1, _USER_IP4)
    else:
        for index in range(4):
            asm.emit(_LDX_W, 2 + index, 1, _USER_IP6 + 4 * index)
    asm.emit(_LDX_W, 7, 1, _USER_PORT)
    asm.emit(_JNE32_K, 7, off="refusals", imm=_word(struct.pack("!H", DNS_PORT) + b"\0\0"))
    for n, text in enumerate(resolvers):
        asm.match(ipaddress.ip_network(text), _ALLOW, f"r{n}")
    asm.label("refusals")
    for n, text in enumerate(refused):
        asm.match(ipaddress.ip_network(text), _DENY, f"d{n}")
    asm.label(_ALLOW)
    asm.emit(_MOV64_K, 0, imm=1)
    asm.emit(_EXIT)
    asm.label(_DENY)
    asm.emit(_MOV64_K, 0, imm=0)
    asm.emit(_EXIT)
    return asm.bytes()


def bind_program() -> bytes:
    """The bind hooks' instructions: ``EPERM`` for a port asked by number (a step would be
    the service a local client expects there: a database, a resolver that is restarting);
    port 0 — the kernel picks — allowed. Ports below 1024 need ``CAP_NET_BIND_SERVICE``,
    which a step has not anyway."""
    asm = _Assembler()
    asm.emit(_LDX_W, 7, 1, _USER_PORT)
    asm.emit(_JNE32_K, 7, off=_DENY, imm=0)
    asm.emit(_MOV64_K, 0, imm=1)
    asm.emit(_EXIT)
    asm.label(_DENY)
    asm.emit(_MOV64_K, 0, imm=0)
    asm.emit(_EXIT)
    return asm.bytes()


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


def programs(v4: list[str], v6: list[str]) -> dict[str, bytes]:
    """Each hook's instructions for a machine with these addresses
    (:func:`own_addresses`)."""
    if len(v4) + len(v6) > MAX_ADDRESSES:
        raise Unavailable(f"this machine has {len(v4) + len(v6)} addresses (at most "
                          f"{MAX_ADDRESSES} are walled off)")
    mapped = [f"::ffff:{a.split('/')[0]}/128" for a in v4]
    refused4 = list(REFUSED_V4) + v4
    refused6 = list(REFUSED_V6) + v6 + mapped
    out = {}
    for hook, (_, version) in _ATTACH.items():
        if hook.startswith("bind"):
            out[hook] = bind_program()
        elif version == 4:
            out[hook] = program(version, refused4, list(RESOLVER_V4))
        else:
            out[hook] = program(version, refused6, list(RESOLVER_V6))
    return out


# -- loading and attaching ------------------------------------------------------------------


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
    attach_type, _ = _ATTACH[hook]
    insns = ctypes.create_string_buffer(code, len(code))
    licence = ctypes.create_string_buffer(b"GPL")
    verifier = ctypes.create_string_buffer(1 << 16)

    def attr(level: int) -> bytes:
        # union bpf_attr, BPF_PROG_LOAD: type, count, insns, license, log level/size/buffer,
        # kern_version, flags, name, ifindex, expected_attach_type
        return struct.pack("<IIQQIIQII16sII", _CGROUP_SOCK_ADDR, len(code) // 8,
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
                _bpf(_BPF_PROG_ATTACH, struct.pack("<IIII", target, prog, _ATTACH[hook][0], 0))
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
        owner = stale.name[len(LEAF):]
        if owner.isdigit() and not Path("/proc", owner).exists():
            try:
                stale.rmdir()
            except OSError as exc:
                log.warning("cannot remove the stale cgroup %s: %s", stale, exc.strerror)
    directory = base / f"{LEAF}{os.getpid()}"
    directory.mkdir(exist_ok=True)
    _LEAF.append(directory)
    atexit.register(_remove, directory)
    return directory


def _remove(directory: Path) -> None:
    """At the daemon's exit: its leaf, empty by then (its programs go with it)."""
    try:
        directory.rmdir()
    except OSError as exc:
        log.warning("cannot remove the cgroup %s: %s", directory, exc.strerror)


def prepare() -> Path:
    """The leaf with this machine's programs on it now; Unavailable says why not."""
    with _LOCK:
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


def walled(spec: str) -> str:
    """A step's spec (JSON) with its network wall: a root step's ``network`` is the leaf's
    ``cgroup.procs`` to join, or no network at all when the wall cannot be built. A per-user
    (``userns``) step or a probe is returned as it is."""
    data = json.loads(spec)
    if not isinstance(data, dict) or data.get("userns") or "probe" in data:
        return spec
    try:
        data["network"] = {"join": str(prepare() / "cgroup.procs")}
    except Unavailable as exc:
        if str(exc) not in _SAID:
            _SAID.add(str(exc))
            log.warning("%s; captured steps run with no network at all", exc)
        data["network"] = {"none": str(exc)}
    return json.dumps(data)
