"""Before a package manager runs: who can write the programs its options make it run.

A package manager runs live as root and runs the programs its hook options name (apt's
``DPkg::Pre-Invoke``, ``Dir::Bin::dpkg``; dpkg's ``--pre-invoke``; rpm's ``%(…)``; dnf's
``pluginpath``: :func:`anna_common.risk.rules.pmhooks.hook_programs`). The classifier bans a
program in a place another user can write by its path alone (``/tmp``, a home); here the
daemon looks at the machine: a step whose hook program, or any directory above it, is owned
by a uid other than root or writable by group or others is refused before it runs
(:class:`~annad.backups.backup.BackupRefused`, like any pre-state that cannot be trusted):
that uid could put anything there between the approval and the run, and root would run it.
A name that does not exist yet is judged by the directory that would hold it.
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path

from anna_common.risk.rules.pmhooks import hook_programs
from annad.backups.backup import BackupRefused
from annad.backups.manifest import printable

_MAX_LINKS = 16
"""Symbolic links followed on one path before it counts as untrustworthy."""


def refuse_foreign_hooks(command: str, *, root: str = "/") -> None:
    """Raise :class:`BackupRefused` when a program ``command``'s package manager is told to
    run could be written by a uid other than root. ``root``: where ``/`` is (tests)."""
    for program in hook_programs(command):
        why = _writable(program, root)
        if why is not None:
            raise BackupRefused(f"the step would run {printable(program)} as root, and {why}: "
                                "the step did not run")


def _writable(path: str, root: str, depth: int = 0) -> str | None:
    """Why someone other than root could change what ``path`` is, or None."""
    if depth > _MAX_LINKS:
        return f"{printable(path)} goes through too many symbolic links"
    parts = [p for p in posixpath.normpath(path).split("/") if p]
    current = "/"
    for index in range(len(parts) + 1):
        if index:
            current = posixpath.join(current, parts[index - 1])
        try:
            info = os.lstat(_at(root, current))
        except FileNotFoundError:
            return None  # made later only by whoever may write the directory above (checked)
        except OSError as exc:
            return f"{printable(current)} cannot be examined ({exc.strerror})"
        if info.st_uid != 0:
            return f"{printable(current)} belongs to uid {info.st_uid}"
        if stat.S_ISLNK(info.st_mode):
            target = str(Path(_at(root, current)).readlink())
            rest = "/".join(parts[index:])
            base = target if target.startswith("/") else posixpath.join(
                posixpath.dirname(current), target)
            return _writable(posixpath.join(base, rest) if rest else base, root, depth + 1)
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            who = "others" if info.st_mode & stat.S_IWOTH else "its group"
            return f"{printable(current)} is writable by {who}"
    return None


def _at(root: str, path: str) -> str:
    """``path`` of the machine as seen from ``root``."""
    return path if root == "/" else posixpath.join(root, path.lstrip("/"))
