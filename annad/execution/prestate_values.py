"""Typed pre-state of live values: kernel parameters (``sysctl``) and desktop settings
(``gsettings``), recorded before the step and put back and read again by undo.

A live step that sets a value Anna can read does not need the plan's word for its undo:
before ``sysctl -w KEY=V`` (or ``sysctl KEY=V``) the daemon reads ``sysctl -n KEY``; before
``gsettings set|reset SCHEMA KEY`` it reads ``gsettings get SCHEMA KEY`` as the step's user,
with the step's own ``--schemadir`` and its own ``GSETTINGS_BACKEND``/``XDG_CONFIG_HOME``
prefix (so it reads the very store the step writes). Undo runs the plan's rollback command
first, then reads each value again: one that is not as before is written back, and read once
more; the result says what was found, and fails when the value still differs. A call Anna
cannot read exactly (a key only known at run time, ``sysctl -p FILE``, ``--system``,
``gsettings reset-recursively``) is not typed: it stays a live program whose undo is
unverified (:func:`annad.execution.prestate.untyped_live`). The network configuration an
``ip`` call may change is read the same way and compared after the undo, but never written
back (:mod:`annad.execution.prestate_net`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

from annad.backups.backup import BackupRefused
from annad.backups.manifest import ValueState
from annad.execution import prestate_net

if TYPE_CHECKING:
    from collections.abc import Mapping

    from anna_common.shell.grammar import SimpleCommand
    from annad.confine.credentials import Identity
    from annad.confine.runner import RunResult


class HelperRunner(Protocol):
    """What reading and writing values needs from :mod:`annad.confine.runner` (the same
    as :class:`annad.execution.prestate.HelperRunner`, which imports this module)."""

    def run_argv(self, argv: list[str], *, timeout: float = ..., max_output: int = ...,
                 identity: Identity | None = ..., env: Mapping[str, str] | None = ...
                 ) -> RunResult:
        """Run a helper program without a shell."""

_SYSCTL_UNTYPED = frozenset({"-p", "--load", "-f", "--system", "-a", "-A", "-X", "--all",
                             "-r", "--pattern"})
"""sysctl options that load keys from files or patterns: the keys are not on the line."""
_GSETTINGS_ENV = ("GSETTINGS_BACKEND", "GSETTINGS_SCHEMA_DIR", "XDG_CONFIG_HOME")
"""Variables that choose which store gsettings uses: read and undo pass the step's own."""


def value_calls(cmd: SimpleCommand) -> list[ValueState] | None:
    """The values ``cmd`` sets, with nothing read yet (``before`` empty), when each can be
    read exactly; None when ``cmd`` sets none Anna can type."""
    if cmd.program == "sysctl":
        return _sysctl(cmd)
    if cmd.program == "gsettings":
        return _gsettings(cmd)
    if prestate_net.ip_call(cmd):
        return [ValueState(kind="ip", key=["network"], user=False, before="")]
    return None


def _sysctl(cmd: SimpleCommand) -> list[ValueState] | None:
    keys: list[str] = []
    for word in cmd.args:
        text = word.text
        if text in _SYSCTL_UNTYPED or text.startswith(("--load=", "--pattern=")):
            return None
        if text.startswith("-"):
            continue
        key, eq, _ = text.partition("=")
        if not eq:
            continue  # a read
        if not word.literal or not key or key.startswith("-") or ".." in key:
            return None
        keys.append(key)
    return [ValueState(kind="sysctl", key=[key], user=False, before="") for key in keys] \
        or None


def _gsettings(cmd: SimpleCommand) -> list[ValueState] | None:
    words = cmd.args
    options: list[str] = []
    index = 0
    while index < len(words) and words[index].text.startswith("--schemadir"):
        text = words[index].text
        if not words[index].literal:
            return None
        if text == "--schemadir":
            if index + 1 >= len(words) or not words[index + 1].literal:
                return None
            options += [text, words[index + 1].text]
            index += 2
        else:
            options.append(text)
            index += 1
    rest = words[index:]
    if len(rest) < 3 or rest[0].text not in ("set", "reset"):
        return None
    if not all(w.literal for w in rest[:3]):
        return None
    env = {name: value.text for name, value in cmd.assignments if name in _GSETTINGS_ENV}
    if any(not value.literal for name, value in cmd.assignments if name in _GSETTINGS_ENV):
        return None
    return [ValueState(kind="gsettings", key=[*options, rest[1].text, rest[2].text],
                       env=env, user=True, before="")]


def _read_argv(state: ValueState) -> list[str]:
    if state.kind == "sysctl":
        return ["sysctl", "-n", state.key[0]]
    return ["gsettings", *state.key[:-2], "get", *state.key[-2:]]


def _write_argv(state: ValueState, value: str) -> list[str]:
    if state.kind == "sysctl":
        return ["sysctl", "-q", "-w", f"{state.key[0]}={value}"]
    return ["gsettings", *state.key[:-2], "set", *state.key[-2:], value]


def read_value(runner: HelperRunner, state: ValueState, *, identity: Identity | None,
               env: Mapping[str, str]) -> str:
    """The value now; :class:`BackupRefused` when it cannot be read."""
    if state.kind == "ip":
        return _read_network(runner)
    result = runner.run_argv(_read_argv(state), timeout=30, identity=identity,
                             env={**env, **state.env})
    if not result.ok:
        raise BackupRefused(f"cannot read {' '.join(state.key[-2:])}: "
                            + (result.error or result.output.strip()[-300:]))
    return result.output.rstrip("\n")


def _read_network(runner: HelperRunner) -> str:
    outputs = []
    for argv in prestate_net.READ_ARGVS:
        result = runner.run_argv(argv, timeout=30, max_output=8 * 1024 * 1024)
        if not result.ok or result.truncated:
            raise BackupRefused("cannot read the network configuration: " + " ".join(argv)
                                + ": " + (result.error or result.output.strip()[-300:]
                                          or "its listing is too long"))
        outputs.append(result.output)
    try:
        return prestate_net.canonical(outputs)
    except ValueError as exc:
        raise BackupRefused(f"cannot read the network configuration: {exc}") from None


def value_states(calls: list[SimpleCommand], runner: HelperRunner, *,
                 identity: Identity | None, env: Mapping[str, str]) -> list[ValueState]:
    """Pre-state of every value these commands set (each key once, first call wins)."""
    states: list[ValueState] = []
    seen: set[tuple[str, ...]] = set()
    for cmd in calls:
        for state in value_calls(cmd) or []:
            mark = (state.kind, *state.key, *(f"{k}={v}" for k, v in sorted(state.env.items())))
            if mark in seen:
                continue
            seen.add(mark)
            who = identity if state.user else None
            state.before = read_value(runner, state, identity=who, env=env if state.user
                                      else {})
            states.append(state)
    return states


class Restored(NamedTuple):
    """What undo found of one value."""

    ok: bool
    """It is as before the plan."""
    message: str
    differs: bool = False
    """It was read and is not as before (rather than: it could not be read or written)."""


def restore_value(runner: HelperRunner, state: ValueState, *, identity: Identity | None,
                  env: Mapping[str, str]) -> Restored:
    """Put ``state`` back when it differs (never a network configuration: that is only
    compared), then read it again."""
    who = identity if state.user else None
    env = env if state.user else {}
    name = " ".join(state.key[-2:]) if state.kind == "gsettings" else state.key[0]
    try:
        now = read_value(runner, state, identity=who, env=env)
        if state.kind == "ip":
            return _compare_network(state.before, now)
        if now == state.before:
            return Restored(True, f"{name} is {state.before!r}, as before the plan")
        run = runner.run_argv(_write_argv(state, state.before), timeout=30, identity=who,
                              env={**env, **state.env})
        again = read_value(runner, state, identity=who, env=env)
    except BackupRefused as exc:
        return Restored(False, str(exc))
    if again == state.before:
        return Restored(True, f"{name} put back to {state.before!r} (it was {now!r}) and "
                        "read again")
    why = "" if run.ok else f" (writing it failed: {(run.error or run.output)[-200:]})"
    return Restored(False, f"{name} is {again!r}, not {state.before!r} as before the plan{why}",
                    differs=True)


def _compare_network(before: str, now: str) -> Restored:
    """The network configuration after the undo against before the step (never written
    back: see :mod:`annad.execution.prestate_net`)."""
    if now == before:
        return Restored(True, "the network configuration (links, addresses, routes, rules) "
                        "is as before the plan, read again")
    return Restored(False, "the network configuration is not as before the plan, and Anna "
                    "does not write it back by itself: "
                    + prestate_net.differences(before, now), differs=True)
