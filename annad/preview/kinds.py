"""Which preview a step gets: files (overlay run), packages, units, or none with a reason.

The decision reads the contract's own parse (:func:`anna_common.shell.grammar.analyse`).
Every step an approved run would capture (:mod:`annad.execution.livekinds`: all but the
live kinds) is a *file* step: it runs over the overlay of the whole writable tree and the
preview shows whatever it changed, whichever program made the change. Steps acting on the
running system get their typed preview (packages, units) or none with the reason; so do
steps whose point is the network or a signal, which the preview's walls refuse (their
preview could only fail).
"""

from __future__ import annotations

from dataclasses import dataclass

from anna_common.protocol.preview import PreviewKind
from anna_common.shell.grammar import analyse
from annad.backups.backup import BackupRefused
from annad.execution.livekinds import LIVE_PROGRAMS
from annad.execution.prestate import pacman_call
from annad.preview.systemd import unit_calls

_CODE_RUNNERS = frozenset({"bash", "sh", "dash", "eval"})
_WHY = {
    "curl": "uses the network", "wget": "uses the network", "ssh": "uses the network",
    "scp": "uses the network", "kill": "signals processes", "pkill": "signals processes",
    "killall": "signals processes",
}
"""Captured at execution, but their effect is what the preview's walls refuse."""


@dataclass(frozen=True, slots=True)
class StepKind:
    """How one step is previewed."""

    kind: PreviewKind
    """``files``, ``packages``, ``units`` or ``none``."""
    reason: str | None = None
    """For ``none``: why."""


def _unit_kind(command: str) -> bool:
    return bool(unit_calls(command))


def step_kind(command: str) -> StepKind:
    """The preview kind of ``command`` (never raises)."""
    try:
        analysis = analyse(command)
    except Exception:
        return StepKind("none", "the command could not be analysed")
    if not analysis.parse_ok:
        return StepKind("none", "the command does not parse")
    # a shell or eval handed code is judged by that code (its commands are in the list too)
    programs: list[str | None] = [cmd.program for cmd in analysis.commands
                                  if not (cmd.program in _CODE_RUNNERS and cmd.code)]
    try:
        if any(pacman_call(cmd) is not None for cmd in analysis.commands):
            if set(programs) - {"pacman"}:
                return StepKind("packages", "only the pacman part is previewed")
            return StepKind("packages")
    except BackupRefused as exc:
        return StepKind("none", f"installs packages named only at run time ({exc})")
    if _unit_kind(command):
        return StepKind("units")
    for program in programs:
        if program in _WHY:
            return StepKind("none", _WHY[program])
        if program in LIVE_PROGRAMS:
            return StepKind("none", f"runs {program}, which acts on the running system")
    if not analysis.commands:
        return StepKind("none", "runs nothing Anna can see")
    return StepKind("files")
