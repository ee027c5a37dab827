"""A live step whose state Anna records none of is never reported ``rolled_back`` on its
rollback command's exit status (issue 19, item 5: "never claim what you did not check").

Found on main at c2dd0e3, on a real per-user daemon: a live step (``kill -CONT $$``, a
signal: nothing Anna records can put a signal back) with a rollback command that exits 0 was
rolled back as ``rolled_back`` with one undo result ``rollback_command ok``; with no rollback
command at all, the step left no undo record and the rollback said ``rolled_back`` too.
Now such a step's undo carries an ``unverified`` result and the rollback ends
``rollback_unverified`` (or ``rollback_failed`` when nothing undid it).

The steps signal only their own shell: nothing outside the test is touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from anna_common.plan import ActionPlan
from anna_common.protocol.models import PlanRecord, RollbackResponse
from anna_common.risk import tiers
from annactl.core.exit_codes import ExitStatus, exit_status_for_plan
from tests.daemonfix import make_plan

if TYPE_CHECKING:
    from annactl.core.daemon_client import DaemonClient
    from tests.daemonfix import RunningDaemon

LIVE = "kill -CONT $$"
"""A live program (a signal), to the step's own shell: changes nothing anyone looks at."""


def _run(client: DaemonClient, steps: list[tuple[str, str, str]],
         rollback: dict[str, str]) -> tuple[str, str, object]:
    response = client.submit(ActionPlan.model_validate(make_plan(steps, rollback=rollback)))
    annotated = response.annotated
    high = annotated.final_risk == "HIGH"
    events = list(client.execute(response.plan_id, response.digest, confirmed=True,
                                 high_confirmed=high,
                                 confirm_word=tiers.plan_word(annotated) if high else None))
    return response.plan_id, str(events[-1].status), annotated


def _roll_back(client: DaemonClient, plan_id: str, annotated: object) -> RollbackResponse:
    return client.rollback(plan_id, confirm_word=tiers.rollback_word(annotated))  # type: ignore[arg-type]


@pytest.mark.shared_daemon
def test_a_live_step_undone_by_its_rollback_command_is_unverified(
        user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    plan_id, status, annotated = _run(client, [("sig", LIVE, "LOW")], {"sig": LIVE})
    assert status == "succeeded"
    result = _roll_back(client, plan_id, annotated)
    assert result.status == "rollback_unverified", result
    actions = {u.action: u for u in result.undo}
    assert actions["rollback_command"].ok
    unverified = actions["unverified"]
    assert unverified.ok and unverified.target == "kill", unverified
    assert "not verified" in unverified.message
    record = client.get_plan(plan_id)
    assert record.status == "rollback_unverified"
    assert record.error is not None and record.error.code == "ROLLBACK_UNVERIFIED"
    assert record.error.detail["unverified"] == ["sig"]
    assert exit_status_for_plan(record.status, after_rollback=True) == \
        ExitStatus.ROLLBACK_UNVERIFIED


@pytest.mark.shared_daemon
def test_a_live_step_with_no_rollback_command_is_not_undone(
        user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    plan_id, status, annotated = _run(client, [("sig", LIVE, "LOW")], {})
    assert status == "succeeded"
    result = _roll_back(client, plan_id, annotated)
    assert result.status == "rollback_failed", result
    (only,) = [u for u in result.undo if u.action == "unverified"]
    assert not only.ok and "not undone" in only.message, only


@pytest.mark.shared_daemon
def test_a_failed_plan_says_which_live_step_was_undone_unchecked(
        user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    plan_id, status, _ = _run(client, [("sig", LIVE, "LOW"), ("boom", "false", "LOW")],
                              {"sig": LIVE})
    assert status == "failed"
    record: PlanRecord = client.get_plan(plan_id)
    assert record.error is not None
    assert record.error.detail["undo_ok"] is True
    assert record.error.detail["unverified"] == ["sig"]


@pytest.mark.shared_daemon
def test_a_signal_zero_changes_nothing_and_is_rolled_back(user_daemon: RunningDaemon) -> None:
    """``kill -0`` sends no signal: nothing to check, so nothing unverified."""
    client = user_daemon.client()
    plan_id, status, annotated = _run(client, [("probe", "kill -0 $$", "LOW")],
                                      {"probe": "kill -0 $$"})
    assert status == "succeeded"
    result = _roll_back(client, plan_id, annotated)
    assert result.status == "rolled_back", result
    assert not any(u.action == "unverified" for u in result.undo)
