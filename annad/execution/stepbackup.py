"""A step's undo record: its backups and pre-state, taken before it runs, completed after.

"Save before you change": before a mutating step runs, every file it will write (parsed from
the command, :mod:`annad.backups.targets`) is snapshot and the package and unit state it can invert
is recorded, in a manifest flushed to disk before the step is spawned, so undo works from
the manifests alone, after a crash too. After the step succeeded, what it left is recorded
as well, so undo leaves alone what someone changed since. Before a plan starts, the room
its backups need is checked against the state disk (:func:`room_refusal`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from annad.backups import manifest as manifests
from annad.backups import statefs
from annad.backups.backup import BackupRefused, BlobStore, Budget, snapshot, snapshot_listing
from annad.backups.identity import HashBudget
from annad.backups.identity import record as record_identity
from annad.backups.manifest import StepManifest, printable
from annad.backups.targets import snapshot_targets
from annad.backups.undofiles import after_tree, record_new_entries
from annad.execution.prestate import (
    package_states,
    query_packages,
    reloads,
    unit_states,
    untyped_live,
    values,
)
from annad.execution.undo_actions import identity_of

if TYPE_CHECKING:
    from annad.execution.undo import Runner
    from annad.stepspec import Limits, StepSpec, Who

log = logging.getLogger(__name__)


def step_dir(backups: Path, plan_id: str, index: int) -> Path:
    """Where a step's manifest lives."""
    return backups / plan_id / f"{index:03d}"


def room_refusal(steps: list[StepSpec], who: Who, *, backups: Path, limits: Limits
                 ) -> str | None:
    """Why the backups of this plan cannot fit on the state disk, or None.

    Checked before anything runs, with the files as they are now (a step that grows
    a file is checked again when its own backup is taken, see ``BlobStore.put``)."""
    size, files = 0, 0
    for step in steps:
        user = step.scope == "user"
        try:
            targets, _ = snapshot_targets(step.command, home=who.home,
                                          cwd=who.home if user else "/")
        except Exception:  # the step's own backup (in prepare) will say why
            log.debug("no targets known for step %s before the run", step.step_id)
            continue
        for target in targets:
            more_size, more_files = _existing_size(target.path, tree=target.tree,
                                                   limit=limits.backup_max_files)
            size, files = size + more_size, files + more_files
    problem = statefs.room_problem(backups, size, files)
    return None if problem is None else f"cannot back up this plan's targets: {problem}"


def prepare(plan_id: str, step: StepSpec, who: Who, *, backups: Path, limits: Limits,
            runner: Runner, predict: bool = True) -> StepManifest:
    """Snapshot the step's write targets and record pre-state; flush the manifest.

    ``predict`` False: the step runs captured, its backups are taken from what it really
    changed (:mod:`annad.capture.step`); only the empty record is returned here."""
    user = step.scope == "user"
    record = StepManifest(
        plan_id=plan_id, index=step.index, step_id=step.step_id,
        scope="user" if user else "system", uid=who.uid, gid=who.gid,
        groups=list(who.groups), user=who.user, home=who.home, session=who.session,
        rollback_command=step.rollback_command,
        rollback_scope="user" if step.rollback_scope == "user" else "system",
        rollback_tier=step.rollback_tier,
        uncaptured=step.uncaptured and predict)
    if not predict:
        return record
    targets, notes = snapshot_targets(step.command, home=who.home,
                                      cwd=who.home if user else "/")
    if step.uncaptured:
        notes.append("Anna cannot back up what this step writes (code it runs writes "
                     "files Anna cannot see)")
    record.notes = notes
    blobs = BlobStore(backups / plan_id / "blobs")
    budget = Budget(limits.backup_max_bytes, limits.backup_max_files)
    try:
        for target in targets:
            if target.new_only:
                record.targets.append(snapshot_listing(target.path, budget))
                continue
            record.targets.extend(snapshot(target.path, blobs, budget, tree=target.tree,
                                           follow=target.follow))
    except OSError as exc:  # a name the kernel refuses, a vanished directory...
        raise BackupRefused("cannot back up what this step writes: "
                            + printable(str(exc))) from None
    blobs.flush()
    record.packages = package_states(step.command, runner)
    record.units = unit_states(step.command, runner, identity=identity_of(record),
                               env=who.session)
    record.values = values(step.command, runner, identity=identity_of(record), env=who.session)
    record.unchecked = untyped_live(step.command)
    record.reloads = reloads(step.command)  # type: ignore[assignment]
    directory = step_dir(backups, plan_id, step.index)
    if record.targets or record.packages or record.units or record.rollback_command or \
            record.notes or record.unchecked or record.values or record.reloads:
        manifests.save(directory, record)  # flushed to disk before the step runs
    return record


def record_after(plan_id: str, index: int, record: StepManifest, *, backups: Path,
                 limits: Limits, runner: Runner) -> None:
    """After success: what the step left at each target (undo leaves what someone
    changed since) and what the package database holds now (undo removes only the new)."""
    if not record.packages and not record.targets:
        return
    budget = HashBudget(limits.backup_max_bytes, limits.backup_max_files)
    for target in record.targets:
        if target.new_only:
            record_new_entries(target, budget)
        else:
            target.after = record_identity(target.path, tree=after_tree(target),
                                           budget=budget)
    for state in record.packages:
        try:
            state.after = query_packages(runner, state.options)
        except BackupRefused:
            log.warning("cannot record package state after step %d of %s", index, plan_id)
    # package state after the step decides what undo removes: flushed like the snapshot
    manifests.save(step_dir(backups, plan_id, index), record, durable=bool(record.packages))


def _existing_size(path: str, *, tree: bool, limit: int) -> tuple[int, int]:
    """Bytes and files a backup of ``path`` would copy now (symlinks not followed below
    the top; at most ``limit`` files counted: a bigger tree is refused by the budget)."""
    try:
        info = Path(path).stat()
    except OSError:
        return 0, 0
    if stat.S_ISREG(info.st_mode):
        return info.st_size, 1
    if not (tree and stat.S_ISDIR(info.st_mode)):
        return 0, 1
    size, files = 0, 1
    for top, _dirs, names in os.walk(path):
        for name in names:
            with contextlib.suppress(OSError):
                child = (Path(top) / name).lstat()
                if stat.S_ISREG(child.st_mode):
                    size += child.st_size
            files += 1
            if files > limit:
                return size, files
    return size, files
