"""Nothing a captured step does reaches the running system unseen: the escape matrix.

Each probe is a root step run through the real capture (tests/daemon/capture_escape_driver.py,
in private network, UTS, IPC and mount namespaces, so a leak lands in the driver's namespaces
and on the driver's own targets, never on the machine). A probe either fails in the capture —
the kernel refused it: no namespace, seccomp, Landlock scope, read-only bind or missing
capability let it act — or its effect is in the observed change set, where the judge sees it.
The command texts are written to files and handed to the capture as data.
"""

from __future__ import annotations

import functools
import json
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.daemonfix import IS_ROOT, REPO

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="the capture needs root")

DRIVER = REPO / "tests" / "daemon" / "capture_escape_driver.py"


def probe(tmp_path: Path, command: str, **options: object) -> dict[str, Any]:
    """Run ``command`` (placeholders as the driver names them) captured; what it reached
    (``options``: the driver's, in its spec)."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "command").write_text(command)
    state = tmp_path / "state"
    state.mkdir()
    (tmp_path / "spec.json").write_text(json.dumps(
        {"state": str(state), "command_file": str(tmp_path / "command"), **options}))
    done = subprocess.run(
        ["unshare", "-n", "-u", "-i", "-m", "--propagation", "private",
         sys.executable, str(DRIVER), str(tmp_path / "spec.json")],
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.splitlines()[-1]))


def refused(report: dict[str, Any]) -> None:
    """The step failed in the capture (so nothing of it would land) — on its own, not by
    running into the driver's time limit."""
    assert report["exit"] not in (0, None), report
    assert report["exit"] > 0 and not report["timed_out"], report


SPELLINGS = ("{}", "env {}", "bash -c '{}'", "sudo {}", "bash <<< '{}'",
             "declare -n r=X; X=\"{}\"; eval \"$r\"")
"""The forms bash treats alike: mechanism-level walls must hold for all of them."""


# -- kernel interfaces outside the overlay ------------------------------------------------


@pytest.mark.parametrize("form", SPELLINGS)
def test_a_network_address_is_not_set_live(tmp_path: Path, form: str) -> None:
    report = probe(tmp_path, form.format("ip addr add 192.0.2.7/32 dev lo"))
    refused(report)
    assert "192.0.2.7" not in report["addresses"]


def test_a_link_changed_by_a_program_no_rule_names_is_not_changed_live(tmp_path: Path) -> None:
    report = probe(tmp_path, "cp /usr/sbin/ip {T}/x && {T}/x link set lo mtu 1300")
    refused(report)
    assert "mtu 1300" not in report["link_lines"]


@pytest.mark.parametrize("command", [
    "echo 1 > /proc/sys/net/ipv4/ip_forward",
    "sysctl -qw net.ipv4.ip_forward=1",
    "tee /proc/sys/net/ipv4/ip_forward <<< 1",
])
def test_a_sysctl_is_not_written_live(tmp_path: Path, command: str) -> None:
    report = probe(tmp_path, command)
    refused(report)
    assert report["ip_forward"] == "0"


@pytest.mark.parametrize("command", ["hostname annaprobe",
                                     "echo annaprobe > /proc/sys/kernel/hostname"])
def test_the_hostname_is_not_set_live(tmp_path: Path, command: str) -> None:
    report = probe(tmp_path, command)
    refused(report)
    assert report["hostname"] != "annaprobe"


CLOCK = ("python3 -c \"import ctypes; l=ctypes.CDLL(None, use_errno=True); "
         "t=(ctypes.c_long*2)(-1, 0); l.clock_settime(0, t); e=ctypes.get_errno(); "
         "print('errno', e); raise SystemExit(e != 1)\"")


def test_the_clock_cannot_be_set(tmp_path: Path) -> None:
    # a negative time: the kernel answers EINVAL once it looks at it; EPERM says the call
    # never reached it (nothing here can change the machine's clock either way)
    report = probe(tmp_path, CLOCK)
    assert report["exit"] == 0, report


CAPS = "grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status"


def test_a_root_step_keeps_only_the_file_capabilities(tmp_path: Path) -> None:
    from annad.confine.capture_walls import KEPT_CAPABILITIES
    report = probe(tmp_path, CAPS)
    assert report["exit"] == 0, report
    sets = dict(line.split(":\t") for line in report["output"].splitlines())
    kept = sum(1 << cap for cap in KEPT_CAPABILITIES)
    assert {name: int(value, 16) for name, value in sets.items()} == {
        "CapEff": kept, "CapPrm": kept, "CapBnd": kept, "CapAmb": 0}
    # time, network, modules, raw I/O, mounts, ptrace, signals to anyone, immutable flags
    for cap in (25, 12, 13, 16, 17, 21, 19, 5, 9, 27):
        assert not kept & (1 << cap), cap


@pytest.mark.parametrize("command", [
    "mount -t tmpfs none {T}", "mkdir {T}/m && mount --bind /etc {T}/m", "umount /proc",
    "swapon /dev/zero", "unshare -m true", "nsenter -t 1 -m true",
])
def test_mounts_namespaces_and_swap_are_refused(tmp_path: Path, command: str) -> None:
    refused(probe(tmp_path, command))


def test_no_block_device_is_reachable(tmp_path: Path) -> None:
    report = probe(tmp_path, "ls /dev")
    assert report["exit"] == 0
    assert sorted(report["output"].split()) == sorted(
        ["fd", "full", "null", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty",
         "urandom", "zero"])


# -- processes outside ----------------------------------------------------------------------


@pytest.mark.parametrize("form", SPELLINGS)
def test_an_outside_process_is_not_signalled(tmp_path: Path, form: str) -> None:
    report = probe(tmp_path, form.format("kill -TERM {PID}"))
    refused(report)
    assert report["full_alive"]


@pytest.mark.parametrize("command", ["kill -0 {BARE}", "renice -n 5 -p {BARE}",
                                     "python3 -c 'import os; os.kill({BARE}, 15)'"])
def test_not_even_a_process_without_capabilities(tmp_path: Path, command: str) -> None:
    report = probe(tmp_path, command)
    refused(report)
    assert report["bare_alive"]


@pytest.mark.parametrize("command", [
    "echo x > /proc/{BARE}/root{RUN}/escaped", "ls /proc/{BARE}/root/",
    "cat /proc/{BARE}/environ", "ls -l /proc/{BARE}/fd/",
])
def test_the_root_of_an_outside_process_is_not_a_way_out(tmp_path: Path, command: str) -> None:
    report = probe(tmp_path, command)
    refused(report)
    assert report["escaped_files"] == []


PTRACE = ("python3 -c \"import ctypes, sys; l=ctypes.CDLL(None, use_errno=True); "
          "sys.exit(l.ptrace(16, {BARE}, 0, 0) != 0)\"")


def test_an_outside_process_is_not_traced(tmp_path: Path) -> None:
    report = probe(tmp_path, PTRACE)
    refused(report)


KEYRING = ("python3 -c \"import ctypes, sys; l=ctypes.CDLL(None, use_errno=True); "
           "sys.exit(l.syscall(250, 1, 0) < 0)\"")


def test_keyrings_which_no_namespace_holds_are_refused(tmp_path: Path) -> None:
    refused(probe(tmp_path, KEYRING))


# -- IPC out of the capture -----------------------------------------------------------------


SHM = ("python3 -c \"import ctypes, sys; l=ctypes.CDLL(None); "
       "sys.exit(l.shmget({SHMKEY}, 0, 0) < 0)\"")


def test_sysv_ipc_of_the_machine_is_not_reached(tmp_path: Path) -> None:
    # the capture's IPC namespace is its own: the key finds nothing there
    refused(probe(tmp_path, SHM))


UNIX = ("python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); "
        "s.connect('WHERE'); s.send(b'hi')\"")


@pytest.mark.parametrize("where", ["{UNIX}", "\\0{ABSTRACT}"])
def test_no_unix_socket_outside_is_reached(tmp_path: Path, where: str) -> None:
    report = probe(tmp_path, UNIX.replace("WHERE", where))
    refused(report)
    assert not report["unix"]
    assert not report["abstract"]


@pytest.mark.parametrize("command", [
    "busctl --system call org.freedesktop.systemd1 /org/freedesktop/systemd1 "
    "org.freedesktop.systemd1.Manager Reload",
    "s=systemctl; $s start annaprobe.service",
    "socat - UNIX-CONNECT:{UNIX} <<< hi",
])
def test_the_bus_and_pid_1_are_not_reached(tmp_path: Path, command: str) -> None:
    report = probe(tmp_path, command)
    assert not report["unix"]
    assert report["exit"] != 0 or "ignoring" in report["output"].lower(), report


def test_socketpairs_inside_the_step_still_work(tmp_path: Path) -> None:
    report = probe(tmp_path, "python3 -c \"import socket; a, b = socket.socketpair(); "
                             "a.send(b'ok'); print(b.recv(2).decode())\"")
    assert report["exit"] == 0, report
    assert report["output"].strip() == "ok"


PY_SEND = ("python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
           ".sendto(b'hi', ('127.0.0.1', {UDP}))\"")
PY_FASTOPEN = ("python3 -c \"import socket; socket.socket().sendto(b'hi', "
               "socket.MSG_FASTOPEN, ('127.0.0.1', {TCP}))\"")


@pytest.mark.parametrize(("command", "target"), [
    ("exec 3<>/dev/tcp/127.0.0.1/{TCP}", "tcp"),
    ("exec 3<>/dev/tcp/127.9.9.9/{TCP}", "tcp"),
    ("exec 3<>/dev/tcp/0.0.0.0/{TCP}", "tcp"),
    ("exec 3<>/dev/tcp/::1/{TCP6}", "tcp6"),
    ("exec 3<>/dev/tcp/::/{TCP6}", "tcp6"),
    ("exec 3<>/dev/tcp/::ffff:127.0.0.1/{TCP}", "tcp"),
    ("exec 3<>/dev/tcp/::ffff:0.0.0.0/{TCP}", "tcp"),
    ("exec 3<>/dev/tcp/localhost/{TCP}", "tcp"),
    ("exec 3<>/dev/tcp/192.0.2.1/{HOST}", "host"),
    ("exec 3<>/dev/tcp/::ffff:192.0.2.1/{HOST}", "host"),
    ("exec 3<>/dev/tcp/2001:db8::1/{HOST6}", "host6"),
    ("echo hi > /dev/udp/127.0.0.1/{UDP}", "udp"),
    (PY_SEND, "udp"),
    (PY_SEND.replace("AF_INET", "AF_INET6").replace("127.0.0.1", "::ffff:127.0.0.1"), "udp"),
    (PY_FASTOPEN, "tcp"),
    ("sudo bash -c 'exec 3<>/dev/tcp/127.0.0.1/{TCP}'", "tcp"),
    ("env bash <<< 'exec 3<>/dev/tcp/127.0.0.1/{TCP}'", "tcp"),
])
def test_a_service_of_this_machine_is_not_reached(tmp_path: Path, command: str,
                                                  target: str) -> None:
    # loopback, "this host", v4-mapped, the machine's own address on another link, UDP
    # connected or not, TCP Fast Open: the cgroup's BPF hooks answer EPERM before a packet
    report = probe(tmp_path, command)
    refused(report)
    assert not report[target], report
    assert not any(report[t] for t in ("tcp", "tcp6", "host", "host6", "udp")), report
    assert "Operation not permitted" in report["output"], report


def _udp(where: str) -> str:
    return ("python3 -c \"import socket as s; u = s.socket(s.AF_INET, s.SOCK_DGRAM); "
            f"u.setsockopt(s.SOL_SOCKET, s.SO_BROADCAST, 1); u.sendto(b'hi', {where})\"")


@pytest.mark.parametrize("command", [
    _udp("('255.255.255.255', {UDP})"),
    _udp("('192.0.2.255', {UDP})"),  # the broadcast address of the driver's veth
    _udp("('224.0.0.251', 5353)"),  # mDNS: multicast loops back to the machine's listeners
    "python3 -c \"import socket as s; s.socket(s.AF_INET6, s.SOCK_DGRAM)"
    ".sendto(b'hi', ('ff02::1', 9, 0, 1))\"",
])
def test_broadcast_and_multicast_do_not_loop_back(tmp_path: Path, command: str) -> None:
    report = probe(tmp_path, command)
    refused(report)
    assert "Operation not permitted" in report["output"], report


BIND = "python3 -c \"import socket as s; s.socket(FAMILY).bind(WHERE)\""


@pytest.mark.parametrize(("family", "where"), [
    ("s.AF_INET", "('127.0.0.1', 5432)"), ("s.AF_INET", "('0.0.0.0', 8080)"),
    ("s.AF_INET6", "('::', 6379)"), ("s.AF_INET, s.SOCK_DGRAM", "('127.0.0.1', 5353)"),
])
def test_a_step_cannot_stand_in_for_a_service(tmp_path: Path, family: str, where: str) -> None:
    # a local client expecting its database there would talk to the step instead
    report = probe(tmp_path, BIND.replace("FAMILY", family).replace("WHERE", where))
    refused(report)
    assert "Operation not permitted" in report["output"], report


def test_a_port_the_kernel_picks_is_bound(tmp_path: Path) -> None:
    report = probe(tmp_path, BIND.replace("FAMILY", "s.AF_INET").replace(
        "WHERE", "('127.0.0.1', 0)"))
    assert report["exit"] == 0, report


LEAVE = ("for f in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/unified/cgroup.procs; do "
         "echo $$ > $f; done; exec 3<>/dev/tcp/127.0.0.1/{TCP}")


def test_the_step_cannot_leave_the_walled_cgroup(tmp_path: Path) -> None:
    report = probe(tmp_path, LEAVE)
    refused(report)
    assert "Read-only file system" in report["output"], report
    assert "Operation not permitted" in report["output"], report
    assert not report["tcp"]


SOCKET = "python3 -c \"import socket as s; s.socket(ARGS).connect(('127.0.0.1', {UDP}))\""


@pytest.mark.parametrize("args", [
    "s.AF_INET, s.SOCK_DGRAM, 136",  # UDP-Lite: its connect passes by the cgroup hook
    "s.AF_INET6, s.SOCK_DGRAM, 136",
    "s.AF_INET, s.SOCK_STREAM, 262",  # MPTCP
    "s.AF_INET, s.SOCK_SEQPACKET, 0",  # SCTP, where its module is there
    "s.AF_INET, s.SOCK_STREAM, 132",
    "s.AF_INET6, s.SOCK_DGRAM, 58",  # ICMPv6 echo
    "s.AF_INET, s.SOCK_DGRAM | s.SOCK_CLOEXEC, 1",
])
def test_no_transport_but_tcp_and_udp_is_made(tmp_path: Path, args: str) -> None:
    report = probe(tmp_path, SOCKET.replace("ARGS", args))
    refused(report)
    assert "Protocol not supported" in report["output"], report
    assert not report["udp"]


WIDE = ("python3 -c \"import ctypes, errno, sys; l = ctypes.CDLL(None, use_errno=True); "
        "r = l.syscall(41, 2, 2, ctypes.c_long(17 | 1 << 32)); "
        "sys.exit(0 if r < 0 and ctypes.get_errno() == errno.EPROTONOSUPPORT else 1)\"")


@pytest.mark.skipif(platform.machine() != "x86_64", reason="socket(2) is call 41 on x86_64")
def test_a_protocol_spelled_wider_is_refused(tmp_path: Path) -> None:
    # the kernel reads an int (UDP); the filter sees 64 bits and refuses what is not plain
    assert probe(tmp_path, WIDE)["exit"] == 0


@pytest.mark.parametrize("args", ["s.AF_INET, s.SOCK_STREAM | s.SOCK_NONBLOCK, 6",
                                  "s.AF_INET6, s.SOCK_DGRAM | s.SOCK_CLOEXEC, 17",
                                  "s.AF_INET, s.SOCK_DGRAM, 0"])
def test_tcp_and_udp_sockets_are_made(tmp_path: Path, args: str) -> None:
    report = probe(tmp_path, SOCKET.replace("ARGS", args).replace(".connect(('127.0.0.1', "
                                                                  "{UDP}))", ""))
    assert report["exit"] == 0, report


@pytest.mark.parametrize("command", [
    "exec 3<>/dev/tcp/198.51.100.7/80",
    "exec 3<>/dev/tcp/2001:db8:1::7/443",
    "exec 3<>/dev/tcp/::ffff:198.51.100.7/80",
    "echo hi > /dev/udp/198.51.100.7/123",
])
def test_an_address_elsewhere_is_still_tried(tmp_path: Path, command: str) -> None:
    # the driver routes these "unreachable": the kernel's routing answered, so the wall let
    # the connection through (a download goes); no packet leaves the namespace
    report = probe(tmp_path, command)
    refused(report)
    assert "not permitted" not in report["output"], report
    assert "unreachable" in report["output"].lower() or "no route" in \
        report["output"].lower(), report


@pytest.mark.parametrize("command", ["exec 3<>/dev/tcp/127.0.0.1/{TCP}",
                                     "exec 3<>/dev/tcp/192.0.2.1/{HOST}",
                                     "echo hi > /dev/udp/127.0.0.1/{UDP}",
                                     "exec 3<>/dev/tcp/198.51.100.7/80"])
def test_without_the_wall_a_step_has_no_network(tmp_path: Path, command: str) -> None:
    # no cgroup v2 to hang the programs on: the step runs in an empty network namespace of
    # its own (fail closed): nothing on the machine, nothing elsewhere either
    report = probe(tmp_path, command, no_cgroup_v2=True)
    refused(report)
    assert not any(report[t] for t in ("tcp", "tcp6", "host", "host6", "udp")), report
    assert "Network is unreachable" in report["output"], report


@functools.cache
def _no_user_namespaces() -> bool:
    """Whether uid 65534 may not make a user namespace here (a per-user daemon then cannot
    capture at all: its file steps run live, docs/security.md)."""
    return subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
                           "unshare", "-Urm", "true"], capture_output=True, check=False
                          ).returncode != 0


@pytest.mark.skipif(not Path("/usr/bin/python3").exists() or _no_user_namespaces(),
                    reason="needs /usr/bin/python3 and unprivileged user namespaces")
def test_a_per_user_step_reaches_what_its_owner_reaches(tmp_path: Path) -> None:
    # a per-user daemon's step (not root: no cgroup BPF) reaches a TCP port on loopback as
    # any program of its owner does — no more than the owner could already; a Unix socket
    # (D-Bus, a service's control socket) stays refused by the same seccomp program
    reached = probe(tmp_path, "exec 3<>/dev/tcp/127.0.0.1/{TCP}", owner=65534)
    assert reached["exit"] == 0, reached
    assert reached["tcp"]
    unix = probe(tmp_path / "u", UNIX.replace("WHERE", "{UNIX}"), owner=65534)
    refused(unix)
    assert not unix["unix"]


@pytest.mark.parametrize("command", [
    "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
    ".sendto(b'q', ('127.0.0.53', 53))\"",
    "exec 3<>/dev/tcp/127.0.0.1/53",
])
def test_the_stub_resolver_port_stays_open(tmp_path: Path, command: str) -> None:
    # name resolution asks 127.0.0.53:53 (systemd-resolved) or 127.0.0.1:53 (dnsmasq): the
    # datagram goes out; TCP finds nothing listening here (refused by the peer, not the wall)
    report = probe(tmp_path, command)
    assert "not permitted" not in report["output"], report
    assert report["exit"] == 0 or "Connection refused" in report["output"], report


# -- processes left running -----------------------------------------------------------------


@pytest.mark.parametrize("command", [
    "setsid nohup sh -c 'echo $$ > {T}/bgpid; while :; do echo x >> {T}/late; done' "
    ">/dev/null 2>&1 &",
    "(sh -c 'echo $$ > {T}/bgpid; exec sleep 600' &) ; true",
])
def test_nothing_the_step_started_outlives_it(tmp_path: Path, command: str) -> None:
    # the step ends once the process it leaves has said who it is
    report = probe(tmp_path, command + "\nuntil [ -s {T}/bgpid ]; do sleep 0.01; done")
    assert report["exit"] == 0, report
    assert any(c["path"].endswith("/bgpid") for c in report["changes"]), report
    assert report["left_running"] == []


# -- file-level tricks ----------------------------------------------------------------------


def test_an_immutable_flag_cannot_be_set(tmp_path: Path) -> None:
    refused(probe(tmp_path, "touch {T}/f && chattr +i {T}/f"))


def test_a_device_node_cannot_be_made(tmp_path: Path) -> None:
    refused(probe(tmp_path, "mknod {T}/sda b 8 0"))


ACL = ("python3 -c \"import os, struct; e=[(1, 7, -1), (2, 7, 65534), (4, 5, -1), "
       "(16, 7, -1), (32, 5, -1)]; os.setxattr('{T}/d', 'system.posix_acl_access', "
       "struct.pack('<I', 2) + b''.join(struct.pack('<HHi', *x) for x in e))\"")
"""``setfacl -m u:nobody:rwx`` (as the kernel stores it; the acl tools may be missing)."""


def test_file_capabilities_and_acls_are_observed(tmp_path: Path) -> None:
    report = probe(tmp_path, "cp /bin/true {T}/t && setcap cap_net_raw+ep {T}/t && "
                             "mkdir {T}/d && " + ACL)
    assert report["exit"] == 0, report
    xattrs = {Path(c["path"]).name: c["xattrs"] for c in report["changes"]}
    assert "security.capability" in xattrs["t"]
    assert "system.posix_acl_access" in xattrs["d"]


def test_a_hard_link_shares_its_change_with_the_original(tmp_path: Path) -> None:
    # the mode given through the new name is the original's: the judge sees it at its path
    report = probe(tmp_path, "ln {L}/secret {T}/x && chmod 644 {T}/x")
    assert report["exit"] == 0, report
    modes = {Path(c["path"]).name: c["mode"] for c in report["changes"]}
    assert modes["secret"] == 0o644, report


@pytest.mark.parametrize("name", ["a\nb", "\xff\xfe", "-rf", "$(id)"])
def test_any_name_is_observed_as_it_is(tmp_path: Path, name: str) -> None:
    report = probe(tmp_path, "touch {T}/\"$(printf -- '" + name + "')\"")
    assert report["exit"] == 0, report
    assert len(report["changes"]) == 1, report
