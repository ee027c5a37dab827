"""Undoing a step's file changes without destroying what someone did since.

For each saved target, newest step first:

- a target (or a path above it) that an earlier undo in this rollback left in
  conflict is left alone too;
- a target Anna restored earlier in this rollback (a later step's snapshot put
  it back to exactly what this step left) is trusted;
- otherwise, when the step's result was recorded (:mod:`annad.backups.identity`), what
  is there now must be that result. If it is not, and it is not already the
  saved state either, the target is a **conflict**: it is left as it is and
  reported, never overwritten or deleted;
- a ``new_only`` directory (``cp f f.bak.$(date +%s)``) loses only the entries
  the step created, and only those unchanged since.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from annad.backups import inplace, safefs
from annad.backups.identity import (
    HashBudget,
    changed,
    half_undone,
    inside,
    matches_snapshot,
    partly_restored,
    record,
    scan,
)
from annad.backups.leftovers import remove_whole
from annad.backups.manifest import printable
from annad.backups.restore import NoRoom, outside_message, restore_target

if TYPE_CHECKING:
    from annad.backups.backup import BlobStore
    from annad.backups.manifest import Ident, TargetSnapshot
    from annad.backups.trash import Trash


@dataclass
class Outcome:
    """One file action's result (turned into an UndoResult by :mod:`annad.execution.undo`)."""

    action: str
    target: str
    ok: bool
    message: str


@dataclass
class Progress:
    """What this rollback already did, across steps (newest first)."""

    restored: set[str] = field(default_factory=set)
    """Paths Anna put back during this rollback."""
    conflicts: set[str] = field(default_factory=set)
    """Paths left as they are because someone changed them since the plan ran."""
    resuming: bool = False
    """An earlier rollback of this plan was started and did not finish (killed, stopped): a
    target each part of which is as the step left it or as saved is its half-done work."""
    trash: Trash | None = None
    """Where this rollback's removed trees go (:meth:`annad.backups.trash.Trash.take`)."""


def after_tree(target: TargetSnapshot) -> bool:
    """Whether the step's result at this target is recorded with everything below it."""
    return target.tree or (bool(target.entries) and target.entries[0].kind == "absent")


def _conflict(target: str, why: str) -> Outcome:
    return Outcome("conflict", target, False,
                   f"{why}; Anna left it as it is (undo it by hand if you want the old one)")


def undo_target(target: TargetSnapshot, blobs: BlobStore, allowed: tuple[str, ...] | None,
                progress: Progress, *, in_place: bool = False) -> list[Outcome]:
    """Undo one saved target (see the module text).

    Raises :class:`~annad.backups.restore.NoRoom` (nothing changed) when a file's temporary copy
    does not fit, unless ``in_place``; then a file that cannot fit even in place is
    reported and left as it is.
    """
    path = target.path
    if allowed is not None and not inside(path, list(allowed)):
        return [Outcome("restore", path, False, outside_message(path))]
    blocked = [c for c in progress.conflicts if inside(path, [c]) or inside(c, [path])]
    if blocked:
        return [_conflict(path, f"{printable(sorted(blocked)[0])} was changed since the "
                          "plan ran")]
    if target.new_only:
        return _undo_new_entries(target, progress)
    if target.after is not None and not inside(path, list(progress.restored)):
        why = changed(target.after, tree=after_tree(target),
                      trusted=lambda p: inside(p, list(progress.restored)))
        if why is not None:
            if matches_snapshot(target):
                kind = "delete" if target.entries[0].kind == "absent" else "restore"
                return [Outcome(kind, path, True, "already as it was before the plan")]
            if not _own_half_done(target, blobs, progress):
                progress.conflicts.add(path)
                return [_conflict(path, why)]
    lost: list[str] = []
    try:
        action = restore_target(target, blobs, allowed, in_place=in_place, lost=lost,
                                trash=progress.trash)
    except NoRoom as exc:
        if not in_place:
            raise
        return [Outcome("restore", path, False, printable(exc.strerror or str(exc)))]
    except (OSError, ValueError) as exc:
        return [Outcome("restore", path, False, printable(str(exc)))]
    progress.restored.add(path)
    if action == "delete":
        return [Outcome(action, path, True, "deleted (it did not exist before)")]
    if lost:  # never "byte-exact" without every attribute it had
        return [Outcome(action, path, False, "restored its content, owner, mode and mtime, but "
                        "not these extended attributes (not byte-exact): "
                        + "; ".join(lost[:20]))]
    return [Outcome(action, path, True, "restored byte-exact in place (no room for a "
                    "temporary copy)" if in_place else "restored byte-exact")]


def _own_half_done(target: TargetSnapshot, blobs: BlobStore, progress: Progress) -> bool:
    """Whether what differs at ``target`` is Anna's own undo, killed half way, to be finished
    now: a tree partly put back, a file an in-place restore was rewriting (its marker,
    :mod:`annad.backups.inplace`), or — when this rollback resumes a killed one — a tree each
    part of which is as the step left it or as saved."""
    return partly_restored(target) or \
        inplace.pending(blobs.dir, [e.path for e in target.entries]) or \
        (progress.resuming and half_undone(target))


def undo_targets(targets: list[TargetSnapshot], blobs: BlobStore,
                 allowed: tuple[str, ...] | None, progress: Progress) -> list[Outcome]:
    """Undo a step's targets, newest first; a file whose temporary copy does not fit waits
    until the others are done (they may free room), smallest first, then goes in place."""
    out: list[Outcome] = []
    waiting: list[TargetSnapshot] = []
    for target in reversed(targets):
        try:
            out.extend(undo_target(target, blobs, allowed, progress))
        except NoRoom:
            waiting.append(target)
    for target in sorted(waiting, key=lambda t: sum(e.size for e in t.entries)):
        try:
            out.extend(undo_target(target, blobs, allowed, progress))
        except NoRoom:
            out.extend(undo_target(target, blobs, allowed, progress, in_place=True))
    return out


def _created(target: TargetSnapshot) -> dict[str, list[Ident]]:
    """The entries the step created in the directory, each with what is recorded below it."""
    groups: dict[str, list[Ident]] = {}
    for ident in target.after or []:
        rest = ident.path[len(target.path.rstrip("/")) + 1:]
        top = posixpath.join(target.path, rest.split("/", 1)[0])
        groups.setdefault(top, []).append(ident)
    return groups


def _undo_new_entries(target: TargetSnapshot, progress: Progress) -> list[Outcome]:
    before = {i.path for i in target.listing or []}
    out: list[Outcome] = []
    overwritten = list(target.overwritten)
    if target.after is None:
        # the step did not finish: nothing was recorded, so whatever is new is its own
        created: dict[str, list[Ident]] = {p: [] for p in _names(target.path) if p not in before}
        overwritten = _touched(target.listing or [])
    else:
        created = _created(target)
    trusted = lambda p: inside(p, list(progress.restored))  # noqa: E731 - one-line predicate
    for path, recorded in created.items():
        why = changed(recorded, tree=True, trusted=trusted) if recorded else None
        if why is not None:
            progress.conflicts.add(path)
            out.append(_conflict(path, why))
            continue
        out.append(_remove(path))
        progress.restored.add(path)
    out.extend(Outcome("restore", p, False, "it existed before the step, which changed it; "
                       "Anna had no backup of it (only new entries were expected)")
               for p in overwritten)
    if not out:
        out.append(Outcome("delete", target.path, True, "the step created nothing here"))
    return out


def _remove(path: str) -> Outcome:
    try:
        with safefs.parent_dir(path) as pfd:
            gone = remove_whole(pfd, safefs.basename(path))
    except FileNotFoundError:
        gone = False
    except OSError as exc:
        return Outcome("delete", path, False, printable(str(exc)))
    return Outcome("delete", path, True, "deleted (the step created it)" if gone else
                   "already gone")


def record_new_entries(target: TargetSnapshot, budget: HashBudget) -> None:
    """After the step: what it created in a ``new_only`` directory, and what it overwrote."""
    before = {i.path: i for i in target.listing or []}
    after: list[Ident] = []
    for path in _names(target.path):
        if path not in before:
            found = record(path, tree=True, budget=budget)
            # too big to list: keep its top alone, so undo sees "more than the plan left"
            # and reports a conflict rather than deleting it unchecked
            after.extend(found or scan(path, tree=False, limit=1, hash_if=_no_hash))
    target.after = after
    # a name that was there before and now has a new inode or change time: overwritten
    target.overwritten = _touched(list(before.values()))


def _touched(listing: list[Ident]) -> list[str]:
    """Entries that were there before and have a new inode or change time now."""
    out = []
    for old in listing:
        info = _lstat(old.path)
        if info is not None and (info.st_ino, info.st_ctime_ns) != (old.ino, old.ctime_ns):
            out.append(old.path)
    return out


def _no_hash(_: str, __: os.stat_result) -> bool:
    return False


def _names(directory: str) -> list[str]:
    try:
        with safefs.parent_dir(directory) as pfd:
            dfd = safefs.open_dir_at(pfd, safefs.basename(directory))
            try:
                return [posixpath.join(directory, n) for n in sorted(os.listdir(dfd))]  # noqa: PTH208
            finally:
                os.close(dfd)
    except (OSError, ValueError):
        return []


def _lstat(path: str) -> os.stat_result | None:
    try:
        with safefs.parent_dir(path) as pfd:
            return safefs.lstat_at(pfd, safefs.basename(path))
    except (OSError, ValueError):
        return None
