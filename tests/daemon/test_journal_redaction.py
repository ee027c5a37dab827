"""The daemon journals a plan's request text redacted (seed 001: stored texts are redacted)."""

from __future__ import annotations

import sqlite3

import pytest

from anna_common.plan import ActionPlan
from tests.daemonfix import RunningDaemon, make_plan

SECRET = "Zq8-very-secret"


@pytest.mark.shared_daemon
@pytest.mark.parametrize("request_text", [
    f"log in to mysql with password={SECRET} and list users",
    f"curl -H 'Authorization: Bearer {SECRET}' the api",
    f"use --password '{SECRET}' for the backup",
])
def test_request_text_is_redacted_before_the_journal(user_daemon: RunningDaemon,
                                                      request_text: str) -> None:
    plan = ActionPlan.model_validate(make_plan([("look", "true", "INFO")]))
    submitted = user_daemon.client().submit(plan, request=request_text)
    record = user_daemon.client().get_plan(submitted.plan_id)
    assert SECRET not in record.request and "***" in record.request
    with sqlite3.connect(user_daemon.state / "journal.sqlite3") as db:
        rows = db.execute("SELECT request FROM plans WHERE plan_id = ?",
                          (submitted.plan_id,)).fetchall()
        dump = "\n".join(db.iterdump())
    assert rows and SECRET not in rows[0][0]
    assert SECRET not in dump
