"""The model's evaluation checked against the journal record (annactl/planning/evalclaims.py):
false claims about what ran are caught, true ones (in many phrasings) are not, and Anna's own
evaluation never contradicts the record it was made from."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from anna_common.protocol.models import ErrorBody, PlanRecord, StepRecord, UndoResult
from annactl.planning.evalclaims import check_evaluation
from annactl.planning.evaluate import EvaluationOutcome, own_evaluation
from annactl.planning.evaluation_model import Evaluation, GoalVerdict
from annactl.ui.render_evaluation import evaluation_view
from tests.ui.plans import annotate_dict, plan_dict


def _record(status: str) -> PlanRecord:
    """mark ran (exit 0); copy ran and failed with exit 1 unless the plan succeeded; when the
    plan was rolled back, mark's change was undone."""
    annotated = annotate_dict(plan_dict([("mark", "echo hi > /tmp/anna-ec/a", "LOW"),
                                         ("copy", "cp /tmp/anna-ec/x /tmp/anna-ec/y", "LOW")],
                                        goal="Copy the file"))
    ok = status == "succeeded"
    undone = status == "rolled_back"
    return PlanRecord(
        plan_id="p1", digest=annotated.digest, status=status, created_at=1.0, updated_at=2.0,
        caller_uid=1000, source="model", request="copy the file", annotated=annotated,
        steps=[StepRecord(step_id="mark", index=0, status="undone" if undone else "succeeded",
                          exit_code=0, output="ok"),
               StepRecord(step_id="copy", index=1, status="succeeded" if ok else "failed",
                          exit_code=0 if ok else 1, output="" if ok else "cp: cannot stat")],
        undo=[UndoResult(step_id="mark", action="restore", target="/tmp/anna-ec/a", ok=True)]
        if undone else [],
        error=None if ok else ErrorBody(code="EXECUTION_FAILED", message="step copy failed"))


def _evaluation(summary: str, why: str = "") -> Evaluation:
    return Evaluation(goals_met=False, goals=[GoalVerdict(goal="Copy the file", met=False,
                                                          why=why)],
                      summary=summary, suggestion="")


FALSE_CLAIMS = [
    ("rolled_back", "The plan was not executed.", "not_run"),
    ("rolled_back", "Nothing was run because the source file is missing.", "not_run"),
    ("failed", "The steps weren't executed", "not_run"),
    ("rolled_back", "No steps were executed", "not_run"),
    ("failed", "Step copy did not run.", "not_run"),
    ("failed", "step 2 was never executed", "not_run"),
    ("rolled_back", "The mark step was not carried out", "not_run"),
    ("failed", "All steps succeeded.", "succeeded"),
    ("rolled_back", "Every step completed successfully", "succeeded"),
    ("failed", "copy worked", "succeeded"),
    ("failed", "The plan went well", "succeeded"),
    ("failed", "copy exited with code 2", "exit_code"),
    ("failed", "The command returned exit status 127: command not found", "exit_code"),
    ("failed", "Step 2 failed with exit code 3.", "exit_code"),
    ("rolled_back", "The changes were not rolled back", "rolled_back"),
    ("failed", "Its changes were rolled back", "rolled_back"),
    ("succeeded", "The original file was restored", "rolled_back"),
]


@pytest.mark.parametrize(("status", "summary", "fact"), FALSE_CLAIMS)
def test_false_claims_about_the_run_are_caught(status: str, summary: str, fact: str) -> None:
    found = check_evaluation(_evaluation(summary), _record(status))
    assert [c.fact for c in found] == [fact], found
    assert found[0].where == "summary"
    assert found[0].journal and found[0].claim


def test_claims_in_a_goals_reason_are_checked_too() -> None:
    found = check_evaluation(_evaluation("ok", why="copy was not executed"),
                             _record("failed"))
    assert [(c.fact, c.where) for c in found] == [("not_run", "goals[0].why")]


TRUE_CLAIMS = [
    ("failed", "The plan was not executed successfully: copy failed with exit code 1."),
    ("failed", "copy did not succeed"),
    ("failed", "copy wasn't successful, the source does not exist"),
    ("failed", "mark ran successfully, but copy failed with exit code 1"),
    ("rolled_back", "The changes were rolled back after step copy failed."),
    ("rolled_back", "Step copy exited 1; mark was undone."),
    ("rolled_back", "The plan did not succeed and the note was restored."),
    ("failed", "The plan completed with errors"),
    ("failed", "The new configuration was not applied."),
    ("failed", "Not all steps succeeded."),
    ("succeeded", "All steps succeeded with exit code 0."),
    ("succeeded", "The plan worked; nothing was rolled back."),
    ("succeeded", "Both steps exited 0"),
    ("refused", "The plan was not executed: another plan was running."),
]


@pytest.mark.parametrize(("status", "summary"), TRUE_CLAIMS)
def test_true_claims_are_not_flagged(status: str, summary: str) -> None:
    record = _record(status)
    if status == "refused":  # never ran: no exit codes
        record = record.model_copy(update={"steps": [
            s.model_copy(update={"exit_code": None, "status": "pending"}) for s in record.steps]})
    assert check_evaluation(_evaluation(summary), record) == []


@pytest.mark.parametrize("status", ["succeeded", "failed", "rolled_back"])
def test_annas_own_evaluation_never_contradicts_its_record(status: str) -> None:
    record = _record(status)
    assert check_evaluation(own_evaluation(record), record) == []


def test_contradictions_are_shown_inert_and_in_json() -> None:
    record = _record("rolled_back")
    evaluation = _evaluation("[bold]The plan was not executed[/bold]\x1b[31m.")
    found = check_evaluation(evaluation, record)
    outcome = EvaluationOutcome(evaluation, source="model", status="rolled_back", plan_id="p1",
                                contradictions=found)
    console = Console(file=io.StringIO(), force_terminal=True, width=240, record=True)
    console.print(evaluation_view(outcome))
    raw, text = console.file.getvalue(), console.export_text()  # type: ignore[attr-defined]
    assert "not true here: not_run" in text and "step mark ran, exit code 0" in text
    assert "contradict the daemon's journal" in text and "annactl show p1" in text
    assert "\x1b[31m." not in raw and "[bold]The plan" in text
    assert outcome.to_dict()["contradictions"][0]["fact"] == "not_run"


def test_ordinals_name_steps_and_unnamed_steps_are_not_guessed() -> None:
    record = _record("failed")
    found = check_evaluation(_evaluation("The second step was not executed."), record)
    assert [c.fact for c in found] == ["not_run"] and "step copy ran" in found[0].journal
    found = check_evaluation(_evaluation("The last command exited with code 4"), record)
    assert [c.fact for c in found] == ["exit_code"]
    # "the second did not run" names no step Anna can tell: not a claim about the plan
    assert check_evaluation(_evaluation("The first ran, the second did not run"), record) == []
