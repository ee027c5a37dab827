"""Following ``cd`` through a command: the working directories its relative paths land in.

A ``cd`` in a subshell, a pipeline or nested code does not outlive it, and Anna does not
follow which does: so a ``cd`` never forgets where the command was, and a relative path is
judged in each place it may be (:attr:`Out.earlier_cwds`; ``cd /etc; (cd ~); rm shadow``
removes /etc/shadow). A relative ``cd`` is taken from every one of those places, so the
places double with each (``cd a0; cd a1; …``: 12 of them took 1.3 s, 16 over 100 s; issue 38
item 4): past :data:`MAX_CWDS` the command is too large to analyse (HIGH) and a relative
``cd`` lands in an unknown place (``$?``), where a relative path has an unknown target.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from anna_common.risk import paths
from anna_common.risk.rules.base import Code

if TYPE_CHECKING:
    from anna_common.risk.rules.base import Out
    from anna_common.shell.grammar import SimpleCommand

CHDIR = frozenset({"cd", "pushd", "popd"})
"""Programs that change the working directory."""
MAX_CWDS = 64
"""Places a relative ``cd`` is followed from (each adds as many: six distinct ones in a row
reach it; a realistic command has a handful)."""


def track_cwd(cmd: SimpleCommand, out: Out) -> None:
    """Follow ``cd``: the new place joins the places the command may be in (see
    :attr:`Out.earlier_cwds`); a place Anna cannot pin down is the unknown root ``$?``,
    so a relative path after it has an unknown target."""
    if cmd.program not in CHDIR:
        return
    if _from_anywhere(cmd):
        # ``cd /etc``, ``cd``, ``popd``: the same from every place, worked out once
        targets = [_chdir_target(cmd, out, out.cwd)]
    elif len(out.earlier_cwds) >= MAX_CWDS:
        if not out.too_large_reported():
            out.high(Code.TOO_LARGE, "too large to analyse: it changes directory from more "
                     f"than {MAX_CWDS} places Anna follows in one command", target="cd")
        targets = [None]
    else:
        targets = [_chdir_target(cmd, out, base) for base in [out.cwd, *out.earlier_cwds]]
    out.earlier_cwds.add(out.cwd if out.cwd is not None else paths.HOME)
    known = [t for t in targets if t is not None]
    out.cwd = known[0] if len(known) == len(targets) else paths.UNKNOWN
    out.earlier_cwds.update(known)
    out.earlier_cwds.discard(out.cwd)


def _from_anywhere(cmd: SimpleCommand) -> bool:
    """Where ``cmd`` lands does not depend on where it starts: not one operand (no operand,
    options, ``popd``: see :func:`_chdir_target`), or one literal absolute path."""
    args = [w for w in cmd.args if w.text != "--"]
    return cmd.program == "popd" or len(args) != 1 or (
        args[0].literal and args[0].text.startswith("/"))


def _chdir_target(cmd: SimpleCommand, out: Out, base: str | None) -> str | None:
    """Where ``cd``/``pushd`` lands from ``base``, when Anna can tell; None otherwise."""
    args = [w for w in cmd.args if w.text != "--"]
    if cmd.program == "popd" or any(w.text.startswith(("-", "+")) for w in args):
        return None  # the directory stack, ``cd -``, -P/-L/-e/-@: not followed
    if not args:
        return paths.HOME if cmd.program == "cd" else None
    if len(args) != 1 or args[0].glob:
        return None
    word = args[0]
    cdpath = "CDPATH" in out.known or any(name == "CDPATH" for name, _ in cmd.assignments)
    if cdpath and not word.text.startswith(("/", "~", "./", "../")):
        return None
    places = paths.resolve(word, home=out.ctx.home, cwd=base, known=out.known)
    if len(places) != 1 or places[0].glob or paths.is_unknown_root(places[0].path):
        return None
    place = places[0].path
    if paths.is_relative(place):
        # relative to the step's own directory: the home, where Anna runs user steps
        joined = posixpath.normpath(place)
        return None if joined.startswith("..") else f"{paths.HOME}/{joined}"
    return place
