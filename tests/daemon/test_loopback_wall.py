"""The loopback wall of captured steps (annad/confine/loopback.py) beyond the escape matrix.

tests/daemon/test_capture_escapes.py runs probes through the real capture; here the wall's
backstop is shown on its own (tests/daemon/loopback_driver.py, in a network namespace of its
own): packets to an address this machine got after the programs were built, and packets the
machine's own firewall rewrites to a local address, leave by the loopback device and are
dropped, while the stub resolver's port 53 still answers.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys

import pytest

from annad.confine import loopback
from tests.daemonfix import IS_ROOT, REPO

DRIVER = REPO / "tests" / "daemon" / "loopback_driver.py"


@pytest.mark.skipif(not IS_ROOT, reason="loading cgroup BPF needs root")
def test_an_address_added_after_the_wall_was_built_is_still_walled() -> None:
    done = subprocess.run(["unshare", "-n", sys.executable, str(DRIVER)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["sent"]["new_v4"] == errno.EPERM, report
    assert report["sent"]["new_v6"] == errno.EPERM, report
    assert not report["received"]["new_v4"]
    assert not report["received"]["new_v6"]
    # an unconnected sendto: the program read the port from the packet, not the socket
    assert report["sent"]["resolver"] == 0, report
    assert report["received"]["resolver"]


@pytest.mark.skipif(not IS_ROOT, reason="loading cgroup BPF needs root")
@pytest.mark.skipif(not (shutil.which("iptables") and shutil.which("ip6tables")),
                    reason="no iptables here (.ci/run installs it)")
def test_a_packet_the_firewall_rewrites_to_this_machine_is_walled() -> None:
    # nat OUTPUT DNAT from an address elsewhere to 127.0.0.1 / ::1: the connect and sendmsg
    # hooks see the address elsewhere; the egress program sees the packet leave by lo
    done = subprocess.run(["unshare", "-n", sys.executable, str(DRIVER), "dnat"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    # outside the leaf the rewrite reaches the listeners by lo, and lo counts the packets
    assert all(report["outside_got"].values()), report
    assert report["outside_lo_sent"] > 0, report
    for family in ("v4", "v6"):
        assert report["outside"][f"udp_{family}"] == 0, report
        assert report["outside"][f"tcp_state_{family}"] == "established", report
        # in the leaf: the datagram refused, the handshake never done, nothing arrives
        assert report["inside"][f"udp_{family}"] == errno.EPERM, report
        assert report["inside"][f"tcp_state_{family}"] == "syn_sent", report
    assert report["inside_lo_sent"] == 0, report  # not one packet left by lo
    assert not any(report["inside_got"].values()), report


@pytest.mark.skipif(not IS_ROOT, reason="loading cgroup BPF needs root")
def test_a_wall_the_kernel_does_not_run_leaves_the_step_no_network() -> None:
    # the capture tries the wall after joining: held, the step stays (EPERM to loopback);
    # a leaf whose programs the kernel does not run: an empty namespace, nothing reachable
    done = subprocess.run(["unshare", "-n", sys.executable, str(DRIVER)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["wall_joined"] == errno.EPERM, report
    assert report["wall_bare"] == errno.ENETUNREACH, report
    assert "the loopback wall does not hold here" in done.stderr


@pytest.mark.skipif(not IS_ROOT, reason="loading cgroup BPF needs root")
def test_the_most_addresses_walled_still_load_and_more_are_refused() -> None:
    # a machine with many addresses: every hook's program passes the kernel's verifier at
    # the bound; past it the wall is Unavailable (and the steps get no network at all)
    half = loopback.MAX_ADDRESSES // 2
    v4 = [f"10.0.{n // 256}.{n % 256}/32" for n in range(half)]
    v6 = [f"2001:db8::{n:x}/128" for n in range(half)]
    codes = loopback.programs(v4, v6)
    assert set(codes) == {"connect4", "connect6", "sendmsg4", "sendmsg6", "bind4", "bind6",
                          "egress"}
    for hook, code in codes.items():
        os.close(loopback.load(hook, code))
    with pytest.raises(loopback.Unavailable):
        loopback.programs([*v4, "10.1.0.0/32"], v6)


REMADE = """
from annad.confine import loopback
first = loopback.prepare()
first.rmdir()  # empty: what another daemon's sweep of stale leaves once did to it
again = loopback.prepare()
print(again == first and again.is_dir() and bool(loopback.programs))
"""


@pytest.mark.skipif(not IS_ROOT, reason="loading cgroup BPF needs root")
def test_a_leaf_removed_behind_the_daemons_back_is_made_again() -> None:
    """Two suites side by side: a daemon in a PID namespace of its own saw no process of
    another daemon's pid, swept that daemon's empty leaf as stale, and the other's next
    captured step failed ("No such file or directory: …/cgroup.procs"). The sweep now runs
    only from the machine's own PID namespace, and a leaf found gone is made again."""
    done = subprocess.run([sys.executable, "-c", REMADE], capture_output=True, text=True,
                          check=False, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True", done.stdout
