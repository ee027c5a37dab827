"""Backup retention: which plans' backups ``annactl gc`` (and the daemon itself) removes.

Backups live in ``backups/<plan_id>/``. A plan that can no longer be rolled back
(``rolled_back``, ``failed`` — its undo already ran —, ``refused``) does not need them: the
automatic policy removes them once the plan finished more than ``backup_keep_days`` ago,
then, while the backups directory still holds more than ``backup_keep_max_bytes``, the
oldest remaining ones. A plan that can still be rolled back (``succeeded``, ``interrupted``,
``rollback_failed``, ``rollback_incomplete``) is never touched automatically: its backups
are the only way back, so only the person removes them (``include_rollbackable``), and its
rollback then answers ``PLAN_STATE`` saying so. Plans running, rolling back or never run are
never touched. Each removal is journalled (``backups_removed``) *before* the files go, so
the audit chain says what was removed even if the daemon dies half-way; the plan rows stay
(history keeps them). Age is the plan's ``updated_at``: the time its last status change (its
finish) was journalled.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from anna_common.protocol.models import GcRemoved, GcRequest, GcResponse, PlanStatus
from annad.journal.damage import JournalDamaged

if TYPE_CHECKING:
    from collections.abc import Iterable

    from annad.execution.runs import RunManager
    from annad.journal.rows import PlanRow
    from annad.journal.store import Journal

log = logging.getLogger(__name__)

REMOVED_KIND = "backups_removed"
"""The journal event that records a removal (and makes a later rollback refuse)."""
REMOVABLE = frozenset({PlanStatus.ROLLED_BACK, PlanStatus.FAILED, PlanStatus.REFUSED,
                       PlanStatus.ROLLBACK_UNVERIFIED})
"""States whose backups no rollback can use any more."""
ROLLBACKABLE = frozenset({PlanStatus.SUCCEEDED, PlanStatus.INTERRUPTED,
                          PlanStatus.ROLLBACK_FAILED, PlanStatus.ROLLBACK_INCOMPLETE})
"""States a rollback accepts: their backups go only when the person says so."""
DAY_S = 86_400.0
ALL_PLANS = 1_000_000
"""``list_plans`` limit that means every plan."""
_PLAN_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]{0,127}")


@dataclass(frozen=True, slots=True)
class Policy:
    """The limits of the automatic policy."""

    keep_days: float
    max_bytes: int


def tree_bytes(directory: Path) -> int:
    """Bytes of the regular files under ``directory`` (symlinks not followed; 0 if absent)."""
    total = 0
    for root, _dirs, files in os.walk(directory):
        for name in files:
            try:
                info = (Path(root) / name).lstat()
            except OSError:
                continue
            total += info.st_size
    return total


class Retention:
    """Decides and performs backup removals for one daemon."""

    def __init__(self, *, journal: Journal, backups: Path, policy: Policy) -> None:
        self.journal = journal
        self.backups = backups
        self.policy = policy

    def plan_dir(self, plan_id: str) -> Path | None:
        """``backups/<plan_id>`` when the id is a plain name and the directory exists."""
        if not _PLAN_ID.fullmatch(plan_id):
            return None
        path = self.backups / plan_id
        return path if path.is_dir() and not path.is_symlink() else None

    def candidates(self, rows: Iterable[PlanRow], *, include_rollbackable: bool
                   ) -> list[tuple[PlanRow, Path, int]]:
        """Plans whose backups may go, with their directory and size, oldest finish first."""
        allowed = REMOVABLE | (ROLLBACKABLE if include_rollbackable else frozenset())
        found = []
        for row in rows:
            if row.status not in allowed:
                continue
            path = self.plan_dir(row.plan_id)
            if path is not None:
                found.append((row, path, tree_bytes(path)))
        return sorted(found, key=lambda c: (c[0].updated_at, c[0].plan_id))

    def select(self, rows: Iterable[PlanRow], *, include_rollbackable: bool, now: float
               ) -> list[GcRemoved]:
        """What the policy removes: older than ``keep_days``, then oldest first while the
        backups directory holds more than ``max_bytes``."""
        found = self.candidates(rows, include_rollbackable=include_rollbackable)
        cutoff = now - self.policy.keep_days * DAY_S
        chosen = [_removed(row, size, "age") for row, _, size in found
                  if row.updated_at <= cutoff]
        over = tree_bytes(self.backups) - sum(c.bytes for c in chosen) - self.policy.max_bytes
        taken = {c.plan_id for c in chosen}
        for row, _, size in found:
            if over <= 0:
                break
            if row.plan_id not in taken:
                chosen.append(_removed(row, size, "size"))
                over -= size
        return chosen

    def named(self, rows: Iterable[PlanRow], *, include_rollbackable: bool
              ) -> list[GcRemoved]:
        """The named plans whose backups may go (rollbackable ones only when asked)."""
        found = self.candidates(rows, include_rollbackable=include_rollbackable)
        return [_removed(row, size, "asked") for row, _, size in found]

    def remove(self, chosen: list[GcRemoved], *, by_uid: int) -> None:
        """Journal, then delete, each plan's backups (a failure stops before the next)."""
        for item in chosen:
            path = self.plan_dir(item.plan_id)
            if path is None:
                continue
            self.journal.event(REMOVED_KIND, item.plan_id, bytes=item.bytes, reason=item.reason,
                               status=str(item.status), by_uid=by_uid)
            shutil.rmtree(path)


def collect(retention: Retention, runs: RunManager, rows: list[PlanRow], request: GcRequest,
            *, by_uid: int, now: float) -> GcResponse:
    """One gc pass over ``rows`` (the caller's plans, or the named ones), with no run
    starting meanwhile: the plan running now is never a candidate, and a rollback that
    would start after a removal sees the journalled removal and refuses."""
    with runs.paused() as running:
        rows = [r for r in rows if r.plan_id != running]
        include = request.include_rollbackable
        if request.plan_ids:
            chosen = retention.named(rows, include_rollbackable=include)
        else:
            chosen = retention.select(rows, include_rollbackable=include, now=now)
        taken = {c.plan_id for c in chosen}
        kept = [row.plan_id for row in rows if row.status in ROLLBACKABLE
                and row.plan_id not in taken and retention.plan_dir(row.plan_id)]
        if not request.dry_run:
            retention.remove(chosen, by_uid=by_uid)
    return GcResponse(dry_run=request.dry_run, removed=chosen,
                      bytes_freed=sum(c.bytes for c in chosen), kept_rollbackable=kept)


def auto(retention: Retention, runs: RunManager) -> None:
    """The automatic policy over every plan (at start-up and after each run)."""
    try:
        done = collect(retention, runs, retention.journal.list_plans(limit=ALL_PLANS),
                       GcRequest(), by_uid=os.geteuid(), now=time.time())
    except JournalDamaged:  # not for a retry: the daemon's start says it in one line
        raise
    except Exception:  # a full disk or a vanished file: the next pass tries again
        log.exception("backup retention failed")
        return
    if done.removed:
        log.info("retention removed the backups of %d plan(s), %d bytes",
                 len(done.removed), done.bytes_freed)


def gone(journal: Journal, plan_id: str) -> str | None:
    """Why the plan cannot be rolled back any more (gc removed its backups), or None."""
    when = journal.last_event(plan_id, REMOVED_KIND)
    if when is None:
        return None
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when))
    return f"its backups were removed by gc at {stamp}"


def _removed(row: PlanRow, size: int, reason: str) -> GcRemoved:
    return GcRemoved(plan_id=row.plan_id, status=row.status, bytes=size, reason=reason,
                     finished_at=row.updated_at)
