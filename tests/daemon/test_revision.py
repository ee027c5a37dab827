"""One stored plan per request (issue 22 item 7): a refined plan revises the stored one.

Against the real daemon: the revision keeps the id and the checks' rounds as events of the
one plan, gets its own digest and seal, and only that digest executes; what may not be
revised (a plan that ran, a dry run, an unknown or shortened id, a banned revision) is
refused with a code and leaves the stored plan as it was; an edit of the revised row
breaks the chain like any other.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import ActionPlan
from annactl.core.daemon_client import DaemonClient
from tests.daemonfix import RunningDaemon, make_plan
from tests.waiting import WAIT_S


def plan(command: str, *, check: str | None = "cat ~/.config/app.conf") -> ActionPlan:
    checks = [("look", check)] if check else None
    return ActionPlan.model_validate(make_plan([("edit", command, "LOW")], checks=checks))


def refused(call: Any, code: ErrorCode) -> AnnaError:
    try:
        result = call()
        if hasattr(result, "__next__"):
            list(result)
    except AnnaError as exc:
        assert exc.code is code, (exc.code, exc.message)
        return exc
    raise AssertionError(f"expected {code}")


def events(daemon: RunningDaemon, plan_id: str) -> list[tuple[str, str]]:
    """(kind, body) of the plan's journal events, in chain order."""
    with sqlite3.connect(daemon.state / "journal.sqlite3", timeout=WAIT_S) as db:
        return list(db.execute("SELECT kind, body FROM events WHERE plan_id=? ORDER BY id",
                               (plan_id,)))


def run(client: DaemonClient, plan_id: str, digest: str) -> str:
    finished = list(client.execute(plan_id, digest, confirmed=True, high_confirmed=False))
    return str(finished[-1].status)


@pytest.mark.shared_daemon
def test_a_revision_keeps_one_plan_and_only_its_digest_runs(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    conf = user_daemon.home / ".config" / "app.conf"
    conf.write_text("volume=3\n")
    before = {p.plan_id for p in client.list_plans(limit=0).plans}
    first = client.submit(plan("sed -i s/volume=3/volume=5/ ~/.config/app.conf"),
                          request="set the volume")
    client.run_checks(first.plan_id)
    second = client.submit(plan("sed -i s/volume=3/volume=9/ ~/.config/app.conf"),
                           request="set the volume", revises=first.plan_id)
    client.run_checks(second.plan_id)
    assert second.plan_id == first.plan_id and second.digest != first.digest
    assert {p.plan_id for p in client.list_plans(limit=0).plans} - before == {first.plan_id}
    record = client.get_plan(first.plan_id)
    assert record.digest == second.digest and record.request == "set the volume"
    assert "volume=9" in record.annotated.steps[0].command
    kinds = [k for k, _ in events(user_daemon, first.plan_id)]
    assert kinds[0] == "plan_submitted" and kinds.count("plan_revised") == 1
    assert kinds.count("checks_run") == 2  # both rounds are events of the one plan
    assert kinds.index("checks_run") < kinds.index("plan_revised")
    bodies = [b for k, b in events(user_daemon, first.plan_id) if k == "checks_run"]
    assert first.digest in bodies[0] and second.digest in bodies[1]
    # the approval of what was shown before the revision does not run the revision
    refused(lambda: client.execute(first.plan_id, first.digest, confirmed=True,
                                   high_confirmed=False), ErrorCode.DIGEST_MISMATCH)
    assert conf.read_text() == "volume=3\n"
    assert client.audit_verify().ok
    assert run(client, first.plan_id, second.digest) == "succeeded"
    assert conf.read_text() == "volume=9\n"
    # a plan that ran is history: it is never revised
    refused(lambda: client.submit(plan("true"), revises=first.plan_id), ErrorCode.PLAN_STATE)
    assert client.audit_verify().ok


@pytest.mark.shared_daemon
def test_what_may_not_be_revised_is_refused_and_left_as_it_was(
        user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    stored = client.submit(plan("echo a > ~/a.txt"), request="write a")
    refused(lambda: client.submit(plan("echo b > ~/b.txt"), revises="20990101-000000-abcdef"),
            ErrorCode.PLAN_NOT_FOUND)
    # the short ids ``history`` shows name a plan to look at, never one to replace
    refused(lambda: client.submit(plan("echo b > ~/b.txt"), revises=stored.plan_id[-6:]),
            ErrorCode.PLAN_NOT_FOUND)
    refused(lambda: client.submit(plan("rm -rf --no-preserve-root /"), revises=stored.plan_id),
            ErrorCode.PLAN_BANNED)
    assert client.get_plan(stored.plan_id).digest == stored.digest
    assert "plan_revised" not in [k for k, _ in events(user_daemon, stored.plan_id)]
    client.mark_dry_run(stored.plan_id)
    refused(lambda: client.submit(plan("echo b > ~/b.txt"), revises=stored.plan_id),
            ErrorCode.PLAN_STATE)
    for bad in ("", 7, "x" * 300):
        status, body = _raw_submit(user_daemon, bad)
        assert status == 400 and body["code"] == "BAD_REQUEST", (bad, status, body)


def _raw_submit(daemon: RunningDaemon, revises: Any) -> tuple[int, Any]:
    from tests.daemonfix import http

    return http(daemon.socket, "POST", "/v1/plans",
                {"plan": make_plan([("s", "true", "LOW")]), "revises": revises})


def test_an_edited_revision_breaks_the_chain(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    first = client.submit(plan("echo one > ~/one.txt"), request="one")
    second = client.submit(plan("echo two > ~/two.txt"), request="one", revises=first.plan_id)
    assert client.audit_verify().ok
    # put the first revision's content back behind the daemon's back: the row matches the
    # first seal, no longer the last one, and nothing of it runs
    with sqlite3.connect(user_daemon.state / "journal.sqlite3", timeout=WAIT_S) as db:
        old = db.execute("SELECT body FROM events WHERE plan_id=? AND kind='plan_submitted'",
                         (first.plan_id,)).fetchone()
        assert old is not None
        db.execute("UPDATE plans SET digest=? WHERE plan_id=?", (first.digest, first.plan_id))
    report = client.audit_verify()
    assert not report.ok and first.plan_id in report.message
    refused(lambda: client.execute(first.plan_id, first.digest, confirmed=True,
                                   high_confirmed=False), ErrorCode.AUDIT_CHAIN_BROKEN)
    refused(lambda: client.execute(second.plan_id, second.digest, confirmed=True,
                                   high_confirmed=False), ErrorCode.AUDIT_CHAIN_BROKEN)
    assert not (user_daemon.home / "one.txt").exists()
    assert not (user_daemon.home / "two.txt").exists()
