"""Answers kept compactly (annad/journal/compact.py): an ``answered`` plan's row keeps no
second copy of its plan, yet shows, lists and verifies as before; an edit of what it keeps
still breaks its seal; a version 2 journal (full answer rows) opens as version 3 and reads
both forms.

Real journals (SQLite files) and, for the end-to-end test, the real daemon and its client.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from anna_common.levels import canonical_json
from anna_common.plan import ActionPlan
from anna_common.protocol.models import PlanStatus
from annad.journal import compact
from annad.journal.rows import PlanRow
from annad.journal.store import SCHEMA_VERSION, Journal
from tests.daemonfix import RunningDaemon, make_plan

NOTES = "sshd läuft nicht — “inactive” ✓"


def _answer(name: str, *, notes: str = NOTES, status: PlanStatus = PlanStatus.ANSWERED
            ) -> PlanRow:
    plan = {"goals": ["is ssh running?"], "notes_for_user": notes, "command_plan": []}
    annotated = json.dumps({"plan": plan, "digest": "0" * 64, "steps": [],
                            "final_risk": "INFO"}, ensure_ascii=False)
    now = time.time()
    return PlanRow(plan_id=name, digest="ab" * 32, status=status, created_at=now,
                   updated_at=now, caller_uid=0, source="template", request="is ssh running?",
                   home="/tmp", plan_json=canonical_json(plan).decode("utf-8"),
                   annotated_json=annotated, error=None)


def _stored(path: Path, name: str) -> str:
    db = sqlite3.connect(path)
    try:
        return str(db.execute("SELECT plan_json FROM plans WHERE plan_id=?",
                              (name,)).fetchone()[0])
    finally:
        db.close()


def test_an_answer_keeps_one_copy_of_its_plan(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    journal = Journal(path)
    try:
        answer, plan = _answer("answer-1"), _answer("b", status=PlanStatus.SUBMITTED)
        journal.add_plan(answer, [])
        journal.add_plan(plan, ["s"])
        # the answer's copy is dropped; a plan that may run keeps both
        assert _stored(path, "answer-1") == "" and _stored(path, "b") == plan.plan_json
        assert journal.get_plan("answer-1") == answer  # read back byte for byte
        assert journal.verify().ok
        odd = _answer("c")  # an annotation whose plan is not the row's: kept in full
        odd = PlanRow(**{**{f: getattr(odd, f) for f in odd.__slots__},
                         "plan_json": '{"goals":["other"]}'})
        journal.add_plan(odd, [])
        assert _stored(path, "c") == '{"goals":["other"]}'
    finally:
        journal.close()
    db = sqlite3.connect(path)  # edit the one text the answer keeps
    with db:
        db.execute("UPDATE plans SET annotated_json=replace(annotated_json, 'nicht', 'doch') "
                   "WHERE plan_id='answer-1'")
    db.close()
    journal = Journal(path)
    try:
        report = journal.verify()
        assert not report.ok and "answer-1" in report.message, report.message
    finally:
        journal.close()


def test_a_version_2_journal_opens_and_reads_both_forms(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    journal = Journal(path)
    old = _answer("old")
    journal.add_plan(old, [])
    journal.close()
    db = sqlite3.connect(path)  # as version 2 wrote it: the answer's plan in full
    with db:
        db.execute("UPDATE plans SET plan_json=? WHERE plan_id='old'", (old.plan_json,))
        db.execute("PRAGMA user_version=2")
    db.close()
    journal = Journal(path)
    try:
        assert journal._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
        assert _stored(path, "old") == old.plan_json  # left as it was
        assert journal.get_plan("old") == old
        new = _answer("new", notes="second")
        journal.add_plan(new, [])
        assert _stored(path, "new") == "" and journal.get_plan("new") == new
        assert journal.verify().ok
    finally:
        journal.close()


def test_plan_of_an_annotation_that_is_not_a_plan_is_empty() -> None:
    for text in ("", "[]", "{}", '{"plan": NaN}', "not json"):
        assert compact.plan_of(text) == ""


def test_an_answer_through_the_daemon(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    plan = make_plan([], checks=[("look", "cat ~/.config/app.conf")], goal="is ssh running?")
    plan["notes_for_user"] = NOTES
    (user_daemon.home / ".config" / "app.conf").write_text("x\n")
    answered = client.submit(ActionPlan.model_validate(plan), request="is ssh running?",
                             source="template")
    assert answered.status == "answered"
    client.run_checks(answered.plan_id)
    ran = client.submit(ActionPlan.model_validate(make_plan([("s", "true", "INFO")])),
                        request="true")
    assert _stored(user_daemon.state / "journal.sqlite3", answered.plan_id) == ""
    assert _stored(user_daemon.state / "journal.sqlite3", ran.plan_id) != ""
    record = client.get_plan(answered.plan_id)
    assert record.status == "answered" and record.digest == answered.digest
    assert record.annotated == answered.annotated
    assert record.annotated.plan.notes_for_user == NOTES
    listed = {p.plan_id: p for p in client.list_plans(limit=0).plans}
    assert answered.plan_id in listed and ran.plan_id in listed
    report = client.audit_verify()
    assert report.ok, report.message


def test_packed_seals_still_tell_a_digest_in_capitals(tmp_path: Path) -> None:
    # audit verify keeps each seal's sha256 values as bytes (annad/journal/integrity.py); a
    # hex text that differs only in case must not pack to the same bytes and pass
    path = tmp_path / "journal.sqlite3"
    journal = Journal(path)
    try:
        journal.add_plan(_answer("upper-1"), [])
        assert journal.verify().ok
    finally:
        journal.close()
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE plans SET digest=upper(digest) WHERE plan_id='upper-1'")
    db.close()
    journal = Journal(path)
    try:
        report = journal.verify()
        assert not report.ok and "digest" in report.message, report.message
    finally:
        journal.close()
