"""Pre-state the daemon can invert for recognised actions: packages and systemd units.

Before a ``pacman -S/-U/-R`` step the daemon records the installed packages,
querying exactly the database the step will use (its own ``--root``,
``--dbpath``, ``--config``, ``--sysroot``), and after it succeeds records them
again; undo removes only what the step newly installed and reinstalls from the
package cache what it removed or changed. Before ``systemctl enable, disable,
start, stop, mask, unmask`` it records ``is-enabled`` and ``is-active`` of each
unit; undo puts both back. A verb that makes the unit's own programs run (a start, restart
or reload runs ``ExecStart=``/``ExecReload=``; a stop runs ``ExecStop=``/``ExecStopPost=``
when the unit has them) is recorded too (:attr:`UnitState.ran`): what those programs did
is nothing Anna sees, so the undo of that unit is never more than unverified.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from anna_common.risk.rules.base import AssessContext, Out
from anna_common.risk.rules.registry import rule_for
from anna_common.shell.grammar import SimpleCommand, analyse
from annad.backups.backup import BackupRefused
from annad.backups.manifest import PackageState, UnitState, ValueState
from annad.execution.livekinds import LIVE_PROGRAMS
from annad.execution.prestate_hooks import refuse_foreign_hooks
from annad.execution.prestate_values import value_calls, value_states

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from annad.confine.credentials import Identity
    from annad.confine.runner import RunResult

PACKAGE_PROGRAMS = frozenset({"pacman", "yay", "paru"})
"""Package managers whose changes the daemon records (the helpers drive pacman)."""
_PATH_OPTS = {"--root": "--root", "-r": "--root", "--dbpath": "--dbpath", "-b": "--dbpath",
              "--config": "--config", "--sysroot": "--sysroot", "--cachedir": "--cachedir",
              "--logfile": "--logfile", "--gpgdir": "--gpgdir", "--hookdir": "--hookdir"}
"""Options that choose which root, database, cache, log, keyring and hooks pacman uses:
pre-state queries and undo pass exactly these, so they act on the step's own database."""
_CHANGING_OPS = frozenset({"S", "U", "R"})
_UNIT_VERBS = frozenset({"enable", "disable", "start", "stop", "restart", "mask", "unmask",
                         "reenable", "try-restart", "reload-or-restart"})
_STARTS = frozenset({"start", "restart", "try-restart", "reload-or-restart", "reload",
                     "try-reload-or-restart", "reload-or-try-restart", "force-reload",
                     "condrestart", "condreload"})
"""systemctl verbs that run a unit's ``ExecStart=`` (or ``ExecReload=``) programs."""
_NOW = frozenset({"enable", "reenable", "unmask", "disable", "mask"})
"""Verbs that also start (the first three) or stop (the last two) the unit with ``--now``."""
_SYSTEMCTL_VALUE_OPTS = frozenset({"-t", "--type", "-s", "--signal", "-H", "--host", "-M",
                                   "--machine", "--root", "-o", "--output", "--job-mode"})


class HelperRunner(Protocol):
    """What pre-state needs from :mod:`annad.confine.runner` (injectable for tests)."""

    def run_argv(self, argv: list[str], *, timeout: float = ..., max_output: int = ...,
                 identity: Identity | None = ..., env: Mapping[str, str] | None = ...
                 ) -> RunResult:
        """Run a helper program without a shell."""


# --------------------------------------------------------------------------- pacman


def pacman_call(cmd: SimpleCommand) -> tuple[str, list[str]] | None:
    """(operation letter, path options) of a package-changing pacman call, else None."""
    if cmd.program not in PACKAGE_PROGRAMS:
        return None
    op = ""
    options: list[str] = []
    args = cmd.args
    i = 0
    while i < len(args):
        text = args[i].text
        name, eq, value = text.partition("=")
        if name in _PATH_OPTS:
            if not eq:
                i += 1
                value = args[i].text if i < len(args) else ""
                known = i < len(args) and args[i].literal
            else:
                known = args[i].literal
            if not known:
                raise BackupRefused(f"cannot record package state: {name} is only known "
                                    "when the command runs")
            options += [_PATH_OPTS[name], value]
        elif text in ("--sync", "--upgrade", "--remove"):
            op = op or {"--sync": "S", "--upgrade": "U", "--remove": "R"}[text]
        elif text.startswith("-") and not text.startswith("--"):
            op = op or next((c for c in text[1:] if c.isupper()), "")
        i += 1
    return (op, options) if op in _CHANGING_OPS else None


def query_packages(runner: HelperRunner, options: Sequence[str]) -> dict[str, str]:
    """Installed packages (name → version) in the database ``options`` select."""
    result = runner.run_argv(["pacman", *options, "-Q"], timeout=120, max_output=16 * 1024 * 1024)
    if result.exit_code == 1 and "error" not in result.output.lower():
        return {}  # an empty database
    if result.exit_code != 0:
        raise BackupRefused("cannot record package state: pacman -Q failed: "
                            + (result.error or result.output.strip()[-300:]))
    packages: dict[str, str] = {}
    for line in result.output.splitlines():
        name, _, version = line.strip().partition(" ")
        if name and version:
            packages[name] = version
    return packages


def package_states(command: str, runner: HelperRunner) -> list[PackageState]:
    """Pre-state of every package-changing call in ``command``; first, a program its hook
    options would run as root that another uid can write refuses the step
    (:func:`annad.execution.prestate_hooks.refuse_foreign_hooks`)."""
    refuse_foreign_hooks(command)
    states: list[PackageState] = []
    seen: set[tuple[str, ...]] = set()
    for cmd in analyse(command).commands:
        call = pacman_call(cmd)
        if call is None or tuple(call[1]) in seen:
            continue
        seen.add(tuple(call[1]))
        states.append(PackageState(program=cmd.program or "pacman", options=call[1],
                                   before=query_packages(runner, call[1])))
    return states


# --------------------------------------------------------------------------- systemd units


def unit_calls(cmd: SimpleCommand) -> tuple[bool, list[str]] | None:
    """(``--user``, unit names) of a state-changing systemctl call, else None."""
    if cmd.program != "systemctl":
        return None
    words: list[str] = []
    user = False
    skip = False
    for word in cmd.args:
        if skip:
            skip = False
            continue
        text = word.text
        if text == "--user":
            user = True
        elif text in _SYSTEMCTL_VALUE_OPTS:
            skip = True
        elif not text.startswith("-"):
            if not word.literal:
                raise BackupRefused(f"cannot record unit state: {text!r} is only known when "
                                    "the command runs")
            words.append(text)
    if not words or words[0] not in _UNIT_VERBS:
        return None
    return user, words[1:]


NO_UNDO_VERBS = frozenset({"daemon-reload", "daemon-reexec", "reset-failed"})
"""systemctl verbs whose effect needs no undo: the manager reads its unit files again (the
undo reloads it once more after it put the files back), or forgets a failure."""


def manager_calls(cmd: SimpleCommand) -> tuple[bool, str] | None:
    """(``--user``, verb) of a systemctl call that needs no undo (:data:`NO_UNDO_VERBS`)."""
    if cmd.program != "systemctl":
        return None
    words = [w.text for w in cmd.args if not w.text.startswith("-")]
    if len(words) != 1 or words[0] not in NO_UNDO_VERBS or \
            any(w.text in _SYSTEMCTL_VALUE_OPTS for w in cmd.args):
        return None
    return any(w.text == "--user" for w in cmd.args), words[0]


def reloads(command: str) -> list[str]:
    """The managers ``command`` tells to reload their unit files: ``user``, ``system``."""
    found = []
    for cmd in analyse(command).commands:
        call = manager_calls(cmd)
        if call is not None and call[1] == "daemon-reload":
            found.append("user" if call[0] else "system")
    return list(dict.fromkeys(found))


def unit_programs(cmd: SimpleCommand) -> str | None:
    """``start`` when a systemctl call makes its units' start programs run (start, restart,
    reload, ``enable --now``), ``stop`` when it stops them (stop, ``disable --now``), else
    None. Read without running anything (see :func:`unit_calls` for the units)."""
    if cmd.program != "systemctl":
        return None
    words: list[str] = []
    skip = False
    for word in cmd.args:
        if skip:
            skip = False
        elif word.text in _SYSTEMCTL_VALUE_OPTS:
            skip = True
        elif not word.text.startswith("-"):
            words.append(word.text)
    verb = words[0] if words else ""
    now = any(w.text == "--now" for w in cmd.args)
    if verb in _STARTS or (verb in ("enable", "reenable", "unmask") and now):
        return "start"
    if verb == "stop" or (verb in ("disable", "mask") and now):
        return "stop"
    return None


def started_units(command: str) -> list[str]:
    """``systemctl start X`` for every unit ``command`` starts, restarts or reloads: what
    runs then is the unit's own programs, whose effects Anna does not see (said before the
    step is approved, :mod:`annad.execution.runs_live`)."""
    found: list[str] = []
    for cmd in analyse(command).commands:
        try:
            call = unit_calls(cmd)
        except BackupRefused:
            continue  # refused before it runs
        if call is not None and unit_programs(cmd) == "start":
            found.extend(f"systemctl start {unit}" for unit in call[1])
    return found


def _ran(runner: HelperRunner, unit: str, what: str | None, *, user: bool,
         identity: Identity | None, env: Mapping[str, str]) -> list[str]:
    """What the step makes ``unit``'s own programs do (see :attr:`UnitState.ran`): a stop is
    only unseen when the unit has stop programs; a unit Anna cannot read counts as having
    them."""
    if what == "start":
        return [f"the step starts {unit}, which runs its own programs (ExecStart=)"]
    if what != "stop":
        return []
    scope = ["--user"] if user else []
    shown = runner.run_argv(["systemctl", *scope, "show", "--value", "--property=ExecStop",
                             "--property=ExecStopPost", "--", unit], timeout=30,
                            identity=identity, env=env)
    if shown.exit_code == 0 and not shown.output.strip():
        return []
    return [f"the step stops {unit}, which runs its own stop programs (ExecStop=)"]


def unit_state(runner: HelperRunner, unit: str, *, user: bool, identity: Identity | None,
               env: Mapping[str, str]) -> UnitState:
    """``is-enabled`` and ``is-active`` of one unit (``unknown`` when systemd cannot say)."""
    scope = ["--user"] if user else []
    enabled = runner.run_argv(["systemctl", *scope, "is-enabled", "--", unit], timeout=30,
                              identity=identity, env=env)
    active = runner.run_argv(["systemctl", *scope, "is-active", "--", unit], timeout=30,
                             identity=identity, env=env)
    return UnitState(unit=unit, user=user,
                     enabled=(enabled.output.strip().splitlines() or ["unknown"])[-1],
                     active=(active.output.strip().splitlines() or ["unknown"])[-1])


def unit_states(command: str, runner: HelperRunner, *, identity: Identity | None,
                env: Mapping[str, str]) -> list[UnitState]:
    """Pre-state of every unit a systemctl call in ``command`` changes."""
    states: list[UnitState] = []
    seen: set[tuple[bool, str]] = set()
    for cmd in analyse(command).commands:
        call = unit_calls(cmd)
        if call is None:
            continue
        user, units = call
        what = unit_programs(cmd)
        for unit in units:
            who = identity if user else None
            ran = _ran(runner, unit, what, user=user, identity=who, env=env)
            if (user, unit) not in seen:
                seen.add((user, unit))
                states.append(unit_state(runner, unit, user=user, identity=who, env=env))
            if ran:
                state = next(s for s in states if (s.user, s.unit) == (user, unit))
                state.ran.extend(r for r in ran if r not in state.ran)
    return states


# --------------------------------------------------------------------------- the rest


def values(command: str, runner: HelperRunner, *, identity: Identity | None,
           env: Mapping[str, str]) -> list[ValueState]:
    """Pre-state of every kernel parameter and desktop setting ``command`` sets."""
    return value_states(analyse(command).commands, runner, identity=identity, env=env)


def untyped_live(command: str) -> list[str]:
    """The live programs ``command`` runs to change the running system with no typed
    pre-state here (not a pacman transaction, not a unit change, not a read its rule proves
    read-only): what they change, nothing Anna records can put back or check afterwards.
    A part Anna cannot judge counts as changing."""
    found: list[str] = []
    for cmd in analyse(command).commands:
        program = cmd.program
        if program is None or program not in LIVE_PROGRAMS or program in found:
            continue
        try:
            if pacman_call(cmd) is not None or unit_calls(cmd) is not None or \
                    value_calls(cmd) is not None or manager_calls(cmd) is not None:
                continue
        except BackupRefused:
            pass  # a pre-state that cannot be recorded: the step is refused before it runs
        if not _reads_only(cmd):
            found.append(program)
    return found


def _reads_only(cmd: SimpleCommand) -> bool:
    """Its own rule proves ``cmd`` read-only (``ip addr show``, ``nmcli device status``), or
    it is ``kill -0`` (signal 0 is only delivered as a question: does the process exist)."""
    if cmd.program == "kill" and _signal_zero([w.text for w in cmd.args]):
        return True
    rule = rule_for(cmd.program or "")
    if rule is None:
        return False
    out = Out(AssessContext())
    try:
        rule(cmd, out)
    except Exception:  # a rule that cannot judge it proves nothing
        return False
    return out.readonly_marks > 0 and not out.reasons


def _signal_zero(words: list[str]) -> bool:
    """``kill -0 …``, ``kill -s 0 …``, ``kill --signal=0 …``: no signal is sent."""
    if not words:
        return False
    first = words[0]
    if first == "-0":
        return True
    if first in ("-s", "-n", "--signal") and len(words) > 1:
        return words[1] == "0"
    return first in ("-s0", "-n0", "--signal=0")
