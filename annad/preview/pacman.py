"""Typed preview of a pacman step: ``pacman --print`` lists what the transaction would do.

The step's own call is replayed with ``--print --print-format '%n %v %s'`` and without
``-y`` (a preview never refreshes the sync databases: it shows the transaction against the
databases as they are now). It runs in the confinement of checks (read-only tree, no
network), against the step's own ``--root``/``--dbpath``/``--config`` or, when it names
none, the daemon's ``pacman_dbpath``. Names the command gave are targets; everything else
pacman lists was pulled in (or, with ``-s``/``-c``, removed along) — a dependency.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from anna_common.protocol.preview import PackageChange
from anna_common.shell.grammar import analyse
from annad.backups.backup import BackupRefused
from annad.confine.runner import run_confined
from annad.execution.prestate import pacman_call

if TYPE_CHECKING:
    from pathlib import Path

    from anna_common.shell.grammar import SimpleCommand
    from annad.confine.credentials import Identity

TIMEOUT_S = 30.0
"""Wall time of one ``pacman --print``."""
_DROP = frozenset({"--refresh", "--noconfirm", "--confirm", "--noprogressbar"})
_VALUE_OPTS = frozenset({"--root", "-r", "--dbpath", "-b", "--config", "--sysroot",
                         "--cachedir", "--logfile", "--gpgdir", "--hookdir", "--arch",
                         "--assume-installed", "--ignore", "--ignoregroup", "--overwrite"})


_DB_OPTS = frozenset({"--root", "-r", "--dbpath", "-b", "--config", "--sysroot"})


class PacmanPreviewError(Exception):
    """No package preview can be made (the reason is the message)."""


def _argv(cmd: SimpleCommand, op: str, dbpath: Path | None) -> tuple[list[str], list[str]]:
    """The ``--print`` call and the names the command gave."""
    argv, named = ["pacman"], []
    has_db = False
    skip = False
    for word in cmd.args:
        text = word.text
        if not word.literal:
            raise PacmanPreviewError(f"{text!r} is only known when the command runs")
        if skip:
            argv.append(text)
            skip = False
        elif text in _DROP:
            continue
        elif text.split("=", 1)[0] in _VALUE_OPTS:
            has_db |= text.split("=", 1)[0] in _DB_OPTS - {"--config"}
            argv.append(text)
            skip = "=" not in text
        elif text.startswith("-") and not text.startswith("--"):
            flags = text[1:].replace("y", "") if op == "S" else text[1:]
            if flags:
                argv.append("-" + flags)
        elif not text.startswith("-"):
            argv.append(text)
            named.append(text.rsplit("/", 1)[-1])
        else:
            argv.append(text)
    if not has_db and dbpath is not None:
        argv += ["--dbpath", str(dbpath)]
    return [*argv, "--print", "--print-format", "%n %v %s"], named


def _parse(output: str, op: str, named: list[str], installed: dict[str, str]
           ) -> list[PackageChange]:
    out: list[PackageChange] = []
    for line in output.splitlines():
        parts = line.split()
        if len(parts) != 3 or not parts[2].isdigit() or line.startswith(("warning", "error")):
            continue
        name, version, size = parts[0], parts[1], int(parts[2])
        if op == "R":
            action = "remove"
        elif name not in installed:
            action = "install"
        else:
            action = "reinstall" if installed[name] == version else "upgrade"
        # -U names files, not packages: what it lists is what the files hold
        out.append(PackageChange(name=name, version=version, size=size, action=action,
                                 dependency=op != "U" and name not in named))
    return out


def _installed(argv: list[str], identity: Identity, root_read: bool, python: str | None
               ) -> dict[str, str]:
    """Installed packages in the database the ``--print`` call used (name → version)."""
    where: list[str] = []
    for i, word in enumerate(argv):
        name = word.split("=", 1)[0]
        if name in _DB_OPTS:
            where += [word] if "=" in word else argv[i:i + 2]
    run = run_confined(shlex.join(["pacman", *where, "-Q"]), identity, root_read=root_read,
                       timeout=TIMEOUT_S, max_output=8 * 1024 * 1024, python=python)
    found: dict[str, str] = {}
    for line in run.output.splitlines():
        name, _, version = line.strip().partition(" ")
        if name and version and " " not in version:
            found[name] = version
    return found


def preview(command: str, identity: Identity, *, root_read: bool, dbpath: Path | None,
            python: str | None = None) -> list[PackageChange]:
    """The package changes of every pacman call in ``command``; raises
    :class:`PacmanPreviewError` with pacman's own words when it cannot say."""
    out: list[PackageChange] = []
    for cmd in analyse(command).commands:
        try:
            call = pacman_call(cmd)
        except BackupRefused as exc:
            raise PacmanPreviewError(str(exc)) from None
        if call is None:
            continue
        if cmd.program != "pacman":
            raise PacmanPreviewError(f"{cmd.program} cannot print its transaction")
        argv, named = _argv(cmd, call[0], dbpath)
        run = run_confined(shlex.join(argv), identity, root_read=root_read, timeout=TIMEOUT_S,
                           max_output=1024 * 1024, python=python)
        if not run.ok:
            why = run.error or run.output.strip()[-500:] or f"exit status {run.exit_code}"
            raise PacmanPreviewError(f"pacman --print: {why}")
        installed = _installed(argv, identity, root_read, python)
        out += _parse(run.output, call[0], named, installed)
    return out
