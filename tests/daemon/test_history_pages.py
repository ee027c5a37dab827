"""A long history is listed a page at a time (daemon and ``annactl history --all``), with the
same document and order as one reply, and summaries read by SQLite's JSON functions say
what the parsed annotation says.

A real daemon over a real journal filled as the daemon writes it (bench/journal.py's
``fill``: sealed plans with chained events), more plans than one page holds.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from annad.journal.records import plan_summary
from annad.journal.store import Journal
from annad.journal.summaries import LIST_PAGE, summary_of
from bench.journal import fill
from tests.daemonfix import REPO, RunningDaemon, http, new_daemon, stop_and_remove

PLANS = LIST_PAGE * 2 + 37


@pytest.fixture(scope="module")
def daemon() -> Iterator[RunningDaemon]:
    made = new_daemon(user_mode=True)
    try:
        journal = Journal(made.state / "journal.sqlite3")
        fill(journal, PLANS, uid=0)
        journal.close()
        yield made.start()
    finally:
        stop_and_remove(made)


def _ids(document: dict) -> list[str]:  # type: ignore[type-arg]
    return [p["plan_id"] for p in document["plans"]]


def test_the_whole_list_streams_in_pages_as_one_document(daemon: RunningDaemon) -> None:
    status, every = http(daemon.socket, "GET", "/v1/plans?limit=0")
    assert status == 200 and every["more"] is False and len(every["plans"]) == PLANS
    ids = _ids(every)
    assert len(set(ids)) == PLANS
    _, head = http(daemon.socket, "GET", "/v1/plans?limit=20")
    assert _ids(head) == ids[:20] and head["more"] is True
    status, long = http(daemon.socket, "GET", f"/v1/plans?limit={LIST_PAGE + 3}")
    assert _ids(long) == ids[:LIST_PAGE + 3] and long["more"] is True
    before = ids[LIST_PAGE - 1]
    status, rest = http(daemon.socket, "GET", f"/v1/plans?limit=0&before={before}")
    assert _ids(rest) == ids[LIST_PAGE:] and rest["more"] is False
    status, tail = http(daemon.socket, "GET", f"/v1/plans?limit={PLANS}&before={ids[0]}")
    assert _ids(tail) == ids[1:] and tail["more"] is False
    assert every["plans"][0]["title"] == "test plan" and every["plans"][0]["steps"] == 3
    status, missing = http(daemon.socket, "GET", "/v1/plans?limit=0&before=nosuchplan")
    assert status == 404, missing  # checked before the first byte is sent


def test_history_all_prints_every_page(daemon: RunningDaemon) -> None:
    env = {**daemon.env, "ANNA_SOCKET": str(daemon.socket), "ANNA_AUTOSTART": "0"}
    done = subprocess.run([sys.executable, "-m", "annactl.cli", "history", "--all", "--json"],
                          env=env, capture_output=True, text=True, cwd=str(REPO), timeout=120,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["code"] == "OK" and document["more"] is False
    assert len(document["plans"]) == PLANS
    _status, every = http(daemon.socket, "GET", "/v1/plans?limit=0")
    assert document["plans"] == every["plans"]
    text = subprocess.run([sys.executable, "-m", "annactl.cli", "history", "--all"], env=env,
                          capture_output=True, text=True, cwd=str(REPO), timeout=120,
                          stdin=subprocess.DEVNULL, check=False)
    assert text.returncode == 0, text.stderr
    assert every["plans"][-1]["plan_id"][-6:] in text.stdout  # the last page was printed


@pytest.mark.parametrize("annotated", [
    "not json", "[]", '{"plan": {"goals": []}, "final_risk": "LOW", "steps": []}',
    '{"plan": {"goals": [7]}, "final_risk": "LOW", "steps": []}',
    '{"plan": {"goals": ["x"]}, "final_risk": "SEVERE", "steps": []}'])
def test_an_altered_annotation_is_listed_as_altered(tmp_path: Path, annotated: str) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    try:
        fill(journal, 1, uid=0)
        db = sqlite3.connect(tmp_path / "journal.sqlite3")
        with db:
            db.execute("UPDATE plans SET annotated_json=?", (annotated,))
        db.close()
        (row,) = journal.list_summaries()
        quick = summary_of(row)
        assert quick.final_risk == "HIGH" and "altered" in quick.title
        assert quick == plan_summary(journal.list_plans()[0])  # as the parsed path says
    finally:
        journal.close()


def test_a_summary_says_what_the_parsed_annotation_says(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    try:
        fill(journal, 3, uid=0)
        rows = journal.list_plans()
        assert [summary_of(r) for r in journal.list_summaries()] == [plan_summary(r)
                                                                     for r in rows]
    finally:
        journal.close()
