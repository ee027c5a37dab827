"""Retention decided from what is kept as plans end (annad/journal/retained.py), not from a
read of every plan: the size table follows status changes in the same transaction, an old
journal is seeded once, and a retention pass neither reads plan JSON nor scans a table.

Real journals (SQLite) and real backup directories; the pass's statements are traced and
each one's query plan asked of SQLite itself.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from anna_common.protocol.models import PlanStatus
from annad.execution import retention
from annad.execution.retention import Policy, Retention
from annad.execution.runs import RunManager
from annad.journal.rows import PlanRow
from annad.journal.store import SCHEMA_VERSION, Journal


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    store = Journal(tmp_path / "journal.sqlite3")
    try:
        yield store
    finally:
        store.close()


def _add(journal: Journal, name: str, *, uid: int = 0,
         status: PlanStatus = PlanStatus.SUBMITTED) -> str:
    now = time.time()
    journal.add_plan(PlanRow(plan_id=name, digest="0" * 64, status=status,
                             created_at=now, updated_at=now, caller_uid=uid, source="model",
                             request="", home="/tmp", plan_json="{}", annotated_json="{}",
                             error=None), [])
    return name


def _backups(backups: Path, name: str, size: int) -> None:
    blob = backups / name / "blobs" / "ab"
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(b"x" * size)


def _rows(journal: Journal) -> dict[str, tuple[int, int, int]]:
    """plan id → (bytes, removable, stale)."""
    return {r[0]: (r[1], r[2], r[3]) for r in journal._db.execute(
        "SELECT plan_id, bytes, removable, stale FROM backup_sizes")}


def test_status_changes_keep_the_size_table(journal: Journal, tmp_path: Path) -> None:
    backups = tmp_path / "backups"
    gc = Retention(journal=journal, backups=backups, policy=Policy(keep_days=30, max_bytes=0))
    plan = _add(journal, "p1")
    journal.mark_unrun(_add(journal, "p-shown"), PlanStatus.DRY_RUN)
    assert _rows(journal) == {}  # never ran: no backups to track
    journal.set_plan_status(plan, PlanStatus.RUNNING)
    assert _rows(journal) == {plan: (0, 0, 1)}  # in the running status's own transaction
    _backups(backups, plan, 700)
    assert gc.measure(running=plan) == 0  # the running plan is measured after it ends
    journal.set_plan_status(plan, PlanStatus.SUCCEEDED)
    assert gc.measure() == 1
    assert _rows(journal) == {plan: (700, 0, 0)} and journal.backups_total() == 700
    assert gc.select(include_rollbackable=False, now=time.time()) == []  # rollbackable
    journal.set_plan_status(plan, PlanStatus.ROLLING_BACK)
    _backups(backups, plan, 1000)  # the rollback's own capture adds to the directory
    journal.set_plan_status(plan, PlanStatus.ROLLED_BACK)
    assert _rows(journal)[plan][1:] == (1, 1)
    gc.measure()
    assert _rows(journal) == {plan: (1000, 1, 0)} and journal.backups_total() == 1000
    chosen = gc.select(include_rollbackable=False, now=time.time())
    assert [(c.plan_id, c.bytes, c.reason) for c in chosen] == [(plan, 1000, "size")]
    gc.remove(chosen, by_uid=0)
    assert not (backups / plan).exists()
    assert _rows(journal) == {} and journal.backups_total() == 0
    assert retention.gone(journal, plan) is not None and journal.verify().ok


def test_a_stale_cache_never_removes_a_plan_in_another_state(journal: Journal,
                                                              tmp_path: Path) -> None:
    backups = tmp_path / "backups"
    gc = Retention(journal=journal, backups=backups, policy=Policy(keep_days=0, max_bytes=0))
    plan = _add(journal, "p2")
    journal.set_plan_status(plan, PlanStatus.FAILED)
    _backups(backups, plan, 10)
    gc.measure()
    # the table says removable; the plan's own row (edited here, as a bug or a person
    # might) says succeeded: the row wins and nothing is removed
    journal._db.execute("UPDATE plans SET status='succeeded' WHERE plan_id=?", (plan,))
    journal._db.execute("UPDATE backup_sizes SET removable=1 WHERE plan_id=?", (plan,))
    chosen = gc.select(include_rollbackable=False, now=time.time() + 1)
    assert [c.plan_id for c in chosen] == []  # the join reads the plan's status
    from anna_common.protocol.models import GcRemoved

    forged = [GcRemoved(plan_id=plan, status=PlanStatus.FAILED, bytes=10, reason="age",
                        finished_at=0.0)]
    gc.remove(forged, by_uid=0)
    assert (backups / plan).is_dir()


def test_an_older_journal_is_seeded_once(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    journal = Journal(path)
    states = {"a": PlanStatus.SUCCEEDED, "b": PlanStatus.ROLLED_BACK, "c": PlanStatus.ANSWERED,
              "d": PlanStatus.INTERRUPTED}
    for name, status in states.items():
        if status is PlanStatus.ANSWERED:  # final at submit
            _add(journal, name, status=status)
        else:
            journal.set_plan_status(_add(journal, name), status)
    journal.close()
    db = sqlite3.connect(path)  # as version 1 left it: no size rows
    with db:
        db.execute("DELETE FROM backup_sizes")
        db.execute("PRAGMA user_version=1")
    assert db.execute("SELECT bytes FROM backup_total").fetchone() == (0,)
    db.close()
    journal = Journal(path)
    try:
        assert journal._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
        assert _rows(journal) == {"a": (0, 0, 1), "b": (0, 1, 1), "d": (0, 0, 1)}
        _backups(tmp_path / "backups", "a", 30)
        gc = Retention(journal=journal, backups=tmp_path / "backups",
                       policy=Policy(keep_days=30, max_bytes=0))
        assert gc.measure() == 3
        assert _rows(journal) == {"a": (30, 0, 0)}  # b and d hold no backups: dropped
        assert journal.verify().ok
    finally:
        journal.close()


def _plans_of(sql: str, db: sqlite3.Connection) -> list[str]:
    return [r[3] for r in db.execute("EXPLAIN QUERY PLAN " + sql)]


def test_a_retention_pass_reads_no_plan_json_and_scans_no_table(journal: Journal,
                                                               tmp_path: Path) -> None:
    backups = tmp_path / "backups"
    gc = Retention(journal=journal, backups=backups,
                   policy=Policy(keep_days=30, max_bytes=10**9))
    for n in range(60):
        plan = _add(journal, f"p{n:03d}", uid=1000 + n % 2)
        journal.set_plan_status(plan, PlanStatus.RUNNING)
        journal.set_plan_status(plan, PlanStatus.ROLLED_BACK if n % 3 else PlanStatus.SUCCEEDED)
        _backups(backups, plan, 100)
    runs = RunManager(journal=journal, executor=None, user_mode=True)  # type: ignore[arg-type]
    retention.auto(gc, runs)  # measures all 60 once
    assert journal.backups_total() == 6000
    statements: list[str] = []
    journal._db.set_trace_callback(statements.append)
    try:
        gc.policy = Policy(keep_days=0, max_bytes=5000)
        retention.auto(gc, runs)
    finally:
        journal._db.set_trace_callback(None)
    assert len(list(backups.iterdir())) == 20  # the rollbackable third stays
    reads = [s for s in statements if s.lstrip().upper().startswith(("SELECT", "UPDATE",
                                                                      "DELETE", "INSERT"))]
    assert reads and not [s for s in reads if "plan_json" in s or "annotated_json" in s]
    # the chain's tail (the last row, by rowid from the end) and sqlite_sequence's one row
    # per table are read by every append: constant, whatever the journal's size
    tail = ("SELECT id, hash FROM events ORDER BY id DESC LIMIT 1",
            "SELECT seq FROM sqlite_sequence WHERE name='events'")
    reads = [s for s in reads if s not in tail]
    scans = {detail for s in reads for detail in _plans_of(s, journal._db)
             if detail.startswith("SCAN") and "backup_sizes_stale" not in detail
             and "backup_total" not in detail and "CONSTANT ROW" not in detail}
    assert scans == set(), scans


def test_measuring_goes_on_past_the_running_plan_in_a_full_batch(
        journal: Journal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retention, "MEASURE_BATCH", 3)
    backups = tmp_path / "backups"
    gc = Retention(journal=journal, backups=backups, policy=Policy(keep_days=30, max_bytes=0))
    names = [_add(journal, f"q{n}") for n in range(7)]
    for name in names:
        journal.set_plan_status(name, PlanStatus.RUNNING)
        _backups(backups, name, 5)
    running = journal.stale_backups(3)[0]  # in the first batch, and left for later
    assert gc.measure(running=running) == 6
    assert set(journal.stale_backups()) == {running}
    assert journal.backups_total() == 30
