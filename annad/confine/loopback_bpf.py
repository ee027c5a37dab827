"""The instructions of the loopback wall's cgroup BPF programs (:mod:`annad.confine.loopback`
loads and attaches them).

Each is a few dozen instructions, assembled here with symbolic jumps (no Python library
builds cgroup BPF without a compiler): the ``connect`` and UDP ``sendmsg`` hooks compare the
destination with the refused networks word by word, the ``bind`` hooks look at the port, and
the egress program reads the IP header of a packet leaving by the loopback device. Return
1 lets the call or packet go; 0 refuses it (``EPERM``).
"""

from __future__ import annotations

import ipaddress
import struct
import sys


class Unavailable(Exception):
    """The wall cannot be built here: why (the step then runs with no network)."""


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

ATTACH = {"connect4": (10, 4), "connect6": (11, 6), "sendmsg4": (14, 4), "sendmsg6": (15, 6),
           "bind4": (8, 4), "bind6": (9, 6), "egress": (1, 0)}
"""Hook: (``BPF_CGROUP_*`` attach type, IP version)."""
_SKB_IFINDEX, _SKB_DATA, _SKB_DATA_END = 40, 76, 80
"""Offsets in ``struct __sk_buff``: the device a packet leaves by, where it starts and ends."""
_IPV4_HEADER, _IPV4_PROTOCOL, _IPV6_NEXT, _IPV6_HEADER = 20, 9, 6, 40
LOOPBACK_IFINDEX = 1
"""The loopback device's index, in every network namespace."""
_USER_IP4, _USER_IP6, _USER_PORT = 4, 8, 24
"""Offsets in ``struct bpf_sock_addr`` (the destination, in network byte order)."""

# opcodes (linux/bpf_common.h, linux/bpf.h): 32-bit ALU and jumps act on the low word only
_LDX_W, _AND32_K, _MOV32_X, _MOV64_K = 0x61, 0x54, 0xBC, 0xB7
_LDX_H, _LDX_B, _RSH32_K, _LSH32_K = 0x69, 0x71, 0x74, 0x64
_MOV64_X, _ADD64_K, _ADD64_X, _JGT64_X = 0xBF, 0x07, 0x0F, 0x2D
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


def egress_program() -> bytes:
    """The backstop, on every packet a step's socket sends: one leaving by the loopback
    device — delivered on this machine, whatever its address said (an address added while
    the step runs, a ``nat OUTPUT`` rewrite to a local one) — is dropped unless it is TCP or
    UDP to port 53; the sender gets ``EPERM`` (UDP) or its SYN never arrives (TCP). The
    packet is read from its IP header (``data`` is there at this hook), every read checked
    against ``data_end`` as the verifier demands."""
    asm = _Assembler()
    asm.emit(_LDX_W, 2, 1, _SKB_IFINDEX)
    asm.emit(_JNE32_K, 2, off=_ALLOW, imm=LOOPBACK_IFINDEX)
    asm.emit(_LDX_W, 2, 1, _SKB_DATA)
    asm.emit(_LDX_W, 3, 1, _SKB_DATA_END)
    asm.emit(_MOV64_X, 4, 2)
    asm.emit(_ADD64_K, 4, imm=_IPV4_HEADER + 4)  # the shortest header and the ports
    asm.emit(_JGT64_X, 4, 3, off=_DENY)
    asm.emit(_LDX_B, 5, 2, 0)
    asm.emit(_RSH32_K, 5, imm=4)  # the IP version
    asm.emit(_JEQ32_K, 5, off="v6", imm=6)
    asm.emit(_JNE32_K, 5, off=_DENY, imm=4)
    asm.emit(_LDX_B, 6, 2, _IPV4_PROTOCOL)
    asm.emit(_LDX_B, 5, 2, 0)
    asm.emit(_AND32_K, 5, imm=0xF)
    asm.emit(_LSH32_K, 5, imm=2)  # the IPv4 header's length, options included (<= 60)
    asm.emit(_ADD64_X, 2, 5)
    asm.emit(_MOV64_X, 4, 2)
    asm.emit(_ADD64_K, 4, imm=4)
    asm.emit(_JGT64_X, 4, 3, off=_DENY)
    asm.emit(_JA, off="ports")
    asm.label("v6")  # extension headers are not walked: refused on loopback
    asm.emit(_MOV64_X, 4, 2)
    asm.emit(_ADD64_K, 4, imm=_IPV6_HEADER + 4)
    asm.emit(_JGT64_X, 4, 3, off=_DENY)
    asm.emit(_LDX_B, 6, 2, _IPV6_NEXT)
    asm.emit(_ADD64_K, 2, imm=_IPV6_HEADER)
    asm.label("ports")
    asm.emit(_JEQ32_K, 6, off="port", imm=6)
    asm.emit(_JNE32_K, 6, off=_DENY, imm=17)
    asm.label("port")
    asm.emit(_LDX_H, 7, 2, 2)  # the destination port, TCP's and UDP's alike
    asm.emit(_JEQ32_K, 7, off=_ALLOW,
             imm=int.from_bytes(struct.pack("!H", DNS_PORT), sys.byteorder))
    asm.label(_DENY)
    asm.emit(_MOV64_K, 0, imm=0)
    asm.emit(_EXIT)
    asm.label(_ALLOW)
    asm.emit(_MOV64_K, 0, imm=1)
    asm.emit(_EXIT)
    return asm.bytes()


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
    for hook, (_, version) in ATTACH.items():
        if hook.startswith("bind"):
            out[hook] = bind_program()
        elif hook == "egress":
            out[hook] = egress_program()
        elif version == 4:
            out[hook] = program(version, refused4, list(RESOLVER_V4))
        else:
            out[hook] = program(version, refused6, list(RESOLVER_V6))
    return out
