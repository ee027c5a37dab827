"""Issue 8, class 4: the journal keeps "Anna cannot back this up" for interpreter writes."""

from __future__ import annotations

from anna_common.plan import ActionPlan
from tests.daemonfix import RunningDaemon, make_plan


def test_journal_keeps_the_uncaptured_write_reason(user_daemon: RunningDaemon) -> None:
    command = "python3 -c 'open(\"/tmp/anna-never-run\", \"w\").write(\"x\")'"
    plan = ActionPlan.model_validate(make_plan([("py", command, "LOW")]))
    submitted = user_daemon.client().submit(plan, request="write with python")
    step = submitted.annotated.steps[0]
    assert step.final_risk == "HIGH" and "uncaptured_write" in step.codes
    record = user_daemon.client().get_plan(submitted.plan_id)  # read back from the journal
    stored = record.annotated.steps[0]
    assert "uncaptured_write" in stored.codes
    assert any("Anna cannot back this up" in reason for reason in stored.reasons)
