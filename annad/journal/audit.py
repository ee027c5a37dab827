"""``audit verify`` at any size: the chain and the plan rows checked in batches, with progress.

The whole check used to read every event row into memory at once under the journal's lock:
at 100,000 plans (900,000 rows) it took 22 s and 1.1 GB, past the client's 30 s timeout
("annad is not answering"), and every plan's writes waited for it. Here it runs on a
connection of its own, read-only, in one read transaction (WAL: a fixed snapshot, while the
daemon goes on writing), :data:`BATCH` rows at a time, and yields how many rows it has
checked after each batch, so a caller can stream the progress (``GET
/v1/audit/verify?progress=1``) and the client never waits silently.

A file SQLite cannot read (a damaged page met on the way, not a database at all) is a
report that says so, with the last row checked — never an exception and never
INTERNAL_ERROR: finding damage is what an audit is for.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from anna_common.protocol.models import AuditReport
from annad.journal import integrity
from annad.journal.integrity import GENESIS, MIGRATED_KIND
from annad.journal.read import PLAN_COLUMNS, plan_row

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

BATCH = 256
"""Event rows read, hashed and forgotten at a time. It was 20,000 (~15 MB of rows at once):
the daemon kept much of each verify's peak afterwards (Python's allocator frees an arena only
when all of it is free, and the daemon's other threads allocate meanwhile), so while the
journal grew toward 20,000 rows every verify grew the idle daemon (``bench/soak.py``,
docs/performance.md). A small batch reuses the same few blocks row after row."""
PLAN_BATCH = 16
"""Plan rows (each with its plan and annotation: kilobytes) read at a time when they are
compared with their seals. All of them at once (20,000 before) was most of a verify's peak:
~30 kB a plan (``bench/soak.py``)."""
CACHE_KIB = 256
"""The verify connection's page cache (KiB), as the journal's own (:mod:`annad.journal.store`)."""
PROGRESS = 20_000
"""Rows checked between two progress counts (lines of ``GET /v1/audit/verify?progress=1``)."""
EVENT_COLUMNS = "id, ts, plan_id, kind, step_id, body, prev_hash, hash"


def verify_progress(path: Path, *, batch: int = BATCH, every: int = PROGRESS
                    ) -> Iterator[int | AuditReport]:
    """Check the journal file at ``path``: the number of event rows checked so far after
    each ``every`` rows or so, then one :class:`AuditReport` (always the last item)."""
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        yield AuditReport(ok=False, rows=0, message=f"{path} cannot be opened ({exc})")
        return
    chain = _Chain()
    pending: list[tuple[Any, ...]] = []  # rows read, not yet checked
    try:
        # a small page cache: every page is read once, in order (SQLite's default is 2 MB,
        # which the daemon kept after each verify)
        db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        db.execute("BEGIN")  # one snapshot for the chain and the plan rows
        chain.legacy = db.execute("SELECT MIN(id) FROM events WHERE kind=?",
                                  (MIGRATED_KIND,)).fetchone()[0] or 0
        # row by row: a damaged page stops the read at the last row SQLite could give
        for row in db.execute(f"SELECT {EVENT_COLUMNS} FROM events ORDER BY id"):  # noqa: S608
            pending.append(row)
            if len(pending) == batch:
                broken = chain.take(pending)
                if broken is not None:
                    yield broken
                    return
                pending = []
                if chain.checked % every < batch:
                    yield chain.checked
        broken = chain.take(pending)
        if broken is not None:
            yield broken
            return
        yield chain.checked
        yield _plans_report(db, chain.ledger, chain.checked)
    except (sqlite3.Error, ValueError, KeyError) as exc:  # damaged, not SQLite, not ours
        # the rows read before the damage are checked first: an edit there is reported as such
        yield chain.take(pending) or AuditReport(
            ok=False, rows=chain.checked, first_bad_row=chain.last + 1 if chain.last else None,
            message=f"{path} is not a readable journal after event row {chain.last} "
            f"({chain.checked} rows checked; {type(exc).__name__}: {exc})")
    finally:
        db.close()


class _Chain:
    """The chain check's state between batches."""

    def __init__(self) -> None:
        self.prev = GENESIS
        self.checked = 0
        self.last = 0
        """Id of the last row checked."""
        self.legacy = 0
        self.ledger = integrity.PlanLedger()

    def take(self, rows: list[tuple[Any, ...]]) -> AuditReport | None:
        """Check ``rows``, which follow the rows taken so far: a report if the chain breaks
        in them, else None (and they count as checked)."""
        if not rows:
            return None
        bad = integrity.chain_break(rows, self.prev, first_number=self.checked + 1,
                                    legacy_until=self.legacy)
        if bad is not None:
            return AuditReport(ok=False, rows=self.checked + len(rows), first_bad_row=bad,
                               message=f"event row {bad} does not match the chain: it was "
                               "altered, or a row before it was removed")
        for row_id, _ts, plan_id, kind, step_id, body, _prev, _hash in rows:
            self.ledger.add(row_id, plan_id, kind, step_id, body)
        self.prev = rows[-1][7]
        self.last = int(rows[-1][0])
        self.checked += len(rows)
        return None


def _plans_report(db: sqlite3.Connection, ledger: integrity.PlanLedger,
                  checked: int) -> AuditReport:
    """Every plan row against the chain's seals and statuses: the problem of the plan sealed
    first, else the first seal whose row is gone, else success."""
    worst: tuple[int, str] | None = None
    present: set[str] = set()
    cursor = db.execute(f"SELECT {PLAN_COLUMNS} FROM plans")  # noqa: S608
    while rows := cursor.fetchmany(PLAN_BATCH):
        for raw in rows:
            plan = plan_row(raw)
            present.add(plan.plan_id)
            problem = ledger.problem(plan)
            if problem is not None:
                at = ledger.seal_row.get(plan.plan_id, 0)
                if worst is None or at < worst[0]:
                    worst = (at, problem)
    if worst is not None:
        return AuditReport(ok=False, rows=checked, first_bad_row=worst[0] or None,
                           message=f"{worst[1]}: the journal was altered")
    missing = sorted(set(ledger.seals) - present, key=lambda p: ledger.seal_row[p])
    if missing:
        return AuditReport(ok=False, rows=checked, first_bad_row=ledger.seal_row[missing[0]],
                           message=f"plan {missing[0]} is in the event chain but its row "
                           "was removed: the journal was altered")
    return AuditReport(ok=True, rows=checked, message=f"the event chain verifies and matches "
                       f"all {len(present)} plans")


def verify(path: Path) -> AuditReport:
    """The report of :func:`verify_progress`, without the progress: the live journal's
    (:meth:`annad.journal.store.Journal.verify`), or a copy moved aside, which is never
    changed (``annad --check-journal``)."""
    *_, last = verify_progress(path)  # the progress counts are dropped as they come
    assert isinstance(last, AuditReport)  # the generator always ends with its report
    return last

