"""Which paths to snapshot before a step: every write target the analysis finds.

The command is parsed with the contract's bash analysis
(:func:`anna_common.shell.grammar.analyse`); :func:`anna_common.risk.writes.write_targets`
names what each simple command writes, and :func:`anna_common.risk.paths.resolve`
turns the words into paths against the step's home and working directory. A
target whose path is only known when the command runs (``> "$f"``, ``$(...)``)
cannot be backed up, so the step is refused (:class:`~annad.backups.backup.BackupRefused`);
kernel and device files are noted and left alone.
"""

from __future__ import annotations

import glob
import posixpath
from dataclasses import dataclass
from pathlib import Path

from anna_common.risk import paths
from anna_common.risk.runtimename import new_entry_dir
from anna_common.risk.writes import CP_VALUES, WriteTarget, dest_and_sources, write_targets
from anna_common.shell.grammar import SimpleCommand, analyse
from anna_common.shell.words import Word
from annad.backups.backup import BackupRefused, kernel_path
from annad.backups.manifest import printable

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
    new_only: bool = False
    """``path`` is a directory in which the step only creates entries named at run time
    (save its listing; undo removes only what is new)."""


def _knowable(word: Word, known: dict[str, str]) -> bool:
    """Whether the path is fixed before the command runs (``$HOME`` and literal assignments)."""
    if word.literal:
        return True
    return not word.substituted and set(word.variables) <= {"HOME", *known}


def _raw_value(word: Word, value: str, home: str, cwd: str | None, known: dict[str, str]
               ) -> str:
    """The absolute path ``value`` names before any normalisation (``..`` kept)."""
    if not word.literal:
        value = "".join(s.text if s.kind == "literal" else
                        home if s.name == "HOME" else known[s.name or ""]
                        for s in word.segments)
    if word.tilde and (value == "~" or value.startswith("~/")):
        value = home.rstrip("/") + value[1:]
    if not value.startswith("/"):
        if cwd is None:
            raise BackupRefused(f"cannot back up {word.text!r}: it is relative to a working "
                                "directory only known when the command runs")
        value = cwd.rstrip("/") + "/" + value
    return value


def _kernel_places(word: Word, home: str, cwd: str | None, known: dict[str, str]
                   ) -> list[str] | None:
    """For a path with ``..`` in it: where the kernel lands, resolving symlinks component by
    component (``~/link/../x`` with ``link → /tmp/d`` is ``/tmp/x``). None without ``..``."""
    if not any(".." in value.split("/") for value in word.values):
        return None
    out: list[str] = []
    for value in word.values:
        raw = _raw_value(word, value, home, cwd, known)
        matches = sorted(glob.glob(raw)) if word.glob else []  # noqa: PTH207
        out.extend(kernel_path(each) for each in matches or [raw])
    return out


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
    found: dict[tuple[str, bool], SnapTarget] = {}
    for cmd in analysis.commands:
        cwd = _cwd_after(cmd, cwd, home)
        for target in write_targets(cmd):
            for snap in _snap_targets(cmd, target, home, cwd, known, notes):
                # a directory's listing (new entries) and its own snapshot are both kept
                key = (snap.path, snap.new_only)
                old = found.get(key)
                if old is None or (snap.tree and not old.tree):
                    found[key] = snap
    return list(found.values()), notes


def _snap_targets(cmd: SimpleCommand, target: WriteTarget, home: str, cwd: str | None,
                  known: dict[str, str], notes: list[str]) -> list[SnapTarget]:
    """What to save for one write target."""
    if not _knowable(target.word, known):
        directory = new_entry_dir(target)
        if directory is None:
            raise BackupRefused(f"cannot back up {target.word.text!r} ({cmd.program}): its "
                                "location is only known when the command runs")
        # a new entry named at run time in a known directory: save the directory's listing
        # (where the kernel finds it: ``..`` after a symlink included)
        kernel = _kernel_places(directory, home, cwd, known)
        return [SnapTarget(path, False, False, True) for path in kernel or [
            _absolute(place.path, home, directory)
            for place in paths.resolve(directory, home=home, cwd=cwd, known=known)]]
    kernel = _kernel_places(target.word, home, cwd, known)
    if kernel is not None:
        places = kernel
    else:
        places = []
        for place in paths.resolve(target.word, home=home, cwd=cwd, known=known):
            path = _absolute(place.path, home, target.word)
            matches = sorted(glob.glob(path)) if place.glob else []  # noqa: PTH207
            places.extend(matches or [path])
    out: list[SnapTarget] = []
    for path in places:
        if path.startswith(_PSEUDO) or path in ("/proc", "/sys", "/dev"):
            notes.append(f"{printable(path)} is a kernel or device file; it is not backed up")
            continue
        out.extend(_expand(cmd, target, path, home, cwd, known))
    return out
