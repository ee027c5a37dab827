"""Rich renderables for plans, risk badges, execution events and reports.

This module draws what happened to a plan (its record, result, undo and execution
tables); the plan itself is drawn by :mod:`annactl.ui.render_plan` and the streamed
execution by :mod:`annactl.ui.render_events`. Their names are re-exported here, so callers
keep one module to import (``from annactl.ui import render``).

Every string that came from the model, the daemon's journal or telemetry goes
through :mod:`annactl.ui.console` (``inert_text``) before it becomes a renderable:
no markup, escape sequence or control character from outside reaches the
terminal. Labels Anna writes itself are plain ``Text`` too, so nothing here is
ever parsed as markup.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from annactl.ui.console import inert_text
from annactl.ui.render_events import OutputLines, event_view, output_line
from annactl.ui.render_plan import (
    OUTPUT_TAIL_LINES,
    checks_table,
    command_text,
    notes_only,
    plan_view,
    policy_notes,
    risk_badge,
    rollback_label,
    step_table,
    summary_line,
    tail,
)
from annactl.ui.styles import RISK_STYLE, STATUS_STYLE

__all__ = ["OUTPUT_TAIL_LINES", "RISK_STYLE", "ROLLBACK_STATES", "OutputLines",
           "aftercare_lines", "checks_table", "command_text", "event_view", "execution_table",
           "notes_only", "output_line", "plan_view", "policy_notes", "record_view",
           "result_view", "risk_badge", "rollback_label", "rollback_offered", "status_text",
           "step_table", "summary_line", "tail", "undo_table"]

if TYPE_CHECKING:
    from anna_common.protocol.models import PlanRecord, UndoResult


def status_text(status: str) -> Text:
    """A plan or step state, coloured."""
    return Text(status, style=STATUS_STYLE.get(status, ""))


def undo_table(undo: list[UndoResult]) -> Table:
    """Each undo action and whether it worked."""
    table = Table(title="Rollback", title_justify="left", expand=True)
    for col in ("step", "action", "target", "ok", "message"):
        table.add_column(col, overflow="fold")
    for item in undo:
        table.add_row(inert_text(item.step_id, max_chars=60), inert_text(item.action),
                      inert_text(item.target, max_chars=200),
                      Text("yes", style="green") if item.ok else Text("no", style="bold red"),
                      inert_text(item.message, max_chars=300))
    return table


def aftercare_lines(record: PlanRecord) -> list[RenderableType]:
    """Verification, the lock-out guard and machine snapshots of a run, one line each."""
    lines: list[RenderableType] = []
    for item in record.verify:
        if item.status == "passed":
            continue
        style = "red" if item.status == "failed" else "yellow"
        lines.append(Text(f"verify {item.status}: ", style=style) + inert_text(
            f"{item.step_id}: {item.kind} {item.target}: expected {item.expected}, found "
            f"{item.found}", max_chars=400))
    passed = sum(1 for v in record.verify if v.status == "passed")
    if passed:
        lines.append(Text(f"verified: {passed} postcondition(s) hold", style="green"))
    guard = record.guard
    if guard is not None:
        lines.append(Text(f"lock-out guard {guard.state}: ", style="bold yellow") +
                     inert_text(guard.message or "; ".join(guard.reasons[:3]), max_chars=300))
    for snap in record.snapshots:
        line = Text(f"{snap.tool} snapshot {snap.pre or '?'}..{snap.post or '?'} ", style="dim")
        if snap.undo:
            line.append("(plan-level undo, reverts everything changed since: "
                        f"{snap.undo})", style="dim")
        lines.append(line)
    return lines


def result_view(record: PlanRecord) -> Group:
    """The outcome of a plan, with the rollback hint where one applies."""
    parts: list[RenderableType] = [Text("Result: ", style="bold") + status_text(record.status)]
    if record.error is not None:
        parts.append(Text(f"{record.error.code}: ", style="red") +
                     inert_text(record.error.message, max_chars=500))
    parts += aftercare_lines(record)
    if record.undo:
        parts.append(undo_table(record.undo))
    if record.status == "rollback_incomplete":  # the after-undo comparison's paths
        paths = [u.target for u in record.undo if u.action == "verify" and not u.ok]
        parts.append(Text("Rolled back, but not as it was before the plan: ", style="bold red")
                     + inert_text(", ".join(paths) or "see the undo results", max_chars=500))
    if record.status == "rollback_unverified" or (
            record.error is not None and record.error.detail.get("unverified")):
        # (here, not at the top: the light apply path reads no pydantic module)
        from anna_common.protocol.records import UNVERIFIED_ACTIONS

        steps = sorted({u.step_id for u in record.undo if u.ok and u.action in UNVERIFIED_ACTIONS})
        parts.append(Text("Not verified: Anna ran the rollback command for what these steps "
                          "changed on the running system, but cannot check it: ",
                          style="bold yellow") + inert_text(", ".join(steps) or "see the "
                                                            "undo results", max_chars=500))
    undone = bool(record.undo) and all(u.ok for u in record.undo)
    if record.status == "failed" and undone:
        parts.append(Text("A step failed; every change made was undone.", style="yellow"))
    elif rollback_offered(record):
        parts.append(Text(f"To undo it: annactl rollback {record.plan_id}", style="dim"))
    elif record.status == "dry_run":
        parts.append(Text(f"Nothing was run. To run it: annactl apply {record.plan_id}",
                          style="dim"))
    elif record.status in {"succeeded", "failed"}:
        parts.append(Text("Nothing was changed: no rollback needed.", style="dim"))
    return Group(*parts)


ROLLBACK_STATES = frozenset({"succeeded", "failed", "interrupted"})
"""Plan states a rollback may apply to (when a step that can change something ran)."""
_RAN = frozenset({"running", "succeeded", "failed", "undo_failed"})


def rollback_offered(record: PlanRecord) -> bool:
    """Whether rolling the plan back can undo anything: it is in a rollback state and a
    step that may change the machine ran (INFO steps run confined read-only)."""
    if str(record.status) not in ROLLBACK_STATES:
        return False
    if str(record.status) == "failed" and record.undo and all(u.ok for u in record.undo):
        return False
    risk = {s.id: str(s.final_risk) for s in record.annotated.steps}
    return any(str(s.status) in _RAN and risk.get(s.step_id, "HIGH") != "INFO"
               for s in record.steps)


def execution_table(record: PlanRecord) -> Table:
    """Each step's state, exit status and output tail, as the journal has them."""
    steps = Table(title="Execution", title_justify="left", expand=True)
    for col in ("#", "step", "status", "exit", "output"):
        steps.add_column(col, overflow="fold")
    for item in record.steps:
        steps.add_row(str(item.index + 1), inert_text(item.step_id, max_chars=60),
                      status_text(item.status), "" if item.exit_code is None else
                      str(item.exit_code), inert_text(tail(item.output, 3)))
    return steps


def record_view(record: PlanRecord) -> Group:
    """``annactl show``: the stored plan, per-step states and the outcome."""
    head = Text(f"plan {record.plan_id}  ", style="bold") + status_text(record.status)
    head.append(f"  created {_when(record.created_at)}  source {record.source}", style="dim")
    parts: list[RenderableType] = [head]
    if record.request:
        parts.append(Text("request: ", style="bold") + inert_text(record.request, max_chars=500))
    parts.append(plan_view(record.annotated))
    if record.steps:
        parts.append(execution_table(record))
    parts.append(result_view(record))
    return Group(*parts)


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S") if ts else "-"
