"""What retention needs to know, kept as plans end: which plans still hold backups, how many
bytes each holds, which may go unasked, and the total (:mod:`annad.execution.retention`).

Deciding retention used to read every plan row with its JSON and stat every plan's backups
on each start, execute and rollback: 2 s of CPU per rollback at 100,000 plans. The table
``backup_sizes`` holds one small row per plan whose backups may exist; SQL triggers keep it
in step with the plans in the same transaction as the status change that matters:

- a plan entering a state whose backups matter (:data:`TRACKED`) gets a row marked ``stale``
  (its size is not known yet), with ``removable`` (:data:`REMOVABLE`: no rollback can use
  its backups any more) and ``finished_at`` (the status change's time) as the plan says;
- ``backup_total`` holds the sum of ``bytes``, updated by the row triggers.

Sizes are measured by the retention pass after each run (the stale rows only, so the cost
is the plan's own files); a row whose directory is gone is dropped. The table is a cache:
it decides which plans are *candidates*; before anything is removed the plan's own row is
read again (:meth:`BackupSizes.plan_state`). A plan the daemon died before measuring stays
stale and is measured by the next pass, at the latest at the next start.

Schema version 2 (:func:`seed`): a journal written before this table gets a stale row for
every plan in a tracked state, measured once by the first retention pass.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from anna_common.protocol.models import PlanStatus

if TYPE_CHECKING:
    from collections.abc import Iterator
    from contextlib import AbstractContextManager

REMOVABLE = frozenset({PlanStatus.ROLLED_BACK, PlanStatus.FAILED, PlanStatus.REFUSED,
                       PlanStatus.ROLLBACK_UNVERIFIED})
"""States whose backups no rollback can use any more."""
ROLLBACKABLE = frozenset({PlanStatus.SUCCEEDED, PlanStatus.INTERRUPTED,
                          PlanStatus.ROLLBACK_FAILED, PlanStatus.ROLLBACK_INCOMPLETE})
"""States a rollback accepts: their backups go only when the person says so."""
TRACKED = REMOVABLE | ROLLBACKABLE | {PlanStatus.RUNNING, PlanStatus.ROLLING_BACK}
"""States in which a plan may hold backups (a row in ``backup_sizes``)."""

SCHEMA_VERSION = 2
"""The journal version that added these tables (:func:`seed` brings older ones here)."""
PAGE = 256
"""Rows read per query when walking the removable plans oldest first."""


def _sql_set(states: frozenset[PlanStatus]) -> str:
    return "(" + ", ".join(f"'{s}'" for s in sorted(states)) + ")"


SCHEMA = f"""
CREATE TABLE IF NOT EXISTS backup_sizes(
    plan_id TEXT PRIMARY KEY, bytes INTEGER NOT NULL DEFAULT 0,
    removable INTEGER NOT NULL, finished_at REAL NOT NULL, stale INTEGER NOT NULL DEFAULT 1);
CREATE INDEX IF NOT EXISTS backup_sizes_expiry ON backup_sizes(removable, finished_at, plan_id);
CREATE INDEX IF NOT EXISTS backup_sizes_stale ON backup_sizes(plan_id) WHERE stale;
CREATE TABLE IF NOT EXISTS backup_total(
    one INTEGER PRIMARY KEY CHECK (one = 1), bytes INTEGER NOT NULL);
INSERT OR IGNORE INTO backup_total VALUES (1, 0);
CREATE TRIGGER IF NOT EXISTS backup_sizes_added AFTER INSERT ON backup_sizes BEGIN
    UPDATE backup_total SET bytes = bytes + NEW.bytes; END;
CREATE TRIGGER IF NOT EXISTS backup_sizes_dropped AFTER DELETE ON backup_sizes BEGIN
    UPDATE backup_total SET bytes = bytes - OLD.bytes; END;
CREATE TRIGGER IF NOT EXISTS backup_sizes_measured AFTER UPDATE OF bytes ON backup_sizes BEGIN
    UPDATE backup_total SET bytes = bytes - OLD.bytes + NEW.bytes; END;
CREATE TRIGGER IF NOT EXISTS plans_backup_state AFTER UPDATE OF status ON plans
WHEN NEW.status IN {_sql_set(TRACKED)} BEGIN
    INSERT INTO backup_sizes(plan_id, removable, finished_at)
        SELECT NEW.plan_id, NEW.status IN {_sql_set(REMOVABLE)}, NEW.updated_at WHERE 1
    ON CONFLICT(plan_id) DO UPDATE SET removable = excluded.removable,
        finished_at = excluded.finished_at, stale = 1;
END;
-- the plans a start-up recovers, by status, without reading every plan row
CREATE INDEX IF NOT EXISTS plans_status ON plans(status);
"""  # noqa: S608 - the states are this module's constants
"""Run on every open (idempotent): the tables, their triggers and the status index."""


def seed(db: sqlite3.Connection) -> None:
    """Version 2: a stale row for every plan of an older journal in a tracked state (one
    ``INSERT … SELECT``; the first retention pass measures them). Caller holds a write
    transaction."""
    db.execute("INSERT OR IGNORE INTO backup_sizes(plan_id, removable, finished_at) "  # noqa: S608
               f"SELECT plan_id, status IN {_sql_set(REMOVABLE)}, updated_at FROM plans "
               f"WHERE status IN {_sql_set(TRACKED)}")


@dataclass(frozen=True, slots=True)
class Retained:
    """A plan whose backups may exist: what retention decides on (no plan JSON)."""

    plan_id: str
    status: PlanStatus
    finished_at: float
    caller_uid: int
    bytes: int


_RETAINED = ("SELECT b.plan_id, p.status, b.finished_at, p.caller_uid, b.bytes "
             "FROM backup_sizes b JOIN plans p ON p.plan_id = b.plan_id")


def _retained(row: tuple[str, str, float, int, int]) -> Retained:
    return Retained(row[0], PlanStatus(row[1]), row[2], row[3], row[4])


class BackupSizes:
    """The retention queries and writes of :class:`annad.journal.store.Journal`."""

    _db: sqlite3.Connection
    _lock: threading.RLock

    def _tx(self, *, durable: bool = False) -> AbstractContextManager[None]:
        raise NotImplementedError  # the journal's own

    def stale_backups(self, limit: int = 1000) -> list[str]:
        """Plans whose backups' size is not measured yet (at most ``limit``)."""
        with self._lock:
            return [r[0] for r in self._db.execute(
                "SELECT plan_id FROM backup_sizes WHERE stale LIMIT ?", (limit,))]

    def set_backup_sizes(self, sizes: dict[str, int | None]) -> None:
        """Record measured sizes; None: the plan holds no backups (its row goes)."""
        with self._tx():
            for plan_id, size in sizes.items():
                if size is None:
                    self._db.execute("DELETE FROM backup_sizes WHERE plan_id=?", (plan_id,))
                else:
                    self._db.execute("UPDATE backup_sizes SET bytes=?, stale=0 WHERE plan_id=?",
                                     (size, plan_id))

    def backups_total(self) -> int:
        """Bytes all measured backups hold (one row, kept by triggers)."""
        with self._lock:
            row = self._db.execute("SELECT bytes FROM backup_total").fetchone()
        return int(row[0]) if row else 0

    def expired(self, cutoff: float) -> list[Retained]:
        """Removable plans that finished at or before ``cutoff``, oldest first (indexed:
        the cost is the plans returned, not the journal's size)."""
        with self._lock:
            return [_retained(r) for r in self._db.execute(
                _RETAINED + " WHERE b.removable = 1 AND b.finished_at <= ? "
                "ORDER BY b.finished_at, b.plan_id", (cutoff,))]

    def removable_oldest(self) -> Iterator[Retained]:
        """Every removable plan holding backups, oldest finish first, read a page at a time
        (the caller stops once under the size limit)."""
        after: tuple[float, str] = (-1.0, "")  # before any Unix time
        while True:
            with self._lock:
                page = [_retained(r) for r in self._db.execute(
                    _RETAINED + " WHERE b.removable = 1 AND (b.finished_at, b.plan_id) > (?, ?) "
                    "ORDER BY b.finished_at, b.plan_id LIMIT ?", (*after, PAGE))]
            yield from page
            if len(page) < PAGE:
                return
            after = (page[-1].finished_at, page[-1].plan_id)

    def retained(self, plan_ids: list[str] | None = None) -> list[Retained]:
        """Every plan holding backups (``annactl gc``), or the named ones, oldest first."""
        with self._lock:
            if plan_ids is None:
                rows = self._db.execute(_RETAINED + " ORDER BY b.finished_at, b.plan_id")
                return [_retained(r) for r in rows]
            found = []
            for plan_id in plan_ids:
                row = self._db.execute(_RETAINED + " WHERE b.plan_id = ?", (plan_id,)).fetchone()
                if row is not None:
                    found.append(_retained(row))
        return sorted(found, key=lambda r: (r.finished_at, r.plan_id))

    def plan_state(self, plan_id: str) -> tuple[PlanStatus, float] | None:
        """A plan's status and last change, read from its own row (not the cache)."""
        with self._lock:
            row = self._db.execute("SELECT status, updated_at FROM plans WHERE plan_id=?",
                                   (plan_id,)).fetchone()
        return None if row is None else (PlanStatus(row[0]), float(row[1]))
