"""The seccomp filter of a captured step: what would act on the running system is refused.

A captured step's file writes land in overlays the daemon reads back and judges
(:mod:`annad.capture.layers`); everything else a process can do acts on the running system
at once, where no judge sees it. So the calls that reach the running system other than through
files are refused in the capture (``EPERM``; the step fails and nothing of it lands), built by
libseccomp like the confinement's filters (:mod:`annad.confine.filters`) and loaded by the
capture helper (:mod:`annad.confine.capture_walls`):

- what every confinement filter refuses (keyrings, which no namespace holds; ptrace and
  ``process_vm_*``; mounts, ``unshare``, ``setns``, new namespaces through ``clone``;
  modules, kexec, reboot, swap, ``bpf``, io_uring…) except SysV IPC and POSIX message queues,
  which the capture gives a private IPC namespace of its own;
- the clock and the host name (``settimeofday``, ``clock_settime``, ``adjtimex``,
  ``sethostname``…) and port I/O;
- another process's priority, scheduling, affinity or limits;
- ``socket(AF_UNIX)``: no client of D-Bus, of PID 1's private socket, of docker's, of Anna's
  own, of an abstract socket — a step that talks to a service acts live; it must be a live
  kind (:mod:`annad.execution.livekinds`). ``socketpair`` stays: a pair inside the step
  reaches nothing outside;
- every socket family but Unix, IPv4, IPv6 and netlink (``NETLINK_ROUTE`` and
  ``NETLINK_SOCK_DIAG`` only, and without ``CAP_NET_ADMIN`` those only read): no raw or
  packet sockets, and no family whose first use makes the kernel load a module;
- in IPv4 and IPv6, every socket but TCP and UDP (``SOCK_STREAM``/``SOCK_DGRAM`` with
  protocol 0, 6 or 17): UDP-Lite, SCTP, MPTCP, DCCP and ICMP pass by the cgroup hooks that
  keep a step from this machine's own services, or connect where those do not look (an
  MPTCP subflow to an address the peer announces).

TCP and UDP stay: a file step may download what it writes. Where they go is the loopback
wall's to judge (:mod:`annad.confine.loopback`): nothing on this machine is reached.
"""

from __future__ import annotations

import errno
from functools import cache
from typing import Any

from annad.confine import filters

OWN_IPC = frozenset({"shmget", "msgget", "semget", "mq_open"})
"""Refused to checks, allowed in a capture: its IPC namespace is its own."""
HARMLESS = frozenset({"personality", "syslog"})
"""Refused to checks, allowed in a capture: ``personality`` acts on the caller only, and
``syslog`` beyond reading needs ``CAP_SYSLOG``, which a captured step has not."""
LIVE_CALLS = ("settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname",
              "setdomainname", "iopl", "ioperm", "vhangup")
"""System calls that set the machine's clock or name or reach hardware ports."""
AF_INET, AF_INET6 = 2, 10
SOCK_TYPE_MASK = 0xF
"""The bits of ``socket``'s type that are the type (the rest: ``SOCK_NONBLOCK``/``CLOEXEC``)."""
INET_TYPES = frozenset({1, 2})
"""``SOCK_STREAM``, ``SOCK_DGRAM``."""
INET_PROTOCOLS = frozenset({0, 6, 17})
"""The default, TCP, UDP."""
FAMILIES = frozenset({filters.AF_UNIX, AF_INET, AF_INET6, filters.AF_NETLINK})
"""Socket families a captured step may make (Unix through ``socketpair`` only)."""


@cache
def program() -> bytes:
    """The compiled BPF program; :class:`annad.confine.filters.FilterUnavailable` when it
    cannot be built (then no step runs captured, and none runs live instead)."""
    sc = filters.binding()
    try:
        filt = sc.SyscallFilter(sc.ALLOW)
        filt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
        deny = sc.ERRNO(errno.EPERM)
        for name in sorted(set(filters.DENIED_CALLS) - OWN_IPC - HARMLESS) + list(LIVE_CALLS):
            filt.add_rule(deny, name)
        filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        for flag in filters.CLONE_NEW:
            filt.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        for name, index in filters.OTHER_PROCESS:
            filt.add_rule(deny, name, sc.Arg(index, sc.NE, 0))
        _sockets(sc, filt)
        return filters.export(filt)
    except OSError as exc:
        raise filters.FilterUnavailable(
            f"the capture's seccomp filter could not be built: {exc}") from None


def _sockets(sc: Any, filt: Any) -> None:
    no_family = sc.ERRNO(errno.EAFNOSUPPORT)
    for family in range(filters.FAMILIES):
        if family not in FAMILIES:
            filt.add_rule(no_family, "socket", sc.Arg(0, sc.MASKED_EQ, filters.LOW32, family))
    filt.add_rule(sc.ERRNO(errno.EACCES), "socket",
                  sc.Arg(0, sc.MASKED_EQ, filters.LOW32, filters.AF_UNIX))
    no_protocol = sc.ERRNO(errno.EPROTONOSUPPORT)
    for family in (AF_INET, AF_INET6):
        inet = sc.Arg(0, sc.MASKED_EQ, filters.LOW32, family)
        for kind in range(SOCK_TYPE_MASK + 1):
            if kind not in INET_TYPES:
                filt.add_rule(no_protocol, "socket", inet,
                              sc.Arg(1, sc.MASKED_EQ, SOCK_TYPE_MASK, kind))
        # above 17 compared on all 64 bits: garbage in the high half is refused, not allowed
        filt.add_rule(no_protocol, "socket", inet, sc.Arg(2, sc.GT, max(INET_PROTOCOLS)))
        for protocol in range(max(INET_PROTOCOLS)):
            if protocol not in INET_PROTOCOLS:
                filt.add_rule(no_protocol, "socket", inet,
                              sc.Arg(2, sc.MASKED_EQ, filters.LOW32, protocol))
    for protocol in range(filters.NETLINK_PROTOCOLS):
        if protocol not in (filters.NETLINK_ROUTE, filters.NETLINK_SOCK_DIAG):
            filt.add_rule(no_family, "socket",
                          sc.Arg(0, sc.MASKED_EQ, filters.LOW32, filters.AF_NETLINK),
                          sc.Arg(2, sc.MASKED_EQ, filters.LOW32, protocol))
