"""Which preview a step gets: files (overlay run), packages, units, or none with a reason.

The decision reads the contract's own parse (:func:`anna_common.shell.grammar.analyse`). A step is a
*file* step only when every program it runs is one whose effects are files and nothing else
(the tools below and shell builtins): no IPC, package, service, network or process action.
This list decides what is *meaningful* to preview, not what is safe: every file step runs in
the preview confinement anyway (read-only tree, no network, no sockets for root), so a wrong
"file" verdict can only produce a preview that fails, never a change.
"""

from __future__ import annotations

from dataclasses import dataclass

from anna_common.protocol.preview import PreviewKind
from anna_common.shell.grammar import analyse
from annad.backups.backup import BackupRefused
from annad.execution.prestate import pacman_call
from annad.preview.systemd import unit_calls

FILE_TOOLS = frozenset({
    "sed", "tee", "cp", "mv", "ln", "rm", "rmdir", "mkdir", "chmod", "chown", "chgrp",
    "truncate", "install", "touch", "echo", "printf", "cat", "true", "false", ":", "test",
    "[", "cd", "head", "tail", "sort", "uniq", "tr", "cut", "grep", "awk", "gawk", "patch",
    "dd", "base64", "basename", "dirname", "realpath", "readlink", "ls", "stat", "wc",
    "printenv", "export", "set", "unset", "local", "read", "exit", "return", "mktemp",
})
"""Programs whose only effects are on files (or nothing at all)."""
_CODE_RUNNERS = frozenset({"bash", "sh", "dash", "eval"})
_WHY = {
    "systemctl": "talks to systemd", "pacman": "installs packages", "yay": "installs packages",
    "paru": "installs packages", "curl": "uses the network", "wget": "uses the network",
    "kill": "signals processes", "pkill": "signals processes", "killall": "signals processes",
    "nmcli": "talks to NetworkManager", "busctl": "talks to D-Bus", "dbus-send": "talks to D-Bus",
}


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
        if program is None:
            return StepKind("none", "runs a program named only at run time")
        if program not in FILE_TOOLS:
            why = _WHY.get(program, f"runs {program}, which is not one of the file tools "
                           "Anna can preview")
            return StepKind("none", why)
    if not programs:
        return StepKind("none", "runs nothing Anna can see")
    return StepKind("files")
