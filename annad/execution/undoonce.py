"""One undo per path, and the comparison after every undo.

A step's rollback command is the model's way to undo it by hand (``sed -i '$d' ~/.bashrc``
after ``echo … >> ~/.bashrc``); the daemon also restores every path the step changed from
its own backup. Done both, the path is undone twice: the restore put the file back
byte-exact, then the command deleted the person's own last line. So:

- a captured rollback command runs *before* the restore, and its observed changes to a path
  the daemon restores from its own backup (or to a tree holding one: ``rm -rf`` of a parent,
  a directory replaced whole) are dropped unlanded (:func:`drops`); the restore then puts the
  path back from the backup, once. What it changed elsewhere lands as judged;
- after the whole undo, every path the plan or the undo touched is compared with its state
  before the plan (:func:`compare`): a plan target with the oldest step's snapshot, a path only
  the rollback command changed with its state before that command, when every step of the plan
  ran captured (else Anna has no record of what the plan did there). Any difference is a
  ``verify`` failure naming the path: the rollback ends ``rollback_incomplete``, never
  ``rolled_back``.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from anna_common.errors import ErrorCode
from anna_common.protocol.models import UndoResult
from annad.backups import manifest as manifests
from annad.backups import safefs, xattrs
from annad.backups.identity import inside, matches_snapshot
from annad.backups.manifest import printable

if TYPE_CHECKING:
    from pathlib import Path

    from annad.backups.manifest import StepManifest, TargetSnapshot
    from annad.capture.layers import Change


def plan_manifests(plan_dir: Path) -> list[StepManifest]:
    """The undo records of a plan's steps that can be read (a damaged one is reported by
    the undo of its step)."""
    out = []
    for directory in sorted(plan_dir.glob("[0-9][0-9][0-9]")):
        with contextlib.suppress(OSError, ValueError):
            manifest = manifests.load(directory)
            if manifest is not None:
                out.append(manifest)
    return out


def restored_paths(manifests: list[StepManifest]) -> tuple[str, ...]:
    """The paths the daemon restores from its own backups for these steps (a ``new_only``
    directory: only the entries the step created in it)."""
    out: list[str] = []
    for manifest in manifests:
        for target in manifest.targets:
            if not target.new_only:
                out.append(target.path)
                continue
            top = target.path.rstrip("/") + "/"
            out.extend(top + i.path[len(top):].split("/", 1)[0] for i in target.after or []
                       if i.path.startswith(top))
    return tuple(dict.fromkeys(out))


def drops(change: Change, restored: tuple[str, ...]) -> bool:
    """Whether a rollback command's observed ``change`` is dropped: it is at or below a path
    the daemon restores, or it replaces a whole tree holding one."""
    if inside(change.path, restored):
        return True
    whole = change.kind == "delete" or (change.kind == "dir" and change.opaque)
    return whole and any(inside(path, [change.path]) for path in restored)


def dropped_words(paths: list[str]) -> str:
    """What the rollback command's result says of the changes it was not let land."""
    shown = ", ".join(printable(p) for p in paths[:10]) + (
        f" and {len(paths) - 10} more" if len(paths) > 10 else "")
    return (f"; {len(paths)} change(s) to paths Anna restores from its own backup were dropped "
            f"(each is restored once, from the backup): {shown}")


def _incomplete(manifest: StepManifest, path: str, why: str) -> UndoResult:
    return UndoResult(step_id=manifest.step_id, action="verify", target=printable(path)[:500],
                      ok=False, message=f"{printable(path)} is not as it was before the plan "
                      f"after the undo ({why}) ({ErrorCode.ROLLBACK_INCOMPLETE})")


def compare(undone: list[tuple[StepManifest, TargetSnapshot]],
            command_saved: list[tuple[StepManifest, TargetSnapshot]],
            results: list[UndoResult]) -> list[UndoResult]:
    """The comparison after an undo: each path the steps of ``undone`` changed against the
    oldest step's snapshot of it (its state before the plan), then each path only a rollback
    command changed against its state before the first command that did. A path whose
    undo already failed (a conflict the person made, a restore that failed) is not compared
    again: it is already reported."""
    failed = {r.target for r in results if not r.ok and r.target.startswith("/")}
    first: dict[str, tuple[StepManifest, TargetSnapshot]] = {}
    for manifest, target in [*sorted(undone, key=lambda pair: pair[0].index), *command_saved]:
        if not target.new_only:
            first.setdefault(target.path, (manifest, target))
    out = []
    for path, (manifest, target) in first.items():
        if printable(path)[:500] in failed or any(inside(path, [f]) for f in failed):
            continue
        if not matches_snapshot(target):
            why = "its backup says otherwise" if target.entries else "nothing was saved"
            out.append(_incomplete(manifest, path, why))
        elif (other := _attributes_differ(target)) is not None:
            out.append(_incomplete(manifest, other, "its extended attributes differ"))
    return out


def _attributes_differ(target: TargetSnapshot) -> str | None:
    """The first saved file or directory whose extended attributes are not as saved."""
    for entry in target.entries:
        if entry.xattrs is None or entry.kind not in ("file", "dir"):
            continue
        try:
            with safefs.parent_dir(entry.path) as pfd:
                name = safefs.basename(entry.path)
                fd = safefs.open_file_at(pfd, name) if entry.kind == "file" else \
                    safefs.open_dir_at(pfd, name)
        except (OSError, ValueError):
            return entry.path
        try:
            if xattrs.differs(fd, entry.xattrs):
                return entry.path
        finally:
            os.close(fd)
    return None
