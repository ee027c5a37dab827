"""Undoing a plan's steps from their manifests, every result journalled, and the comparison
at the end of the undo (:mod:`annad.execution.undoonce`).

Before anything is touched, every saved file's backup is checked (a rollback never starts on
backups it cannot finish with); then each step is undone newest first
(:func:`annad.execution.undo.undo_step`) with one :class:`~annad.execution.undo.UndoEnv`,
so what an earlier step's undo restored is known to be Anna's own doing.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING

from anna_common.protocol.models import ExecEvent, ExecEventType, StepStatus, UndoResult
from annad.backups import manifest as manifests
from annad.execution import backuprecord
from annad.execution.undo import missing_backups, undo_step
from annad.execution.undoonce import compare
from annad.journal.records import annotated_of, step_specs
from annad.journal.rows import UndoRow

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from annad.execution.undo import UndoEnv
    from annad.journal.store import Journal
    from annad.stepspec import StepSpec


def plan_steps(journal: Journal, plan_id: str) -> list[StepSpec]:
    """The plan's steps as the daemon assessed them (none when its record cannot be read)."""
    row = journal.get_plan(plan_id)
    if row is None:
        return []
    with contextlib.suppress(Exception):
        return step_specs(annotated_of(row))
    return []


def _event(kind: ExecEventType, plan_id: str, step_id: str | None = None,
           index: int | None = None, **fields: object) -> ExecEvent:
    return ExecEvent(type=kind, plan_id=plan_id, step_id=step_id, index=index, ts=time.time(),
                     **fields)


def _journal(journal: Journal, plan_id: str, results: list[UndoResult]) -> None:
    for result in results:
        journal.add_undo(plan_id, UndoRow(result.step_id, result.action, result.target,
                                          result.ok, result.message))


def undo_steps(journal: Journal, plan_dir: Path, indexes: list[int],
               emit: Callable[[ExecEvent], None], env: UndoEnv) -> list[UndoResult]:
    """Undo the steps ``indexes`` of the plan whose backups are in ``plan_dir``, in the order
    given; every result is journalled and each step's state set."""
    plan_id = plan_dir.name
    missing = backup_problems(journal, plan_dir, indexes, emit, env)
    if missing:
        return missing
    results: list[UndoResult] = []
    for index in indexes:
        try:
            record = manifests.load(plan_dir / f"{index:03d}")
        except (OSError, ValueError) as exc:
            results.append(UndoResult(step_id=f"#{index + 1}", action="restore", ok=False,
                                      message=f"cannot read the undo record: {exc}"))
            continue
        if record is None:
            continue  # the step never got as far as its snapshot: nothing ran
        emit(_event(ExecEventType.UNDO_STARTED, plan_id, record.step_id, index + 1,
                    message=f"undoing {record.step_id}"))
        step_results = undo_step(record, env)
        _journal(journal, plan_id, step_results)
        ok = all(r.ok for r in step_results)
        journal.set_step_status(plan_id, index,
                                StepStatus.UNDONE if ok else StepStatus.UNDO_FAILED)
        emit(_event(ExecEventType.UNDO_FINISHED, plan_id, record.step_id, index + 1,
                    status=str(StepStatus.UNDONE if ok else StepStatus.UNDO_FAILED),
                    message="; ".join(f"{r.action} {r.target}: {r.message}"
                                      for r in step_results)[:4000]))
        results.extend(step_results)
    return results


def backup_problems(journal: Journal, plan_dir: Path, indexes: list[int],
                    emit: Callable[[ExecEvent], None], env: UndoEnv) -> list[UndoResult]:
    """Every saved path of these steps whose backup or undo record is missing or damaged
    (against the journal's record of them, then each blob), journalled and reported; checked
    for all the steps of an undo before any is touched: none is undone then."""
    missing = _against_journal(journal, plan_dir, indexes)
    missing += missing_backups([plan_dir / f"{i:03d}" for i in indexes], env.blobs)
    if missing:
        _journal(journal, plan_dir.name, missing)
        emit(_event(ExecEventType.UNDO_FINISHED, plan_dir.name, message="; ".join(
            r.message for r in missing)[:4000], status=str(StepStatus.UNDO_FAILED)))
    return missing


def _against_journal(journal: Journal, plan_dir: Path, indexes: list[int]
                     ) -> list[UndoResult]:
    """Each step's undo record against the journal's record of its backups
    (:mod:`annad.execution.backuprecord`), before anything is touched."""
    records = backuprecord.recorded(journal, plan_dir.name)
    out: list[UndoResult] = []
    for index in indexes:
        if index not in records:
            continue  # nothing was saved for it (or a plan older than the record)
        step_id, record = records[index]
        manifest, unreadable = None, None
        try:
            manifest = manifests.load(plan_dir / f"{index:03d}")
        except (OSError, ValueError) as exc:
            unreadable = str(exc)[:300]
        out.extend(backuprecord.problems(step_id, record, manifest, unreadable))
    return out


def compared(journal: Journal, plan_id: str, env: UndoEnv, results: list[UndoResult]
             ) -> list[UndoResult]:
    """The comparison at the end of an undo (:func:`annad.execution.undoonce.compare`):
    every path the plan or the undo touched against its pre-plan state; a difference is
    journalled and its step marked ``undo_failed``."""
    found = compare(env.undone, env.command_saved, results)
    _journal(journal, plan_id, found)
    index = {m.step_id: m.index for m, _ in [*env.undone, *env.command_saved]}
    for step_id in dict.fromkeys(r.step_id for r in found):
        if step_id in index:
            journal.set_step_status(plan_id, index[step_id], StepStatus.UNDO_FAILED)
    return found
