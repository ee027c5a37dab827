"""One set of plan states, kept by the daemon: answered at submit, dry runs recorded, pages
of history, short ids; every change chained in the journal."""

from __future__ import annotations

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import ActionPlan
from tests.daemonfix import RunningDaemon, make_plan


def _submit(daemon: RunningDaemon, steps: list[tuple[str, str, str]], goal: str = "g") -> str:
    plan = ActionPlan.model_validate(make_plan(steps, goal=goal))
    return daemon.client().submit(plan, request=goal).plan_id


def test_states_answered_and_dry_run_are_journalled(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    answered = _submit(user_daemon, [])
    assert client.get_plan(answered).status == "answered"
    with pytest.raises(AnnaError) as info:  # nothing to run
        list(client.execute(answered, client.get_plan(answered).digest, confirmed=False,
                            high_confirmed=False))
    assert info.value.code is ErrorCode.PLAN_STATE
    shown = _submit(user_daemon, [("s", "uname -r", "INFO")])
    record = client.mark_dry_run(shown)
    assert record.status == "dry_run" and [s.status for s in record.steps] == ["skipped"]
    assert client.mark_dry_run(shown).status == "dry_run"  # idempotent
    assert client.mark_dry_run(answered).status == "answered"
    report = client.audit_verify()
    assert report.ok, report.message  # the status changes are chained like any other
    events = list(client.execute(shown, record.digest, confirmed=False, high_confirmed=False))
    assert events[-1].type == "plan_finished" and client.get_plan(shown).status == "succeeded"
    with pytest.raises(AnnaError) as info:
        client.mark_dry_run(shown)
    assert info.value.code is ErrorCode.PLAN_STATE
    assert client.audit_verify().ok


def test_pages_short_ids_and_ambiguity(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    ids = [_submit(user_daemon, [("s", "true", "INFO")], goal=f"p{i}") for i in range(5)]
    page = client.list_plans(limit=2)
    assert [p.plan_id for p in page.plans] == ids[::-1][:2] and page.more
    rest = client.list_plans(limit=0, before=page.plans[-1].plan_id[-6:])
    assert [p.plan_id for p in rest.plans] == ids[::-1][2:] and not rest.more
    assert client.get_plan(ids[2][-6:]).plan_id == ids[2]
    for bad in ("%", "_____", "zzzzzz", ids[0][:3]):  # LIKE wildcards are literal
        with pytest.raises(AnnaError) as info:
            client.get_plan(bad)
        assert info.value.code is ErrorCode.PLAN_NOT_FOUND
    with pytest.raises(AnnaError) as info:
        client.list_plans(limit=-1)
    assert info.value.code is ErrorCode.BAD_REQUEST


def test_a_short_id_that_ends_two_ids_is_ambiguous(tmp_path) -> None:
    from anna_common.protocol.models import PlanStatus
    from annad.journal.store import Journal, PlanRow

    journal = Journal(tmp_path / "journal.sqlite3")
    try:
        for i, plan_id in enumerate(("20260101-000000-aa1234", "20260101-000001-bb1234")):
            journal.add_plan(PlanRow(plan_id=plan_id, digest="d", status=PlanStatus.SUBMITTED,
                                     created_at=float(i), updated_at=float(i), caller_uid=1,
                                     source="model", request="r", home="/h", plan_json="{}",
                                     annotated_json="{}", error=None), [])
        assert len(journal.resolve_id("1234")) == 2
        assert journal.resolve_id("aa1234") == ["20260101-000000-aa1234"]
        assert journal.resolve_id("20260101-000001-bb1234") == ["20260101-000001-bb1234"]
        assert journal.resolve_id("%1234") == [] and journal.resolve_id("_a1234") == []
        assert [r.plan_id for r in journal.list_plans(1, uid=1)] == ["20260101-000001-bb1234"]
        assert journal.list_plans(None, uid=2) == []
        older = journal.list_plans(None, before="20260101-000001-bb1234")
        assert [r.plan_id for r in older] == ["20260101-000000-aa1234"]
    finally:
        journal.close()
