"""Network configuration with typed pre-state: an ``ip`` step's links, addresses, routes and
rules are read before it and again after the undo, so its rollback is ``rolled_back`` only
when Anna saw the configuration as before, and ``rollback_incomplete`` with the differences
otherwise (annad/execution/prestate_net.py; issue 19, items 4 and 5).

The daemon runs as root in a network namespace of its own (``unshare -n``): every address
and route here is that namespace's, never the machine's. Which calls are typed is checked
against the real ``ip`` (its own reading of abbreviations) and through the spellings bash
treats alike.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from anna_common.shell.grammar import analyse
from annad.execution import prestate_net
from annad.execution.prestate import untyped_live
from annad.execution.prestate_values import value_calls
from tests.daemonfix import IS_ROOT, netns_root_daemon, run_and_roll_back

if TYPE_CHECKING:
    from tests.daemonfix import RunningDaemon

TYPED = ["ip addr add 192.0.2.9/32 dev lo", "ip a a 192.0.2.9/32 dev lo",
         "ip --json address add 192.0.2.9/32 dev lo", "sudo ip -4 addr add 192.0.2.9/32 dev lo",
         "env LC_ALL=C ip -f inet addr add 192.0.2.9/32 dev lo",
         "bash -c 'ip link set lo mtu 1500'", "ip l s lo down", "'ip' r add 198.51.100.0/24 dev lo",
         "ip ru add pref 100 table 100", 'ip addr add "$ADDR" dev lo',
         "ip -d -s -br addr flush dev lo", "xargs ip addr add",
         "ip route restore <<< \"$dump\"", "/usr/sbin/ip addr del 127.0.0.1/8 dev lo"]
UNTYPED = ["ip -n other addr add 192.0.2.9/32 dev lo", "ip -netns other link set lo down",
           "ip -b cmds.txt", "ip -batch cmds.txt", "ip -force -b cmds.txt",
           "ip neigh add 192.0.2.1 lladdr 0:0:0:0:0:1 dev lo", "ip n flush all",
           "ip netns exec other ip addr add 192.0.2.9/32 dev lo", "ip -all netns exec true",
           "ip addrlabel add prefix ::/0 label 9", "ip xfrm state flush", "ip tunnel add t0",
           "ip nexthop add id 1 dev lo", "ip $OBJ add 192.0.2.9/32 dev lo",
           "ip -l 5 addr flush dev lo", "ip tuntap add tap0 mode tap", "ip mptcp limits set",
           # a link made in, or moved to, another namespace: not in what Anna reads
           "ip link add x netns other type dummy", "ip link set lo netns 1",
           "ip l a x type veth peer name y netns other", "ip link add x link-netnsid 3",
           "ip link set lo $WHERE", "xargs ip link add", "ip link add x type dummy netn other"]


def _ip_calls(command: str) -> list[bool]:
    return [prestate_net.ip_call(cmd) for cmd in analyse(command).commands
            if cmd.program == "ip"]


@pytest.mark.parametrize("command", TYPED)
def test_a_call_on_links_addresses_routes_or_rules_is_typed(command: str) -> None:
    assert _ip_calls(command) == [True], command
    assert "ip" not in untyped_live(command)


@pytest.mark.parametrize("command", UNTYPED)
def test_a_call_outside_what_anna_reads_stays_unverified(command: str) -> None:
    assert True not in _ip_calls(command), command
    assert "ip" in untyped_live(command)  # its undo says rollback_unverified


@pytest.mark.skipif(shutil.which("ip") is None or not IS_ROOT,
                    reason="needs root (unshare -n) and ip (.ci/run installs iproute2)")
def test_the_abbreviations_are_read_as_the_real_ip_reads_them() -> None:
    # `ip WORD help` names the object ip made of WORD; every prefix of every object
    words = sorted({name[:n] for name in prestate_net.OBJECTS for n in range(1, len(name) + 1)})
    usage = {"address": "address", "link": "link", "route": "route", "rule": "rule"}
    for word in words:
        done = subprocess.run(["unshare", "-n", "ip", word, "help"], capture_output=True,
                              text=True, check=False)
        text = done.stdout + done.stderr
        real = next((obj for obj, shown in usage.items()
                     if f"Usage: ip {shown} " in text or f"Usage: ip {shown}\n" in text), None)
        if "Object \"" in text and "is unknown" in text:
            real = None
        ours = prestate_net.ip_object(word)
        if ours == "mrule":  # multicast rules, not read; ip shows the rule usage for them
            assert real == "rule", (word, text[:200])
            continue
        assert (ours if ours in prestate_net.TYPED else None) == real, (word, text[:200])


def test_what_changes_by_itself_is_not_compared() -> None:
    link = {"ifindex": 3, "ifname": "eth0", "flags": ["BROADCAST", "UP", "LOWER_UP"],
            "operstate": "UP", "mtu": 1500, "carrier_changes": 4,
            "addr_info": [{"family": "inet", "local": "10.0.0.5", "prefixlen": 24,
                           "dynamic": True, "valid_life_time": 3000,
                           "preferred_life_time": 3000}]}
    later = {**link, "ifindex": 9, "flags": ["UP", "BROADCAST", "NO-CARRIER"],
             "operstate": "DOWN", "carrier_changes": 5,
             "addr_info": [{**link["addr_info"][0], "valid_life_time": 2990,  # type: ignore[index]
                            "preferred_life_time": 2990}]}
    route = {"dst": "2001:db8::/64", "dev": "eth0", "expires": 100}
    one = prestate_net.canonical([json.dumps([link]), json.dumps([route]), "[]", "[]", "[]"])
    two = prestate_net.canonical([json.dumps([later]), json.dumps([{**route, "expires": 7}]),
                                  "[]", "[]", "[]"])
    assert one == two
    mtu = prestate_net.canonical([json.dumps([{**link, "mtu": 9000}]), json.dumps([route]),
                                  "[]", "[]", "[]"])
    assert mtu != one
    assert '"mtu": 9000' in prestate_net.differences(one, mtu)
    with pytest.raises(ValueError, match="not a list"):
        prestate_net.canonical(['{"a": 1}', "[]", "[]", "[]", "[]"])


def test_one_state_per_call_of_the_whole_configuration() -> None:
    (cmd,) = analyse("ip addr add 192.0.2.9/32 dev lo").commands
    (state,) = value_calls(cmd) or []
    assert (state.kind, state.key, state.user) == ("ip", ["network"], False)


# --------------------------------------------------------------------------- the daemon


@pytest.fixture(scope="module")
def netns_daemon() -> Iterator[RunningDaemon]:
    """A root daemon in a network namespace of its own, ``lo`` up."""
    with netns_root_daemon("ip") as daemon:
        _nsip(daemon, "link", "set", "lo", "up")
        yield daemon


def _nsip(daemon: RunningDaemon, *args: str) -> str:
    """``ip ARGS`` in the daemon's network namespace (through its pid)."""
    assert daemon.proc is not None
    return subprocess.run(["nsenter", "-t", str(daemon.proc.pid), "-n", "ip", *args],
                          capture_output=True, text=True, check=True).stdout


def test_an_address_put_back_by_its_rollback_is_checked(netns_daemon: RunningDaemon) -> None:
    before = _nsip(netns_daemon, "-j", "addr", "show")
    result = run_and_roll_back(netns_daemon.client(), "ip addr add 192.0.2.9/32 dev lo",
                                "ip addr del 192.0.2.9/32 dev lo")
    assert result.status == "rolled_back", result
    (state,) = [u for u in result.undo if u.action == "live_state"]
    assert state.ok and "as before the plan" in state.message, state
    assert not any(u.action == "unverified" for u in result.undo)
    assert _nsip(netns_daemon, "-j", "addr", "show") == before


@pytest.mark.parametrize(("command", "rollback", "left"), [
    # no rollback command: nothing puts it back, and Anna says so
    ("ip a a 192.0.2.21/32 dev lo", None, '+ address lo {"family": "inet"'),
    # a rollback that undoes the wrong thing: the route stays
    ("ip r add 198.51.100.0/24 dev lo", "ip r del 203.0.113.0/24 dev lo || true",
     '"dst": "198.51.100.0/24"'),
    # a link property no rule names
    ("ip link set lo txqueuelen 77", "true", '"txqlen": 77'),
])
def test_a_change_the_rollback_left_is_incomplete_and_listed(
        netns_daemon: RunningDaemon, command: str, rollback: str | None, left: str) -> None:
    result = run_and_roll_back(netns_daemon.client(), command, rollback)
    assert result.status == "rollback_incomplete", result
    (state,) = [u for u in result.undo if u.action == "live_state"]
    assert not state.ok and "not as before the plan" in state.message, state
    assert left in state.message, state.message
    undo = {"ip a a 192.0.2.21/32 dev lo": ["addr", "del", "192.0.2.21/32", "dev", "lo"],
            "ip r add 198.51.100.0/24 dev lo": ["route", "del", "198.51.100.0/24", "dev", "lo"],
            "ip link set lo txqueuelen 77": ["link", "set", "lo", "txqueuelen", "1000"]}
    _nsip(netns_daemon, *undo[command])  # the test's own clean-up, in the namespace
