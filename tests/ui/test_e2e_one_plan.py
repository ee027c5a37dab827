"""Issues 22.7 / 23.8: one request through the real annactl and the real daemon leaves one
plan in ``annactl history`` — a question whose template's checks ran first, and a request the
model answered after rounds of checks (each round revises the plan stored for its checks)."""

from __future__ import annotations

import json
import sqlite3

from tests.daemonfix import make_plan
from tests.planner.conftest import make_telemetry
from tests.waiting import WAIT_S

from .conftest import Anna


def _history(anna: Anna) -> list[tuple[str, str]]:
    code, history = anna.json("history")
    assert code == 0, history
    return [(p["plan_id"], p["status"]) for p in history["plans"]]


def _events(anna: Anna, plan_id: str) -> list[str]:
    with sqlite3.connect(anna.daemon.state / "journal.sqlite3", timeout=WAIT_S) as db:
        return [k for (k,) in db.execute("SELECT kind FROM events WHERE plan_id=? ORDER BY id",
                                         (plan_id,))]


def test_a_question_with_template_checks_leaves_one_plan(anna: Anna) -> None:
    snapshot = make_telemetry()
    snapshot.disks[0].mountpoint = str(anna.daemon.home)
    telemetry = anna.work / "telemetry.json"
    telemetry.write_text(snapshot.model_dump_json())
    anna.llm.push(json.dumps({"answer": "The biggest directories are listed.",
                              "citations": []}))
    code, planned = anna.json("plan", "--telemetry-file", str(telemetry),
                              "why is my disk so full lately")
    assert code == 0, planned
    assert planned["plan"]["meta"].get("template_used") in (None, "")  # the model answered
    assert _history(anna) == [(planned["plan_id"], "answered")]
    assert "biggest_dirs" in anna.llm.chat_bodies()[0]["messages"][1]["content"]
    kinds = _events(anna, planned["plan_id"])
    # the template's checks ran on the plan that the model's answer then revised
    assert kinds.count("checks_run") == 1 and kinds.count("plan_revised") == 1, kinds


def test_a_model_plan_after_check_rounds_leaves_one_plan(anna: Anna) -> None:
    target = anna.work / "note.txt"
    target.write_text("original\n")
    step = [("write", f"echo changed > {target}", "LOW")]
    anna.llm.push(json.dumps(make_plan(step, checks=[("peek", f"cat {target}")])),
                  json.dumps(make_plan(step, checks=[("peek", f"wc -c {target}")])),
                  json.dumps(make_plan(step)))
    code, planned = anna.json("plan", "--no-templates", "change the note")
    assert code == 0, planned
    assert planned["model_calls"] == 3
    assert _history(anna) == [(planned["plan_id"], "submitted")]
    kinds = _events(anna, planned["plan_id"])
    assert kinds.count("checks_run") == 2 and kinds.count("plan_revised") == 2, kinds
    # the one plan is the one offered: its digest is the one approved
    code, applied = anna.json("apply", planned["plan_id"], "--yes")
    assert code == 0 and applied["status"] == "succeeded", applied
    assert target.read_text() == "changed\n"
