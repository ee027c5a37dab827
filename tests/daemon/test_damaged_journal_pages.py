"""Issue 35 item 5: damage the journal's open does not see — a page SQLite reads only later.

Before, such a journal stopped annad with a Python traceback and uvicorn's exit status 3
(which the unit restarts, in a loop), a request that met it answered INTERNAL_ERROR, and
``audit verify`` on it answered INTERNAL_ERROR too; on 100,000 plans the audit ran past the
client's 30 s timeout. The journals here are real ones (the daemon's own writes, or the
bench's bulk fill of the exact rows the daemon writes); the damage is SQLite's own
"database disk image is malformed", made by flipping a page's header bytes in a copy.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from anna_common.plan import ActionPlan
from annad.journal.store import Journal
from annad.main import EXIT_DAMAGED
from tests.daemonfix import REPO, http, make_plan, new_daemon, running_daemon, stop_and_remove
from tests.waiting import WAIT_S

sys.path.insert(0, str(REPO / "bench"))
from journal import fill

PAGE = 4096


def _pages_of(path: Path, table: str) -> list[int]:
    with sqlite3.connect(path) as db:
        return [n for (n,) in db.execute("SELECT pageno FROM dbstat WHERE name=? AND "
                                         "pagetype='leaf' ORDER BY pageno", (table,))]


def _flip_headers(path: Path, pages: list[int]) -> None:
    """Make SQLite's b-tree page header of each page (1-based numbers) unreadable."""
    data = bytearray(path.read_bytes())
    for page in pages:
        start = (page - 1) * PAGE
        for i in range(start, start + 12):
            data[i] ^= 0x5A
    path.write_bytes(bytes(data))


def _journal_with_plans(count: int) -> Path:
    """A journal copy (checkpointed, no WAL) after ``count`` real submits to a daemon."""
    with running_daemon(user_mode=True) as daemon:
        client = daemon.client()
        for i in range(count):
            client.submit(ActionPlan.model_validate(make_plan([(f"s{i}", f"ls /tmp/{i}",
                                                                "INFO")])))
        copy = daemon.base.parent / f"{daemon.base.name}-journal.sqlite3"
        with sqlite3.connect(daemon.state / "journal.sqlite3") as live, \
                sqlite3.connect(copy) as out:
            live.backup(out)
    return copy


def _remove(copy: Path) -> None:
    """The copy and what SQLite made beside it when it opened it (its WAL and shared memory)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{copy}{suffix}").unlink(missing_ok=True)


def test_damage_met_by_start_up_recovery_is_one_line_and_its_own_exit_status() -> None:
    copy = _journal_with_plans(30)
    try:
        # every table's pages but the schema page: opening works, recovery's reads do not
        with sqlite3.connect(copy) as db:
            pages = [n for (n,) in db.execute("SELECT pageno FROM dbstat WHERE pageno > 1")]
        _flip_headers(copy, pages)
        daemon = new_daemon(user_mode=True)
        try:
            daemon.state.mkdir(parents=True, mode=0o700)
            (daemon.state / "journal.sqlite3").write_bytes(copy.read_bytes())
            proc = subprocess.run(daemon.argv, env=daemon.env, capture_output=True, text=True,
                                  timeout=WAIT_S, cwd=daemon.base, check=False)
            assert proc.returncode == EXIT_DAMAGED, proc.stderr
            lines = [line for line in proc.stderr.splitlines() if line.strip()]
            assert len(lines) == 1, proc.stderr
            assert "Traceback" not in proc.stderr
            assert "malformed" in lines[0] and "mv " in lines[0] and "backups" in lines[0]
            assert not daemon.socket.exists()
        finally:
            stop_and_remove(daemon)
    finally:
        _remove(copy)


def test_damage_met_later_is_a_coded_answer_not_an_internal_error() -> None:
    copy = _journal_with_plans(40)
    try:
        # the steps' page: start-up reads plans and events, not steps; show reads them
        _flip_headers(copy, _pages_of(copy, "steps"))
        daemon = new_daemon(user_mode=True)
        try:
            daemon.state.mkdir(parents=True, mode=0o700)
            (daemon.state / "journal.sqlite3").write_bytes(copy.read_bytes())
            daemon.start()
            ids = [p["plan_id"] for p in http(daemon.socket, "GET", "/v1/plans?limit=0")[1]
                   ["plans"]]
            assert len(ids) == 40
            status, body = http(daemon.socket, "GET", f"/v1/plans/{ids[0]}")
            assert (status, body["code"]) == (503, "JOURNAL_DAMAGED"), body
            assert "malformed" in body["message"] and "--check-journal" in body["hint"]
            env = {**daemon.env, "ANNA_SOCKET": str(daemon.socket)}
            show = subprocess.run([sys.executable, "-m", "annactl.cli", "show", ids[0],
                                   "--json"], env=env, capture_output=True, text=True,
                                  timeout=WAIT_S, cwd=REPO, check=False)
            assert show.returncode == 7 and json.loads(show.stdout)["code"] == \
                "JOURNAL_DAMAGED", show.stdout + show.stderr
            log = daemon.output()
            assert "CRITICAL" in log and "INTERNAL_ERROR" not in log and "Traceback" not in log
            assert daemon.client().health().api_version  # the daemon still serves
        finally:
            stop_and_remove(daemon)
    finally:
        _remove(copy)


def test_audit_verify_reports_a_page_damaged_under_a_running_daemon() -> None:
    with running_daemon(user_mode=True) as daemon:
        client = daemon.client()
        for i in range(60):
            client.submit(ActionPlan.model_validate(make_plan([(f"s{i}", f"ls /tmp/{i}",
                                                                "INFO")])))
        journal = daemon.state / "journal.sqlite3"
        with sqlite3.connect(journal) as db:  # the pages on disk, none only in the WAL
            assert db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
        events = _pages_of(journal, "events")
        _flip_headers(journal, [events[len(events) // 2]])  # a bad sector, as it were
        env = {**daemon.env, "ANNA_SOCKET": str(daemon.socket)}
        audit = subprocess.run([sys.executable, "-m", "annactl.cli", "audit", "verify",
                                "--json"], env=env, capture_output=True, text=True,
                               timeout=WAIT_S, cwd=REPO, check=False)
        assert audit.returncode == 13, audit.stdout + audit.stderr
        report = json.loads(audit.stdout)
        assert report["ok"] is False and "not a readable journal" in report["message"]
        assert "malformed" in report["message"] and report["rows"] > 0, report
        assert "INTERNAL_ERROR" not in daemon.output()


def test_the_audit_streams_its_progress_and_ends_with_the_report() -> None:
    daemon = new_daemon(user_mode=True)
    try:
        daemon.state.mkdir(parents=True, mode=0o700)
        journal = Journal(daemon.state / "journal.sqlite3")
        fill(journal, 3_000)  # 27,000 event rows: two batches and a bit
        journal.close()
        daemon.start()
        status, lines = http(daemon.socket, "GET", "/v1/audit/verify?progress=1")
        assert status == 200
        items = [json.loads(line) for line in lines.splitlines() if line.strip()]
        counts = [i["checked"] for i in items[:-1]]
        assert counts == sorted(counts) and len(counts) >= 2 and counts[-1] == 27_000, counts
        report = items[-1]["report"]
        assert report["ok"] is True and report["rows"] == 27_000, report
        assert "3000 plans" in report["message"]
        # without ?progress the route answers the report alone, as before
        status, plain = http(daemon.socket, "GET", "/v1/audit/verify")
        assert status == 200 and plain["ok"] is True and plain["rows"] == 27_000
    finally:
        stop_and_remove(daemon)
