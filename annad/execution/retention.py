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

The decision reads no plan rows and walks no directories but the ended plan's own: sizes,
states and the total are kept as plans end (:mod:`annad.journal.retained`), and the plans
expired by age or over the size limit come from an index, oldest first. So a rollback costs
the same at 100 plans as at 100,000 (``bench/journal.py --daemon``, docs/performance.md).
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

from anna_common.protocol.models import GcRemoved, GcRequest, GcResponse
from annad.journal.damage import JournalDamaged
from annad.journal.retained import REMOVABLE, ROLLBACKABLE, Retained

if TYPE_CHECKING:
    from collections.abc import Iterable

    from annad.execution.runs import RunManager
    from annad.journal.store import Journal

__all__ = ["REMOVABLE", "ROLLBACKABLE", "Policy", "Retention", "auto", "collect", "gone"]

log = logging.getLogger(__name__)

REMOVED_KIND = "backups_removed"
"""The journal event that records a removal (and makes a later rollback refuse)."""
DAY_S = 86_400.0
MEASURE_BATCH = 1000
"""Stale sizes measured per journal transaction."""
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

    def measure(self, *, running: str | None = None) -> int:
        """Measure the plans whose size is not known yet (those that ended since the last
        pass, or that a dead daemon left): their own directories only. The plan running
        now is left for the pass after it. Returns how many were measured."""
        done = 0
        while True:
            fetched = self.journal.stale_backups(MEASURE_BATCH)
            stale = [p for p in fetched if p != running]
            if not stale:
                return done
            sizes: dict[str, int | None] = {}
            for plan_id in stale:
                path = self.plan_dir(plan_id)
                sizes[plan_id] = None if path is None else tree_bytes(path)
            self.journal.set_backup_sizes(sizes)
            done += len(stale)
            if len(fetched) < MEASURE_BATCH:
                return done

    def select(self, *, include_rollbackable: bool, now: float, uid: int | None = None
               ) -> list[GcRemoved]:
        """What the policy removes of caller ``uid``'s plans (None: everyone's): older than
        ``keep_days``, then oldest first while the backups hold more than ``max_bytes``.
        Rollbackable plans only when asked (every plan holding backups is then read: the
        person's ``annactl gc``, not a run's end)."""
        cutoff = now - self.policy.keep_days * DAY_S
        allowed = REMOVABLE | (ROLLBACKABLE if include_rollbackable else frozenset())
        if include_rollbackable:
            everything = [r for r in self.journal.retained() if r.status in allowed]
            oldest: Iterable[Retained] = everything
            by_age = [r for r in everything if r.finished_at <= cutoff]
        else:  # the table's flag picks them by index; the plan's own status decides
            oldest = (r for r in self.journal.removable_oldest() if r.status in allowed)
            by_age = [r for r in self.journal.expired(cutoff) if r.status in allowed]
        chosen = [_removed(r, "age") for r in by_age if uid in (None, r.caller_uid)]
        over = self.journal.backups_total() - sum(c.bytes for c in chosen) - self.policy.max_bytes
        taken = {c.plan_id for c in chosen}
        for row in oldest:
            if over <= 0:
                break
            if row.plan_id not in taken and uid in (None, row.caller_uid):
                chosen.append(_removed(row, "size"))
                over -= row.bytes
        return chosen

    def named(self, plan_ids: list[str], *, include_rollbackable: bool) -> list[GcRemoved]:
        """The named plans whose backups may go (rollbackable ones only when asked)."""
        allowed = REMOVABLE | (ROLLBACKABLE if include_rollbackable else frozenset())
        return [_removed(r, "asked") for r in self.journal.retained(plan_ids)
                if r.status in allowed]

    def remove(self, chosen: list[GcRemoved], *, by_uid: int) -> None:
        """Journal, then delete, each plan's backups (a failure stops before the next).

        The candidates came from the size table, a cache: each plan's own row is read
        again first, and a plan that is no longer in the state it was chosen in is kept."""
        for item in chosen:
            state = self.journal.plan_state(item.plan_id)
            path = self.plan_dir(item.plan_id)
            if path is None:  # gone already: nothing to remove, nothing to count
                self.journal.set_backup_sizes({item.plan_id: None})
                continue
            if state is None or state[0] is not item.status:
                continue
            self.journal.event(REMOVED_KIND, item.plan_id, bytes=item.bytes, reason=item.reason,
                               status=str(item.status), by_uid=by_uid)
            shutil.rmtree(path)
            self.journal.set_backup_sizes({item.plan_id: None})


def collect(retention: Retention, runs: RunManager, request: GcRequest, *, by_uid: int,
            now: float, uid: int | None = None, report_kept: bool = True) -> GcResponse:
    """One gc pass over the plans of caller ``uid`` (None: everyone's), or the named ones
    (already checked as the caller's), with no run starting meanwhile: the plan running now
    is never a candidate, and a rollback that would start after a removal sees the
    journalled removal and refuses. ``report_kept``: list the rollbackable plans kept (the
    person's gc; the automatic pass does not read them)."""
    with runs.paused() as running:
        retention.measure(running=running)
        include = request.include_rollbackable
        named = list(dict.fromkeys(request.plan_ids)) if request.plan_ids else None
        if named:
            chosen = retention.named(named, include_rollbackable=include)
        else:
            chosen = retention.select(include_rollbackable=include, now=now, uid=uid)
        chosen = [c for c in chosen if c.plan_id != running]
        taken = {c.plan_id for c in chosen}
        kept = [r.plan_id for r in retention.journal.retained(named)
                if r.status in ROLLBACKABLE and r.plan_id not in taken
                and r.plan_id != running and uid in (None, r.caller_uid)] if report_kept else []
        if not request.dry_run:
            retention.remove(chosen, by_uid=by_uid)
    return GcResponse(dry_run=request.dry_run, removed=chosen,
                      bytes_freed=sum(c.bytes for c in chosen), kept_rollbackable=kept)


def auto(retention: Retention, runs: RunManager) -> None:
    """The automatic policy (at start-up and after each run): the ended plans' sizes, then
    the index of what has expired; no plan rows read."""
    try:
        done = collect(retention, runs, GcRequest(), by_uid=os.geteuid(), now=time.time(),
                       report_kept=False)
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


def _removed(row: Retained, reason: str) -> GcRemoved:
    return GcRemoved(plan_id=row.plan_id, status=row.status, bytes=row.bytes, reason=reason,
                     finished_at=row.finished_at)
