"""A plan stored only to run its checks (``POST /v1/plans?preview=false``, issue 38 item 2).

The planner stores a request's plan to run its checks, then submits the refined plan that
revises it: that one is shown, so the first is not previewed (two overlay runs a request
saved). Against the real daemon: such content is not previewed, its checks run, and it never
executes — not even once a preview was asked for afterwards (a preview made after submit
cannot raise the sealed tier) — until a submit revises it with its preview.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from anna_common.errors import ErrorCode
from annactl.core.daemon_client import DaemonClient
from tests.daemon.test_revision import plan, refused
from tests.daemonfix import RunningDaemon, http, make_plan
from tests.waiting import WAIT_S

EDIT = "sed -i s/volume=3/volume=5/ ~/.config/app.conf"


def _previewed(daemon: RunningDaemon, plan_id: str) -> list[dict[str, object]]:
    """The bodies of the plan's ``plan_previewed`` events, in chain order."""
    with sqlite3.connect(daemon.state / "journal.sqlite3", timeout=WAIT_S) as db:
        rows = db.execute("SELECT body FROM events WHERE plan_id=? AND kind='plan_previewed' "
                          "ORDER BY id", (plan_id,)).fetchall()
    return [json.loads(body) for (body,) in rows]


def _execute(client: DaemonClient, plan_id: str, digest: str) -> str:
    finished = list(client.execute(plan_id, digest, confirmed=True, high_confirmed=False))
    return str(finished[-1].status)


@pytest.mark.shared_daemon
def test_a_plan_stored_for_its_checks_runs_them_and_nothing_else(
        user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    conf = user_daemon.home / ".config" / "app.conf"
    conf.write_text("volume=3\n")
    stored = client.submit(plan(EDIT), request="set the volume", preview=False)
    assert stored.preview is None
    assert _previewed(user_daemon, stored.plan_id) == [{"checks_only": True, "preview": None}]
    looked = client.run_checks(stored.plan_id).results
    assert looked[0].ran and looked[0].output == "volume=3\n", looked
    refused(lambda: client.execute(stored.plan_id, stored.digest, confirmed=True,
                                   high_confirmed=False), ErrorCode.PLAN_STATE)
    # a preview asked for afterwards is made and shown; the content still does not execute
    shown = client.preview(stored.plan_id)
    assert [f.path for f in shown.steps[0].files] == [str(conf)], shown
    assert _previewed(user_daemon, stored.plan_id)[-1]["checks_only"] is True
    refused(lambda: client.execute(stored.plan_id, stored.digest, confirmed=True,
                                   high_confirmed=False), ErrorCode.PLAN_STATE)
    assert conf.read_text() == "volume=3\n"
    # the same content submitted again in its place is previewed, and that executes
    again = client.submit(plan(EDIT), request="set the volume", revises=stored.plan_id)
    assert again.plan_id == stored.plan_id and again.preview is not None
    assert "checks_only" not in _previewed(user_daemon, stored.plan_id)[-1]
    assert _execute(client, again.plan_id, again.digest) == "succeeded"
    assert conf.read_text() == "volume=5\n"
    assert client.audit_verify().ok


@pytest.mark.shared_daemon
def test_a_revision_stored_for_its_checks_does_not_execute(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    first = client.submit(plan("echo a > ~/a.txt"), request="write")
    assert first.preview is not None
    second = client.submit(plan("echo b > ~/b.txt"), request="write", revises=first.plan_id,
                           preview=False)
    assert second.plan_id == first.plan_id and second.preview is None
    refused(lambda: client.execute(second.plan_id, second.digest, confirmed=True,
                                   high_confirmed=False), ErrorCode.PLAN_STATE)
    refused(lambda: client.execute(first.plan_id, first.digest, confirmed=True,
                                   high_confirmed=False), ErrorCode.DIGEST_MISMATCH)
    assert not (user_daemon.home / "a.txt").exists()
    assert not (user_daemon.home / "b.txt").exists()
    assert client.audit_verify().ok


def test_a_preview_flag_that_is_not_a_boolean_is_a_coded_400(
        user_daemon: RunningDaemon) -> None:
    status, body = http(user_daemon.socket, "POST", "/v1/plans?preview=maybe",
                        {"plan": make_plan([("s", "true", "LOW")])})
    assert status == 400 and body["code"] == "BAD_REQUEST", (status, body)
