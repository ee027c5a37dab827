"""``rollback_unverified`` in annactl: its own words, colour, exit status and JSON code; the
result view names the steps whose undo nobody could check."""

from __future__ import annotations

import io

from rich.console import Console

from anna_common.annotate import annotate
from anna_common.plan import ActionPlan
from anna_common.protocol.models import ErrorBody, PlanRecord, StepRecord, UndoResult
from anna_common.risk.rules.base import AssessContext
from annactl.core.exit_codes import ExitStatus, exit_status_for_plan
from annactl.core.plainwords import STATE_WORDS
from annactl.core.wire import Wire
from annactl.ui.jsonedge import code_for_status
from annactl.ui.render import result_view
from annactl.ui.styles import STATUS_STYLE
from tests.daemonfix import make_plan


def _record(status: str, undo: list[UndoResult], error: ErrorBody | None) -> PlanRecord:
    plan = ActionPlan.model_validate(make_plan([("net", "nmcli radio wifi off", "MEDIUM")],
                                               rollback={"net": "nmcli radio wifi on"}))
    annotated, _, _ = annotate(plan, AssessContext(home="/home/u"))
    return PlanRecord(plan_id="p-1", digest="d", status=status, created_at=0.0,
                      updated_at=0.0, caller_uid=0, source="file", request="mtu",
                      annotated=annotated, error=error, undo=undo,
                      steps=[StepRecord(step_id="net", index=0, status="undone", exit_code=0)])


def _text(record: PlanRecord) -> str:
    """The result view of ``record``, which must read the same from the light apply path's
    view of the daemon's JSON (annactl.core.wire) as from the model: an error's free-form
    ``detail`` once raised ShapeError there ("internal error: ShapeError: get")."""
    buffer = io.StringIO()
    Console(file=buffer, width=200, color_system=None).print(result_view(record))
    light = io.StringIO()
    Console(file=light, width=200, color_system=None).print(
        result_view(Wire(record.model_dump(mode="json"))))  # type: ignore[arg-type]
    assert light.getvalue() == buffer.getvalue()
    return buffer.getvalue()


UNDO = [UndoResult(step_id="net", action="rollback_command", target="nmcli radio wifi on",
                   ok=True, message="exit 0"),
        UndoResult(step_id="net", action="unverified", target="nmcli", ok=True,
                   message="Anna ran the rollback command … the undo is not verified")]


def test_the_result_names_the_steps_whose_undo_is_not_verified() -> None:
    error = ErrorBody(code="ROLLBACK_UNVERIFIED", message="not checked: net",
                      detail={"unverified": ["net"]})
    shown = _text(_record("rollback_unverified", UNDO, error))
    assert "Not verified" in shown and "net" in shown.split("Not verified", 1)[1]
    assert "rolled_back" not in shown


def test_a_failed_plan_undone_unchecked_says_so_too() -> None:
    error = ErrorBody(code="EXECUTION_FAILED", message="step boom failed",
                      detail={"undo_ok": True, "unverified": ["net"]})
    assert "Not verified" in _text(_record("failed", UNDO, error))


def test_a_verified_rollback_says_nothing_of_the_kind() -> None:
    restore = [UndoResult(step_id="net", action="restore", target="/etc/x", ok=True)]
    assert "Not verified" not in _text(_record("rolled_back", restore, None))


def test_the_state_has_its_words_colour_exit_status_and_code() -> None:
    assert "could not check" in STATE_WORDS["rollback_unverified"]
    assert "rollback_unverified" in STATUS_STYLE
    assert exit_status_for_plan("rollback_unverified", after_rollback=True) == \
        ExitStatus.ROLLBACK_UNVERIFIED != ExitStatus.SUCCESS
    assert code_for_status("rollback_unverified", after_rollback=True) == \
        "ROLLBACK_UNVERIFIED"


def test_the_plan_view_says_a_live_steps_undo_is_unverified_before_approval() -> None:
    """The daemon marks the step (annad.execution.runs_live.mark_live); the plan view the
    person approves from prints its words under the steps."""
    from annactl.ui.render_plan import plan_view
    from annad.execution.runs_live import mark_live

    plan = ActionPlan.model_validate(make_plan(
        [("net", "nmcli connection up office", "MEDIUM"), ("f", "touch ~/x", "LOW")],
        rollback={"net": "nmcli connection down office"}))
    annotated, _, _ = annotate(plan, AssessContext(home="/home/u"))
    marked = mark_live(annotated, None)
    buffer = io.StringIO()
    Console(file=buffer, width=200, color_system=None).print(plan_view(marked))
    shown = buffer.getvalue()
    assert "step 1: Anna cannot check this step's undo: nmcli acts on the running system" in shown
    assert "step 2:" not in shown  # a captured file step is checked
