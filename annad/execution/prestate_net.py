"""Typed pre-state of network configuration: what an ``ip`` step may change, read before it
and compared after the undo.

An ``ip`` call on links, addresses, routes or rules (``ip addr add``, ``ip link set``,
``ip route replace``, ``ip rule del`` …, spelled as ``ip`` abbreviates them) records the
network configuration the daemon's namespace has before the step: every link with its
addresses (``ip -d addr show``), every route of every table and every rule, IPv4 and IPv6.
The whole configuration, not the part the call names: a call Anna reads wrongly, or a
verb that does more than its name (``ip addr flush``, ``ip route restore``), is still
inside it — but not a link made in, or moved to, another namespace: a ``link`` call naming
``netns``/``link-netns…``, or with a word only known when it runs (a variable, ``xargs``
input), is not typed. What changes by itself is left out: address lifetimes, carrier and
operational state, route expiry, the interface index (a link made again gets a new one).
A configuration whose listing passes 8 MiB (tens of thousands of routes) cannot be
recorded, and the step is refused before it runs, as a package state that cannot be read.

Undo runs the plan's rollback command, then reads the configuration again: the same is
``rolled_back``; anything else is ``rollback_incomplete`` with the differences listed. Anna
does not write the configuration back by itself: a network it rebuilt from a listing could
cut the machine off (the person may be on SSH). A call Anna cannot read this way — another
namespace (``-n``, ``netns``), a batch file, an object outside the four (``neigh``,
``xfrm``, ``tunnel``, ``nexthop`` …), an option it does not know — stays an untyped live
program whose undo is unverified (:func:`annad.execution.prestate.untyped_live`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anna_common.shell.grammar import SimpleCommand

OBJECTS = ("address", "addrlabel", "maddress", "route", "rule", "neighbor", "neighbour",
           "ntable", "ntbl", "link", "l2tp", "fou", "ila", "macsec", "tunnel", "tunl", "tuntap",
           "tap", "token", "tcpmetrics", "tcp_metrics", "monitor", "xfrm", "mroute", "mrule",
           "netns", "netconf", "vrf", "sr", "nexthop", "mptcp", "ioam", "help", "stats")
"""``ip``'s objects in the order it matches an abbreviation against them (the first whose
name starts with the word: ``ip r`` is ``route``, ``ip ru`` is ``rule``)."""
TYPED = frozenset({"address", "link", "route", "rule"})
"""The objects whose configuration :data:`READ_ARGVS` reads."""
_FLAGS = frozenset({"-4", "-6", "-0", "-d", "-details", "-s", "-stats", "-statistics", "-j",
                    "-json", "-p", "-pretty", "-o", "-oneline", "-r", "-resolve", "-h",
                    "-human", "-c", "-color", "-t", "-timestamp", "-ts", "-tshort", "-br",
                    "-brief", "-N", "-Numeric"})
"""Options that only change how ``ip`` prints; any other option (``-n`` another namespace,
``-b`` a batch file, ``-force``, ``-l`` …) leaves the call untyped."""
_FAMILY = frozenset({"-f", "-family"})
_VOLATILE = frozenset({"ifindex", "operstate", "valid_life_time", "preferred_life_time",
                       "expires", "stats", "stats64", "link_index"})
_VOLATILE_FLAGS = frozenset({"LOWER_UP", "NO-CARRIER", "DORMANT", "M-DOWN", "RUNNING"})
READ_ARGVS = (["ip", "-j", "-d", "addr", "show"],
              ["ip", "-j", "-d", "-4", "route", "show", "table", "all"],
              ["ip", "-j", "-d", "-6", "route", "show", "table", "all"],
              ["ip", "-j", "-4", "rule", "show"], ["ip", "-j", "-6", "rule", "show"])
"""What the configuration is read with: links and addresses, routes, rules."""
_PARTS = ("link", "route4", "route6", "rule4", "rule6")


def ip_object(word: str) -> str | None:
    """The object ``ip`` makes of ``word`` (its first-match abbreviation), or None."""
    if not word:
        return None
    return next((name for name in OBJECTS if name.startswith(word)), None)


def ip_call(cmd: SimpleCommand) -> bool:
    """Whether ``cmd`` is an ``ip`` call whose effect lies within what
    :data:`READ_ARGVS` reads (see the module text)."""
    if cmd.program != "ip":
        return False
    words = cmd.args
    index = 0
    while index < len(words) and words[index].text.startswith("-"):
        word = words[index]
        text = word.text[1:] if word.text.startswith("--") and word.text != "--" else word.text
        if not word.literal:
            return False
        if text in _FAMILY:
            if index + 1 >= len(words) or not words[index + 1].literal:
                return False
            index += 2
            continue
        if text not in _FLAGS:
            return False
        index += 1
    if index >= len(words) or not words[index].literal:
        return False
    found = ip_object(words[index].text)
    if found == "link":  # a link made in or moved to another namespace is not read here
        rest = words[index + 1:]
        return not cmd.stdin_args and all(
            w.literal and not w.text.startswith(("net", "link-net")) for w in rest)
    return found in TYPED


def _clean(item: dict[str, object]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in item.items():
        if key in _VOLATILE or "carrier" in key:
            continue
        out[key] = sorted(str(f) for f in value if f not in _VOLATILE_FLAGS) \
            if key == "flags" and isinstance(value, list) else value
    return out


def _items(part: str, listing: object) -> list[str]:
    """One canonical line per link, address, route or rule of one listing."""
    if not isinstance(listing, list):
        raise ValueError(f"not a list: {part}")
    lines = []
    for raw in listing:
        if not isinstance(raw, dict):
            raise ValueError(f"not an object in {part}")
        item = _clean(raw)
        addresses = item.pop("addr_info", []) if part == "link" else []
        lines.append(f"{part} {json.dumps(item, sort_keys=True)}")
        for address in addresses if isinstance(addresses, list) else []:
            if isinstance(address, dict):
                lines.append(f"address {item.get('ifname')} "
                             f"{json.dumps(_clean(address), sort_keys=True)}")
    return lines


def canonical(outputs: list[str]) -> str:
    """The configuration from :data:`READ_ARGVS`' outputs, one sorted line per item;
    ValueError when an output is not ``ip``'s JSON."""
    lines: list[str] = []
    for part, output in zip(_PARTS, outputs, strict=True):
        lines += _items(part, json.loads(output or "[]"))
    return "\n".join(sorted(lines))


def differences(before: str, now: str, *, most: int = 8) -> str:
    """The items that differ, ``-`` gone and ``+`` new, at most ``most`` of them."""
    old, new = set(before.splitlines()), set(now.splitlines())
    changed = [f"- {line}" for line in sorted(old - new)] + \
              [f"+ {line}" for line in sorted(new - old)]
    more = f"; and {len(changed) - most} more" if len(changed) > most else ""
    return "; ".join(changed[:most]) + more
