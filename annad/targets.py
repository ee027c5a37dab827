"""Which paths to snapshot before a step: every write target the analysis finds.

The command is parsed with the contract's bash analysis
(:func:`anna_common.shell.analyse`); :func:`anna_common.writes.write_targets`
names what each simple command writes, and :func:`anna_common.paths.resolve`
turns the words into paths against the step's home and working directory. A
target whose path is only known when the command runs (``> "$f"``, ``$(...)``)
cannot be backed up, so the step is refused (:class:`~annad.backup.BackupRefused`);
kernel and device files are noted and left alone.
"""

from __future__ import annotations

import glob
import posixpath
from dataclasses import dataclass
from pathlib import Path

from anna_common import paths
from anna_common.shell import SimpleCommand, analyse
from anna_common.shellwords import Word
from anna_common.writes import CP_VALUES, WriteTarget, dest_and_sources, write_targets
from annad.backup import BackupRefused

_TREE_HOWS = frozenset({"delete", "move-source", "move", "extract"})
"""Writes that may change anything below a directory."""
_NO_FOLLOW_HOWS = frozenset({"delete", "move-source", "move", "link"})
"""Writes that act on a symlink itself rather than on what it points to."""
_INTO_DIR_HOWS = frozenset({"copy", "move", "link"})
"""Writes that land inside the destination when it is a directory."""
_PSEUDO = ("/proc/", "/sys/", "/dev/")


@dataclass(frozen=True, slots=True)
class SnapTarget:
    """One path to save before the step."""

    path: str
    """Absolute, normalised."""
    tree: bool
    """Save everything below it when it is a directory."""
    follow: bool
    """Also save the file a symlink at ``path`` points to."""


def _knowable(word: Word, known: dict[str, str]) -> bool:
    """Whether the path is fixed before the command runs (``$HOME`` and literal assignments)."""
    if word.literal:
        return True
    return not word.substituted and set(word.variables) <= {"HOME", *known}


def _absolute(place: str, home: str, word: Word) -> str:
    if place.startswith(paths.UNKNOWN) or (not place.startswith(("/", paths.HOME))):
        raise BackupRefused(f"cannot back up {word.text!r}: its location is only known when "
                            "the command runs")
    if place.startswith(paths.HOME):
        place = home.rstrip("/") + place[len(paths.HOME):]
    return posixpath.normpath(place) if place != "/" else place


def _sources(cmd: SimpleCommand) -> list[Word]:
    """What cp/mv/ln put into a destination directory (the contract's own parse)."""
    return dest_and_sources(cmd.args, CP_VALUES)[1]


def _expand(cmd: SimpleCommand, target: WriteTarget, path: str, home: str, cwd: str | None,
            known: dict[str, str]) -> list[SnapTarget]:
    tree = target.recursive or target.how in _TREE_HOWS
    follow = target.how not in _NO_FOLLOW_HOWS
    if target.how in _INTO_DIR_HOWS and Path(path).is_dir():
        # cp/mv/ln into an existing directory write DIR/basename(source) for each source
        out = []
        for src in _sources(cmd):
            if not _knowable(src, known):
                raise BackupRefused(f"cannot back up what {cmd.program} writes into {path}: "
                                    f"the source {src.text!r} is only known at run time")
            for place in paths.resolve(src, home=home, cwd=cwd, known=known):
                name = posixpath.basename(place.path.rstrip("/"))
                out.append(SnapTarget(posixpath.join(path, name), tree, follow))
        return out
    return [SnapTarget(path, tree, follow)]


def _cwd_after(cmd: SimpleCommand, cwd: str | None, home: str) -> str | None:
    """Track ``cd DIR`` at the top level, as the risk rules do; unknown means None."""
    if cmd.program not in ("cd", "pushd") or cmd.depth > 0:
        return cwd
    if not cmd.args:
        return home
    if len(cmd.args) != 1 or not cmd.args[0].literal:
        return None
    places = paths.resolve(cmd.args[0], home=home, cwd=cwd)
    if not places or places[0].glob:
        return None
    place = places[0].path
    if place.startswith(paths.HOME):
        return home.rstrip("/") + place[len(paths.HOME):] or "/"
    return place if place.startswith("/") else None


def snapshot_targets(command: str, *, home: str, cwd: str | None
                     ) -> tuple[list[SnapTarget], list[str]]:
    """The paths to save before ``command`` runs in ``cwd`` with ``home``, and notes.

    Raises :class:`BackupRefused` when a written path cannot be known in advance.
    """
    analysis = analyse(command)
    notes: list[str] = []
    if not analysis.parse_ok:
        notes.append("the command does not parse; no file it writes could be found")
    known = {name: value.text for name, value in analysis.assignments if value.literal}
    found: dict[str, SnapTarget] = {}
    for cmd in analysis.commands:
        cwd = _cwd_after(cmd, cwd, home)
        for target in write_targets(cmd):
            if not _knowable(target.word, known):
                raise BackupRefused(f"cannot back up {target.word.text!r} ({cmd.program}): its "
                                    "location is only known when the command runs")
            for place in paths.resolve(target.word, home=home, cwd=cwd, known=known):
                path = _absolute(place.path, home, target.word)
                if path.startswith(_PSEUDO) or path in ("/proc", "/sys", "/dev"):
                    notes.append(f"{path} is a kernel or device file; it is not backed up")
                    continue
                matches = sorted(glob.glob(path)) if place.glob else []  # noqa: PTH207
                for each in matches or [path]:
                    for snap in _expand(cmd, target, each, home, cwd, known):
                        old = found.get(snap.path)
                        if old is None or (snap.tree and not old.tree):
                            found[snap.path] = snap
    return list(found.values()), notes
