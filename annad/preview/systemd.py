"""Typed preview of a systemctl step: each unit's current and new state.

Enablement is not guessed: for ``enable, disable, reenable, mask, unmask`` of system units
the daemon runs ``systemctl --root=ROOT VERB`` (offline: it edits unit symlinks and talks
to no manager) inside the preview overlay, then asks ``is-enabled`` there — so the preview
shows both the new state and the symlinks it creates. The current state comes from
``systemctl is-enabled``/``is-active`` (read verbs); the new active state of ``start, stop,
restart`` (and ``--now``) is what the verb does. ``--user`` units get the table for the new
state; their current state is asked of the caller's own user manager, as the caller.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from anna_common.protocol.preview import UnitChange
from anna_common.shell.grammar import analyse
from annad.confine.runner import run_argv

if TYPE_CHECKING:
    from annad.stepspec import Who

ENABLEMENT = frozenset({"enable", "disable", "reenable", "mask", "unmask"})
"""Verbs whose effect ``systemctl --root`` can apply offline."""
_ACTIVE_AFTER = {"start": "active", "restart": "active (restarted)",
                 "try-restart": "active (restarted)", "reload": "active (reloaded)",
                 "reload-or-restart": "active (reloaded)", "stop": "inactive"}
_VERBS = ENABLEMENT | set(_ACTIVE_AFTER)
_VALUE_OPTS = frozenset({"-t", "--type", "-s", "--signal", "-H", "--host", "-M", "--machine",
                         "-o", "--output", "--job-mode", "--root"})
MARK = "anna-unit-state"
"""Marker before each ``is-enabled`` answer in the overlay run's output."""


@dataclass(frozen=True, slots=True)
class UnitCall:
    """One state-changing systemctl call."""

    verb: str
    units: tuple[str, ...]
    user: bool
    root: str | None
    """``--root=DIR`` of the call (an offline call on another tree), or None."""
    now: bool


def _call(args: list[str]) -> UnitCall | None:
    words: list[str] = []
    user = now = False
    root: str | None = None
    i = 0
    while i < len(args):
        text = args[i]
        name, eq, value = text.partition("=")
        if text == "--user":
            user = True
        elif text == "--now":
            now = True
        elif name in _VALUE_OPTS:
            if not eq:
                i += 1
                value = args[i] if i < len(args) else ""
            root = value if name == "--root" else root
        elif not text.startswith("-"):
            words.append(text)
        i += 1
    if len(words) < 2 or words[0] not in _VERBS:
        return None
    return UnitCall(words[0], tuple(words[1:]), user, root, now)


def unit_calls(command: str) -> list[UnitCall]:
    """The state-changing systemctl calls of ``command`` whose words are all literal."""
    calls = []
    for cmd in analyse(command).commands:
        if cmd.program == "systemctl" and all(w.literal for w in cmd.args):
            call = _call([w.text for w in cmd.args])
            if call is not None:
                calls.append(call)
    return calls


def overlay_command(calls: list[UnitCall]) -> str | None:
    """The offline command applying the enablement verbs, then reporting ``is-enabled``."""
    parts = []
    for call in calls:
        if call.user or call.verb not in ENABLEMENT:
            continue
        root = f"--root={call.root or '/'}"
        parts.append(shlex.join(["systemctl", root, call.verb, "--", *call.units])
                     + " >/dev/null 2>&1")
        for unit in call.units:
            parts.append(f"printf '%s %s ' {MARK} {shlex.quote(unit)}; "
                         + shlex.join(["systemctl", root, "is-enabled", "--", unit])
                         + " 2>/dev/null | head -n1 || echo unknown")
    return "; ".join(parts) if parts else None


def _state(argv: list[str], who: Who | None) -> str:
    # a --user call asks the caller's own manager, as the caller: root has no user manager
    # of theirs to ask (that is what showed "unknown, unknown" on a real systemd)
    identity = who.identity() if who is not None else None
    run = run_argv(argv, timeout=15, identity=identity,
                   env=user_manager_env(who) if who is not None else None)
    words = run.output.strip().splitlines()
    answer = words[-1].strip() if words else ""
    return answer if answer and " " not in answer and len(answer) < 40 else "unknown"


def user_manager_env(who: Who) -> dict[str, str]:
    """Where ``systemctl --user`` finds the caller's manager: their session's runtime
    directory and bus, else the runtime directory logind makes for them."""
    env = {"XDG_RUNTIME_DIR": who.session.get("XDG_RUNTIME_DIR") or f"/run/user/{who.uid}"}
    bus = who.session.get("DBUS_SESSION_BUS_ADDRESS")
    if bus:
        env["DBUS_SESSION_BUS_ADDRESS"] = bus
    return env


def current(call: UnitCall, unit: str, who: Who | None = None) -> tuple[str, str]:
    """(enablement, active state) now; ``unknown`` when systemd cannot say. ``--user``
    units are asked of ``who``'s manager (as ``who``), system units as the daemon."""
    root = [f"--root={call.root}"] if call.root else []
    scope = ["--user"] if call.user else []
    asker = who if call.user else None
    enabled = _state(["systemctl", *scope, *root, "is-enabled", "--", unit], asker)
    active = "inactive" if call.root else _state(["systemctl", *scope, "is-active", "--", unit],
                                                 asker)
    return enabled, active


def answers(output: str) -> dict[str, str]:
    """``is-enabled`` answers from the overlay run's output, by unit."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] == MARK:
            found[parts[1]] = parts[2]
    return found


def changes(calls: list[UnitCall], after_enabled: dict[str, str], who: Who | None = None
            ) -> list[UnitChange]:
    """Each unit's change: enablement from the overlay (or the verb), activity from the verb
    (``who``: whose manager ``--user`` calls ask)."""
    out: list[UnitChange] = []
    for call in calls:
        for unit in call.units:
            enabled, active = current(call, unit, who)
            new_enabled = after_enabled.get(unit, _table_enabled(call.verb, enabled))
            new_active = _ACTIVE_AFTER.get(call.verb, active)
            if call.now and call.verb in ("enable", "reenable"):
                new_active = "active"
            elif call.now and call.verb in ("disable", "mask"):
                new_active = "inactive"
            out.append(UnitChange(unit=unit, before=f"{enabled}, {active}",
                                  after=f"{new_enabled}, {new_active}"))
    return out


def _table_enabled(verb: str, enabled: str) -> str:
    return {"enable": "enabled", "reenable": "enabled", "disable": "disabled",
            "mask": "masked", "unmask": "disabled" if enabled == "masked" else enabled
            }.get(verb, enabled)
