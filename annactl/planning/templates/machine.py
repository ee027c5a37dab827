"""Questions the telemetry answers by itself: kernel, addresses, uptime, logins, listeners.

Answered offline (no model, no command), each with the snapshot's age, because a person
asking "what kernel am I running?" with no model reachable should not get
``LLM_UNAVAILABLE`` for a fact ``annactl status`` prints. Only a whole-request match
answers: "what is my *public* ip" is not an interface address, so it is left to the model.
Every value quoted here is untrusted telemetry text; the view renders it inert.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from anna_common.telemetry import Telemetry
from annactl.planning.templates.base import Context, PlanBuilder, TemplateMatch

_END = r"[?.! ]*$"
_KERNEL = re.compile(
    r"(?i)^(?:(?:what|which)(?:'s| is)? (?:the |my )?(?:linux )?kernel(?: version)?"
    r"(?: (?:am i|are we|is (?:this|it))(?: running| using| on)?| do i have| is running"
    r"| is installed| is this)?|(?:show |tell me )?(?:the |my )?(?:linux )?kernel version"
    r"|uname(?: -r)?)" + _END)
_ADDRESS = re.compile(
    r"(?i)^(?:(?:what|which)(?:'s| is| are) (?:my |the |this machine's )?(?:local |lan )?"
    r"ip(?: address(?:es)?)?|(?:show|list|tell me|give me)(?: me)? (?:my |the )?(?:local |lan )?"
    r"ip(?: address(?:es)?)?|(?:my )?(?:local )?ip address(?:es)?)"
    r"(?: of this (?:machine|computer))?" + _END)
_UPTIME = re.compile(
    r"(?i)^(?:(?:show |what(?:'s| is) )?(?:the |my )?uptime|how long (?:has|have) (?:my |the |"
    r"this )?(?:system|computer|machine|pc|laptop|box|it|i) been (?:up|running|on)"
    r"(?: for)?|when did (?:i|it|the (?:system|machine|computer)) (?:last )?(?:boot|start)"
    r"(?: up)?)" + _END)
_USERS = re.compile(
    r"(?i)^(?:who(?:'s| is| else is)? (?:logged|signed) (?:in|on)(?: (?:here|now|right now|"
    r"to this machine))?|(?:which|what) users are (?:logged|signed) (?:in|on)|(?:show |list )?"
    r"(?:the )?(?:logged[- ]in|current) users|who is (?:on|using) this (?:machine|computer))"
    + _END)
_LISTENERS = re.compile(
    r"(?i)^(?:what(?:'s| is)|which (?:services|programs|processes) are) listening"
    r"(?: on (?:the )?(?:network|ports?|this machine))?|(?:show |list |what are )?(?:my |the )?"
    r"(?:open|listening) ports(?: are there)?|which ports are (?:open|listening)" + _END)
MAX_SHOWN = 12
"""Addresses, listeners or sessions listed in an answer."""


def age(telemetry: Telemetry, now: float | None = None) -> str:
    """How old the snapshot is, as the answer's closing words."""
    if telemetry.collected_at <= 0:
        return "(from the daemon's telemetry)"
    seconds = max(0, int((now if now is not None else time.time()) - telemetry.collected_at))
    when = f"{seconds} s" if seconds < 120 else f"{seconds // 60} min"
    return f"(telemetry from {when} ago)"


def duration(seconds: float) -> str:
    """``3 days, 4 h 5 min`` from seconds."""
    minutes = int(seconds // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    head = f"{days} day{'s' if days != 1 else ''}, " if days else ""
    return f"{head}{hours} h {mins} min"


def _answer(ctx: Context, template: str, goal: str, notes: str) -> TemplateMatch:
    builder = PlanBuilder(ctx, template, [goal])
    plan = builder.build("Answered from the daemon's telemetry by an offline template; "
                         "nothing runs.", f"{notes} {age(ctx.telemetry)}")
    return TemplateMatch(template, True, plan)


def _kernel(ctx: Context) -> str:
    system = ctx.telemetry.system
    if not system.kernel:
        return "Telemetry does not hold the kernel version (`uname -r` prints it)."
    distro = f" on {system.distro_name}" if system.distro_name else ""
    return f"You are running Linux kernel {system.kernel}{distro}."


def _addresses(ctx: Context) -> str:
    network = ctx.telemetry.network
    if not network.available:
        return "Telemetry does not hold the interface addresses (`ip -brief address` shows them)."
    own = [a for a in network.addresses if a.interface != "lo" and
           not a.address.startswith("fe80:")]
    if not own:
        return "No interface has an address besides loopback: this machine is not on a network."
    listed = "; ".join(f"{a.interface} {a.address}" + (f"/{a.prefix}" if a.prefix else "")
                       for a in own[:MAX_SHOWN])
    return (f"Your IP addresses: {listed}. (These are the interfaces' own addresses; behind a "
            "router, the internet sees the router's public address instead.)")


def _uptime(ctx: Context) -> str:
    system = ctx.telemetry.system
    if system.uptime_seconds <= 0:
        return "Telemetry does not hold the uptime (`uptime` prints it)."
    return f"This machine has been up for {duration(system.uptime_seconds)}."


def _users(ctx: Context) -> str:
    sessions = ctx.telemetry.sessions
    if sessions is None:
        return "Telemetry does not hold the login sessions (`who` lists them)."
    if not sessions:
        return "Nobody is logged in with a terminal or display session (utmp lists none)."
    names = sorted({s.user for s in sessions})
    listed = "; ".join(f"{s.user} on {s.terminal or '?'}" + (f" from {s.host}" if s.host else "")
                       for s in sessions[:MAX_SHOWN])
    return f"Logged in: {', '.join(names)} ({len(sessions)} session(s): {listed})."


def _listeners(ctx: Context) -> str:
    network = ctx.telemetry.network
    if not network.available:
        return "Telemetry does not hold the listening sockets (`ss -tulpn` lists them)."
    if not network.listeners:
        return "Nothing is listening for network connections."
    listed = "; ".join(f"{x.proto} {x.address}:{x.port}" + (f" ({x.process})" if x.process
                                                             else "")
                       for x in network.listeners[:MAX_SHOWN])
    more = len(network.listeners) - MAX_SHOWN
    tail = f" and {more} more" if more > 0 else ""
    return (f"Listening ({len(network.listeners)}): {listed}{tail}. 0.0.0.0 and :: mean every "
            "address; 127.0.0.1 and ::1 only this machine. (`ss -tulpn` names the program "
            "behind each.)")


_FACTS: tuple[tuple[re.Pattern[str], str, str, Callable[[Context], str]], ...] = (
    (_KERNEL, "kernel_v1", "Say which kernel runs", _kernel),
    (_ADDRESS, "ip_address_v1", "Show the IP addresses", _addresses),
    (_UPTIME, "uptime_v1", "Say how long the machine has been up", _uptime),
    (_USERS, "logged_in_v1", "Show who is logged in", _users),
    (_LISTENERS, "listeners_v1", "Show what listens on the network", _listeners),
)


def machine_fact(ctx: Context) -> TemplateMatch | None:
    """A question one telemetry field answers, answered from it."""
    for pattern, template, goal, notes in _FACTS:
        if pattern.match(ctx.request):
            return _answer(ctx, template, goal, notes(ctx))
    return None
