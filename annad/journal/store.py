"""The journal: plans, steps, undo results and a hash-chained event log, in SQLite (WAL).

This module owns the connection, the schema and its migration, and every write (with the
full-disk handling below); the queries and the chain checks are in :mod:`annad.journal.read`.

Every state change of a plan is written here *before* the daemon acts on it and
again after, so a daemon killed at any point finds out on restart what was under
way (a plan left ``running`` becomes ``interrupted``). A commit that precedes an
action (a plan or a rollback starting, a step starting) is flushed to disk first
(``synchronous=FULL``); records of what already happened use ``NORMAL``: the WAL
keeps them across a daemon crash, and should a power cut lose one, the plan merely
looks interrupted, which is the safe reading.

Event rows form a hash chain: each row stores ``sha256(prev_hash + canonical
row)``, so an edited or deleted row breaks verification from that row on
(:meth:`Journal.verify`). The plan rows are state the daemon acts on; each is sealed
in its chained ``plan_submitted`` event and every status change is chained, so an
edited plan, annotation, request or status shows as a broken chain too
(:mod:`annad.journal.integrity`), and execute and rollback refuse such a plan
(:meth:`Journal.check_plan`).

A full state disk (:mod:`annad.backups.statefs`): writes that record what already happened
(a plan's status, a step's outcome, an undo result, start-up recovery) may use the
journal reserve: on SQLITE_FULL the reserve file is deleted and the write retried
once. Writes that start something new (a submit, a checks record) are refused with
``BACKUP_REFUSED`` while the reserve cannot be kept, so they never eat the room an
outcome needs.

Schema versions (``PRAGMA user_version``): 0 had no seals and hashed NFC-normalised
text; opening such a file seals its plans as they are in one chained
``journal_migrated`` event (version 1); version 2 seeds what retention decides on
(:mod:`annad.journal.retained`), in the transaction that sets the version; from version 3
an answer's row may leave ``plan_json`` empty (:mod:`annad.journal.compact`). A newer
version is a clear error.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import canonical_json
from anna_common.protocol.models import AuditReport, PlanStatus, StepStatus
from annad.backups.statefs import JOURNAL_FLOOR, Reserve, free_bytes, is_full
from annad.journal import audit, compact, integrity, retained
from annad.journal.damage import Connection, JournalDamaged, damaged
from annad.journal.fullwrites import StateFull
from annad.journal.fullwrites import recording as _recording
from annad.journal.fullwrites import starting as _starting
from annad.journal.integrity import GENESIS, MIGRATED_KIND, seal_of
from annad.journal.read import JournalReads
from annad.journal.retained import BackupSizes
from annad.journal.rows import PlanRow, UndoRow

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

_P = ParamSpec("_P")
_T = TypeVar("_T")

SEALED_VERSION = 1  # the version that sealed the plans (recorded in journal_migrated)
SCHEMA_VERSION = compact.SCHEMA_VERSION
"""``PRAGMA user_version`` this daemon writes (see the module docstring)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS plans(
    plan_id TEXT PRIMARY KEY, digest TEXT NOT NULL, status TEXT NOT NULL,
    created_at REAL NOT NULL, updated_at REAL NOT NULL, caller_uid INTEGER NOT NULL,
    source TEXT NOT NULL, request TEXT NOT NULL, home TEXT NOT NULL,
    plan_json TEXT NOT NULL, annotated_json TEXT NOT NULL, error_json TEXT);
CREATE INDEX IF NOT EXISTS plans_created ON plans(created_at);
CREATE INDEX IF NOT EXISTS plans_newest ON plans(created_at, plan_id);
CREATE TABLE IF NOT EXISTS steps(
    plan_id TEXT NOT NULL, idx INTEGER NOT NULL, step_id TEXT NOT NULL, status TEXT NOT NULL,
    exit_code INTEGER, output TEXT NOT NULL DEFAULT '', started_at REAL, finished_at REAL,
    PRIMARY KEY(plan_id, idx));
CREATE TABLE IF NOT EXISTS undo(
    plan_id TEXT NOT NULL, seq INTEGER NOT NULL, step_id TEXT NOT NULL, action TEXT NOT NULL,
    target TEXT NOT NULL, ok INTEGER NOT NULL, message TEXT NOT NULL,
    PRIMARY KEY(plan_id, seq));
CREATE TABLE IF NOT EXISTS events(
    id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, plan_id TEXT, kind TEXT NOT NULL,
    step_id TEXT, body TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
-- every read of a plan's events goes by plan (show, history, checks, execute, rollback):
-- without it each one scanned the whole table (306 ms at 10,000 plans)
CREATE INDEX IF NOT EXISTS events_plan ON events(plan_id, kind, id);
CREATE INDEX IF NOT EXISTS events_kind ON events(kind);
""" + retained.SCHEMA


class Journal(JournalReads, BackupSizes):
    """One SQLite connection shared by the daemon's threads behind a lock: the schema, its
    migration and every write here, the queries in :class:`~annad.journal.read.JournalReads`."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = path
        self.reserve = Reserve(path.parent)
        self._lock = threading.RLock()
        self._durable = False
        if free_bytes(path.parent) < JOURNAL_FLOOR:
            # a full state disk must not keep the daemon from starting: opening needs room
            # for the WAL and its index (SQLite says "disk I/O error" when it has none),
            # and recovery needs room to mark plans interrupted: the reserve is for that
            self.reserve.release()
        try:
            self._db = self._open()
        except sqlite3.OperationalError as exc:
            if is_full(exc) or free_bytes(path.parent) < JOURNAL_FLOOR:
                raise self.full(exc) from None
            raise  # locked, no permission: not damage, and not for this message
        except sqlite3.DatabaseError as exc:  # "file is not a database", a malformed image
            raise damaged(self.path, exc) from None
        try:
            self._migrate()
        except JournalDamaged:  # the connection met a damaged page
            self._db.close()
            raise
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise damaged(self.path, exc) from None
        path.chmod(0o600)
        self.reserve.ensure()

    def _open(self) -> sqlite3.Connection:
        # check_same_thread=False: request threads and the executor thread share the
        # connection; every use goes through self._lock.
        db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None,
                             factory=Connection)
        db.journal_path = str(self.path)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            # a small page cache: the journal is written far more than read, and an idle
            # daemon should stay small (the default is 2 MB)
            db.execute("PRAGMA cache_size=-256")
            db.executescript(_SCHEMA)
        except BaseException:
            db.close()
            raise
        return db

    def full(self, exc: BaseException | None) -> StateFull:
        """The error for a journal write the state disk has no room for."""
        problem = self.reserve.problem() or (
            f"the state disk holding {self.path.parent} is full "
            f"({free_bytes(self.path.parent) // 1024} KiB free)")
        return StateFull(problem + (f" ({exc})" if exc is not None else ""),
                         code=ErrorCode.BACKUP_REFUSED,
                         hint=f"free space on the file system of {self.path.parent}")

    def _migrate(self) -> None:
        """Bring an older journal to :data:`SCHEMA_VERSION`; refuse a newer one."""
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            self._db.close()
            raise AnnaError(f"the journal {self.path} has schema version {version}; this daemon "
                            f"knows up to {SCHEMA_VERSION}", code=ErrorCode.CONFIG_INVALID,
                            hint="run the Anna version that wrote it, or move the file away")
        if version == SCHEMA_VERSION:
            return
        with self._tx(durable=True):
            if version < SEALED_VERSION and self._db.execute(
                    "SELECT 1 FROM events LIMIT 1").fetchone() is not None:
                # seal the plans as they are now: edits made before this point cannot be
                # told apart any more, edits made after it can
                seals = {row.plan_id: {**seal_of(row), "status": str(row.status)}
                         for row in self._plans_unlocked()}
                self._append(MIGRATED_KIND, None, None,
                             {"from_version": version, "to_version": SEALED_VERSION,
                              "plans": seals})
            if version < retained.SCHEMA_VERSION:
                retained.seed(self._db)  # version 2 (idempotent)
            # version 3 (compact answers) changes no stored row: older rows are read as they are
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @contextmanager
    def _tx(self, *, durable: bool = False) -> Iterator[None]:
        """One write transaction; ``durable``: on disk when it commits (fsync of the WAL)."""
        with self._lock:
            if durable != self._durable:
                self._db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
                self._durable = durable
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                yield

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    def verify(self) -> AuditReport:
        """Recompute the hash chain and check every plan row against it
        (:mod:`annad.journal.audit`: its own read-only connection, in batches)."""
        return audit.verify(self.path)

    # ------------------------------------------------------------------ events

    def _append(self, kind: str, plan_id: str | None, step_id: str | None,
                body: dict[str, Any]) -> None:
        """Append one chained event row (caller holds the lock and a transaction)."""
        last = self._db.execute("SELECT id, hash FROM events ORDER BY id DESC LIMIT 1").fetchone()
        prev = last[1] if last else GENESIS
        seq = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name='events'").fetchone()
        row_id = max(seq[0] if seq else 0, last[0] if last else 0) + 1
        ts = round(time.time(), 6)
        text = canonical_json(body).decode("utf-8")
        digest = integrity.event_hash(prev, row_id, ts, plan_id, kind, step_id, text)
        self._db.execute(
            "INSERT INTO events(id, ts, plan_id, kind, step_id, body, prev_hash, hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (row_id, ts, plan_id, kind, step_id, text, prev, digest))

    @_starting
    def event(self, /, kind: str, plan_id: str | None = None, step_id: str | None = None,
              **body: Any) -> None:
        """Record one event on its own (a transaction of its own)."""
        with self._tx():
            self._append(kind, plan_id, step_id, body)

    # ------------------------------------------------------------------ plans

    @_starting
    def add_plan(self, row: PlanRow, step_ids: list[str]) -> None:
        """Store a submitted plan and its steps (pending)."""
        with self._tx():
            self._db.execute(
                "INSERT INTO plans VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row.plan_id, row.digest, str(row.status), row.created_at, row.updated_at,
                 row.caller_uid, row.source, row.request, row.home, compact.stored(row),
                 row.annotated_json, None))
            self._db.executemany(
                "INSERT INTO steps(plan_id, idx, step_id, status) VALUES (?, ?, ?, ?)",
                [(row.plan_id, i, sid, str(StepStatus.PENDING)) for i, sid in enumerate(step_ids)])
            self._append("plan_submitted", row.plan_id, None,
                         {**seal_of(row), "status": str(row.status),
                          "steps": len(step_ids)})

    @_starting
    def revise_plan(self, row: PlanRow, step_ids: list[str], *, from_digest: str) -> None:
        """Replace a stored plan not run yet by its revision (the refined plan of the same
        request): its content, digest, status and steps (pending again), sealed anew in a
        chained ``plan_revised`` event. The id, the owner and the events before stay."""
        with self._tx():
            self._db.execute(
                "UPDATE plans SET digest=?, status=?, updated_at=?, source=?, plan_json=?, "
                "annotated_json=? WHERE plan_id=?",
                (row.digest, str(row.status), row.updated_at, row.source, compact.stored(row),
                 row.annotated_json, row.plan_id))
            self._db.execute("DELETE FROM steps WHERE plan_id=?", (row.plan_id,))
            self._db.executemany(
                "INSERT INTO steps(plan_id, idx, step_id, status) VALUES (?, ?, ?, ?)",
                [(row.plan_id, i, sid, str(StepStatus.PENDING)) for i, sid in enumerate(step_ids)])
            self._append(integrity.REVISED_KIND, row.plan_id, None,
                         {**seal_of(row), "status": str(row.status), "steps": len(step_ids),
                          "from_digest": from_digest})

    @_recording
    def set_plan_status(self, /, plan_id: str, status: PlanStatus, *,
                        error: dict[str, Any] | None = None, kind: str | None = None,
                        **body: Any) -> None:
        """Change a plan's status and record it as an event (``kind`` defaults to the status)."""
        now = time.time()
        with self._tx(durable=status in (PlanStatus.RUNNING, PlanStatus.ROLLING_BACK)):
            if error is not None:
                self._db.execute(
                    "UPDATE plans SET status=?, updated_at=?, error_json=? WHERE plan_id=?",
                    (str(status), now, json.dumps(error), plan_id))
            else:
                self._db.execute("UPDATE plans SET status=?, updated_at=? WHERE plan_id=?",
                                 (str(status), now, plan_id))
            self._append(kind or f"plan_{status}", plan_id, None,
                         {**body, "status": str(status),
                          **({"error": error} if error else {})})

    @_recording
    def mark_unrun(self, plan_id: str, status: PlanStatus) -> None:
        """Record a plan shown and not run (``dry_run``): its steps read ``skipped``."""
        now = time.time()
        with self._tx():
            self._db.execute("UPDATE plans SET status=?, updated_at=? WHERE plan_id=?",
                             (str(status), now, plan_id))
            self._db.execute("UPDATE steps SET status=? WHERE plan_id=? AND status=?",
                             (str(StepStatus.SKIPPED), plan_id, str(StepStatus.PENDING)))
            self._append(f"plan_{status}", plan_id, None, {"status": str(status)})

    @_recording
    def recover(self) -> list[str]:
        """Mark plans left running (or rolling back) by a dead daemon as ``interrupted``
        (raises :class:`StateFull` when the state disk has no room even without the reserve;
        call it again once there is room: it is idempotent)."""
        with self._lock:
            ids = [r[0] for r in self._db.execute(
                "SELECT plan_id FROM plans WHERE status IN (?, ?)",
                (str(PlanStatus.RUNNING), str(PlanStatus.ROLLING_BACK)))]
        for plan_id in ids:
            with self._tx():
                self._db.execute(
                    "UPDATE steps SET status=?, finished_at=? WHERE plan_id=? AND status=?",
                    (str(StepStatus.FAILED), time.time(), plan_id, str(StepStatus.RUNNING)))
            self.set_plan_status(plan_id, PlanStatus.INTERRUPTED, kind="plan_interrupted",
                                 message="the daemon stopped while this plan was running")
        return ids

    # ------------------------------------------------------------------ steps

    @_recording
    def step_started(self, plan_id: str, idx: int, step_id: str, *, durable: bool = True
                     ) -> None:
        """Mark a step running (durable before the step is spawned; ``durable=False``: a
        captured step, of which nothing lands before a later flush covers this record)."""
        with self._tx(durable=durable):
            self._db.execute(
                "UPDATE steps SET status=?, started_at=? WHERE plan_id=? AND idx=?",
                (str(StepStatus.RUNNING), time.time(), plan_id, idx))
            self._append("step_started", plan_id, step_id, {"index": idx})

    @_recording
    def step_finished(self, /, plan_id: str, idx: int, step_id: str, status: StepStatus,
                      exit_code: int | None, output: str, **body: Any) -> None:
        """Record a step's outcome."""
        with self._tx():
            self._db.execute(
                "UPDATE steps SET status=?, exit_code=?, output=?, finished_at=? "
                "WHERE plan_id=? AND idx=?",
                (str(status), exit_code, output, time.time(), plan_id, idx))
            self._append("step_finished", plan_id, step_id,
                         {"index": idx, "status": str(status), "exit_code": exit_code,
                          "output_sha256": hashlib.sha256(output.encode()).hexdigest(), **body})

    @_starting
    def backup_recorded(self, plan_id: str, step_id: str, body: dict[str, Any], *,
                        durable: bool = True) -> None:
        """What a step's backups hold (``step_backup``), on disk before any of it lands
        (``durable=False``: the caller flushes the journal's file system itself before)."""
        with self._tx(durable=durable):
            self._append("step_backup", plan_id, step_id, body)

    @_recording
    def set_step_status(self, plan_id: str, idx: int, status: StepStatus) -> None:
        """Change a step's status only (undone, undo_failed)."""
        with self._tx():
            self._db.execute("UPDATE steps SET status=? WHERE plan_id=? AND idx=?",
                             (str(status), plan_id, idx))

    # ------------------------------------------------------------------ undo

    @_recording
    def add_undo(self, plan_id: str, result: UndoRow) -> None:
        """Record one undo action's outcome (also as a chained event)."""
        with self._tx():
            seq = self._db.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM undo WHERE plan_id=?",
                                   (plan_id,)).fetchone()[0]
            self._db.execute("INSERT INTO undo VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (plan_id, seq, result.step_id, result.action, result.target,
                              int(result.ok), result.message))
            self._append("undo_action", plan_id, result.step_id,
                         {"action": result.action, "target": result.target, "ok": result.ok,
                          "message": result.message})
