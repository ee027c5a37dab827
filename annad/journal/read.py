"""The journal's reads: plan, step, undo and event queries, and the check of one plan's rows
against the hash-chained event log (the whole journal's: :mod:`annad.journal.audit`).

:class:`JournalReads` is the read half of :class:`annad.journal.store.Journal` (which owns the
connection, the schema, and every write with its full-disk handling). Nothing here writes:
a read needs no room on the state disk, so an audit or a ``history`` still answers on a full
disk. :meth:`JournalReads.check_plan` is what binds execute and rollback to the plan the
daemon computed at submit: a row or chain edited since refuses with ``AUDIT_CHAIN_BROKEN``.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode
from anna_common.protocol.models import PlanStatus, StepStatus
from annad.journal import compact, integrity
from annad.journal.integrity import MIGRATED_KIND
from annad.journal.rows import PlanRow, StepRow, SummaryRow, UndoRow

if TYPE_CHECKING:
    from collections.abc import Iterator

_EVENT_COLUMNS = "id, ts, plan_id, kind, step_id, body, prev_hash, hash"


class JournalReads:
    """The queries of the journal; :class:`annad.journal.store.Journal` sets the connection and
    the lock every use goes through."""

    _db: sqlite3.Connection
    _lock: threading.RLock

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """One read transaction: the rows read inside it are one consistent state, even
        while another process writes the file (WAL readers see a fixed snapshot)."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield
            finally:
                self._db.execute("COMMIT")

    def check_plan(self, plan_id: str) -> PlanRow:
        """The plan row, checked against the chain from its seal on; raises
        ``AUDIT_CHAIN_BROKEN`` when the row or the chain after its seal was altered.

        Execute and rollback act on the stored annotation and status: this is what binds
        them to what the daemon computed at submit.
        """
        with self._snapshot():
            plan = self.get_plan(plan_id)
            own = self._db.execute(f"SELECT {_EVENT_COLUMNS} FROM events "  # noqa: S608
                                   "WHERE plan_id=? ORDER BY id", (plan_id,)).fetchall()
            migrated = self._db.execute(f"SELECT {_EVENT_COLUMNS} FROM events "  # noqa: S608
                                        "WHERE kind=? ORDER BY id LIMIT 1",
                                        (MIGRATED_KIND,)).fetchone()
            # the plan's own rows (and the journal_migrated row that may hold its seal), each
            # with its neighbours' links: O(the plan's events), whatever the journal's size
            rows = sorted({*own, *([migrated] if migrated else [])})
            last = self._db.execute("SELECT MAX(id) FROM events").fetchone()[0] or 0
            links = {r[0]: self._links(r[0]) for r in rows}
        if plan is None:
            raise AnnaError(f"no plan {plan_id!r}", code=ErrorCode.PLAN_NOT_FOUND)
        legacy_until = migrated[0] if migrated else 0
        problem = integrity.own_rows_problem(plan, rows, links, last=last,
                                             legacy_until=legacy_until)
        if problem is not None:
            raise AnnaError(f"the stored plan does not match the journal's chain ({problem}); "
                            "the journal was altered and nothing was run",
                            code=ErrorCode.AUDIT_CHAIN_BROKEN)
        return plan

    def _links(self, row_id: int) -> tuple[str | None, str | None]:
        """(hash of row ``row_id - 1``, prev_hash of row ``row_id + 1``), None where absent
        (caller holds the lock)."""
        before = self._db.execute("SELECT hash FROM events WHERE id=?", (row_id - 1,)).fetchone()
        after = self._db.execute("SELECT prev_hash FROM events WHERE id=?",
                                 (row_id + 1,)).fetchone()
        return (before[0] if before else None), (after[0] if after else None)

    def get_plan(self, plan_id: str) -> PlanRow | None:
        """A plan by id, or None."""
        with self._lock:
            row = self._db.execute(f"SELECT {PLAN_COLUMNS} FROM plans WHERE plan_id=?",  # noqa: S608
                                   (plan_id,)).fetchone()
        return None if row is None else plan_row(row)

    def _plans_unlocked(self) -> list[PlanRow]:
        """Every plan row (caller holds the lock)."""
        return [plan_row(r) for r in self._db.execute(
            f"SELECT {PLAN_COLUMNS} FROM plans ORDER BY created_at")]  # noqa: S608

    def last_event(self, plan_id: str, kind: str) -> float | None:
        """When the newest event of this kind for this plan was recorded, or None."""
        with self._lock:
            row = self._db.execute("SELECT MAX(ts) FROM events WHERE plan_id=? AND kind=?",
                                   (plan_id, kind)).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def events_of(self, plan_id: str | None, prefix: str) -> list[tuple[str, str, str | None,
                                                                       dict[str, Any]]]:
        """(plan id, kind, step id, body) of the events whose kind starts with ``prefix``, of
        one plan (or of every plan for None), oldest first (verification, guard, snapshots)."""
        query = "SELECT plan_id, kind, step_id, body FROM events WHERE kind LIKE ? ESCAPE '!'"
        args: list[Any] = [prefix.replace("!", "!!").replace("_", "!_").replace("%", "!%") + "%"]
        if plan_id is not None:
            query += " AND plan_id=?"
            args.append(plan_id)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY id", args).fetchall()
        return [(r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    def last_body(self, plan_id: str, kind: str) -> dict[str, Any] | None:
        """The body of the newest event of this kind for this plan (previews), or None."""
        with self._lock:
            row = self._db.execute("SELECT body FROM events WHERE plan_id=? AND kind=? "
                                   "ORDER BY id DESC LIMIT 1", (plan_id, kind)).fetchone()
        body = None if row is None else json.loads(row[0])
        return body if isinstance(body, dict) else None

    def unfinished(self) -> list[str]:
        """Plans marked running or rolling back (after a failed :meth:`recover`)."""
        with self._lock:
            return [r[0] for r in self._db.execute(
                "SELECT plan_id FROM plans WHERE status IN (?, ?)",
                (str(PlanStatus.RUNNING), str(PlanStatus.ROLLING_BACK)))]

    def plans_in(self, status: PlanStatus, limit: int = 200) -> list[str]:
        """Ids of the newest ``limit`` plans in ``status`` (by the status index: no plan
        JSON read, whatever the journal's size)."""
        with self._lock:
            return [r[0] for r in self._db.execute(
                "SELECT plan_id FROM plans WHERE status=? ORDER BY created_at DESC LIMIT ?",
                (str(status), limit))]

    def list_plans(self, limit: int | None = 200, *, before: str | None = None,
                   uid: int | None = None) -> list[PlanRow]:
        """Newest first: at most ``limit`` (None: all) plans older than plan ``before``,
        only caller ``uid``'s when given. One indexed query, so a page costs the same at
        ten plans or ten thousand."""
        sql, args = _page_query(PLAN_COLUMNS, limit, before, uid)
        with self._lock:
            return [plan_row(r) for r in self._db.execute(sql, args)]

    def list_summaries(self, limit: int | None = 200, *, before: str | None = None,
                       uid: int | None = None) -> list[SummaryRow]:
        """:meth:`list_plans`'s page as what a list shows: the plan's columns and the
        annotation's title, risk and step count, read by SQLite's JSON functions (no plan
        JSON reaches Python: ~0.3 µs a plan instead of ~50 for a parsed annotation)."""
        sql, args = _page_query(SUMMARY_COLUMNS, limit, before, uid)
        with self._lock:
            return [SummaryRow(*r) for r in self._db.execute(sql, args)]

    def resolve_id(self, text: str) -> list[str]:
        """Plan ids equal to ``text`` or ending with it (a short id as ``history`` shows it);
        at most two, which is enough to tell unique from ambiguous."""
        with self._lock:
            exact = self._db.execute("SELECT plan_id FROM plans WHERE plan_id=?",
                                     (text,)).fetchone()
            if exact is not None:
                return [exact[0]]
            # the suffix is matched literally: LIKE's wildcards in it are escaped
            pattern = "%" + re.sub(r"([%_\\])", r"\\\1", text)
            return [r[0] for r in self._db.execute(
                "SELECT plan_id FROM plans WHERE plan_id LIKE ? ESCAPE '\\' LIMIT 2",
                (pattern,))]

    def steps(self, plan_id: str) -> list[StepRow]:
        """A plan's steps in order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT idx, step_id, status, exit_code, output, started_at, finished_at "
                "FROM steps WHERE plan_id=? ORDER BY idx", (plan_id,)).fetchall()
        return [StepRow(r[0], r[1], StepStatus(r[2]), *r[3:]) for r in rows]

    def undo_results(self, plan_id: str) -> list[UndoRow]:
        """A plan's undo outcomes in the order they happened."""
        with self._lock:
            rows = self._db.execute(
                "SELECT step_id, action, target, ok, message FROM undo WHERE plan_id=? "
                "ORDER BY seq", (plan_id,)).fetchall()
        return [UndoRow(r[0], r[1], r[2], bool(r[3]), r[4]) for r in rows]


def _page_query(columns: str, limit: int | None, before: str | None, uid: int | None
                ) -> tuple[str, list[Any]]:
    """A page of plans, newest first (the ``plans_newest`` index), as SQL and arguments."""
    where: list[str] = []
    args: list[Any] = []
    if uid is not None:
        where.append("caller_uid=?")
        args.append(uid)
    if before is not None:
        where.append("(created_at, plan_id) < (SELECT created_at, plan_id FROM plans "
                     "WHERE plan_id=?)")
        args.append(before)
    sql = (f"SELECT {columns} FROM plans"  # noqa: S608 - fixed text, values bound
           + (" WHERE " + " AND ".join(where) if where else "")
           + " ORDER BY created_at DESC, plan_id DESC LIMIT ?")
    args.append(-1 if limit is None else limit)
    return sql, args


SUMMARY_COLUMNS = ("plan_id, status, created_at, updated_at, caller_uid, "
                   "CASE WHEN json_valid(annotated_json) THEN json_array("
                   "json_extract(annotated_json, '$.plan.goals[0]'), "
                   "json_extract(annotated_json, '$.plan.notes_for_user'), "
                   "json_extract(annotated_json, '$.final_risk'), "
                   "json_array_length(annotated_json, '$.steps')) END")
"""A list entry's columns; the last is ``[first goal, notes, final risk, steps]`` as JSON,
or NULL for an annotation that is not JSON at all."""

PLAN_COLUMNS = ("plan_id, digest, status, created_at, updated_at, caller_uid, source, "
                 "request, home, plan_json, annotated_json, error_json")


def plan_row(row: tuple[Any, ...]) -> PlanRow:
    return PlanRow(plan_id=row[0], digest=row[1], status=PlanStatus(row[2]),
                   created_at=row[3], updated_at=row[4], caller_uid=row[5], source=row[6],
                   request=row[7], home=row[8], plan_json=compact.loaded(row[9], row[10]),
                   annotated_json=row[10],
                   error=json.loads(row[11]) if row[11] else None)

