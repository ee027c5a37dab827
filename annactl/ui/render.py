"""Rich renderables for plans, risk badges, execution events and reports.

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

from annactl.ui.console import inert, inert_text
from annactl.ui.styles import RISK_STYLE, STATUS_STYLE

if TYPE_CHECKING:
    from collections.abc import Sequence

    from anna_common.findings import AnnotatedPlan, AnnotatedStep, Finding
    from anna_common.protocol import CheckResult, ExecEvent, PlanRecord, UndoResult
    from anna_common.telemetry import Telemetry
    from annactl.planning.facts import Contradiction

OUTPUT_TAIL_LINES = 6
"""Lines of a step's output shown under its progress line."""


def risk_badge(level: str, *, banned: bool = False) -> Text:
    """A coloured ``RISK`` badge (plus ``BANNED`` when the command is hard-banned)."""
    badge = Text(f" {level} ", style=RISK_STYLE.get(str(level), "bold"))
    if banned:
        badge.append(" BANNED ", style="bold white on red")
    return badge


def command_text(command: str, *, max_chars: int = 600) -> RenderableType:
    """A command with shell highlighting (inert first: highlighting never interprets it)."""
    from rich.syntax import Syntax  # pygments: imported only when a command is shown

    code = inert(command, max_chars=max_chars)
    return Syntax(code, "bash", theme="ansi_dark", word_wrap=True, background_color="default")


def tail(text: str, lines: int = OUTPUT_TAIL_LINES, *, max_chars: int = 2000) -> str:
    """The last ``lines`` lines of untrusted output, made inert."""
    clean = inert(text).rstrip("\n")
    kept = "\n".join(clean.splitlines()[-lines:])
    return kept[-max_chars:]


def step_table(plan: AnnotatedPlan, *, title: str | None = "Steps") -> Table:
    """The steps: id, description, command, risk badge, scope, rollback."""
    table = Table(title=title, title_justify="left", expand=True, show_lines=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("id", overflow="fold", max_width=18)
    table.add_column("description", overflow="fold", ratio=2)
    table.add_column("command", overflow="fold", ratio=3)
    table.add_column("risk", no_wrap=True)
    table.add_column("scope", no_wrap=True)
    table.add_column("rollback", overflow="fold", max_width=14)
    for number, step in enumerate(plan.steps, start=1):
        table.add_row(str(number), inert_text(step.id, max_chars=60),
                      inert_text(step.description, max_chars=300), command_text(step.command),
                      risk_badge(step.final_risk, banned=step.banned), str(step.scope),
                      _rollback_cell(step, plan))
    return table


def _rollback_cell(step: AnnotatedStep, plan: AnnotatedPlan) -> Text:
    if step.rollback_id:
        return inert_text(step.rollback_id, "green", max_chars=40)
    if step.final_risk == "INFO":
        return Text("not needed", style="dim")
    if step.writes:
        return Text("snapshot", style="green")
    return Text("daemon" if plan.rollback_status != "none" else "none",
                style="yellow" if plan.rollback_status != "none" else "red")


def checks_table(plan: AnnotatedPlan, results: list[CheckResult] | None = None) -> Table:
    """The necessary checks and, when they ran, their exit codes and output."""
    outcome = {r.id: r for r in results or []}
    table = Table(title="Checks (read-only, run without asking)", title_justify="left",
                  expand=True)
    # only the long cells fold: a short id and the badge stay whole
    table.add_column("id", overflow="fold", max_width=18)
    table.add_column("command", overflow="fold", ratio=2)
    table.add_column("risk", no_wrap=True)
    table.add_column("result", overflow="fold", ratio=3)
    for check in plan.checks:
        result = outcome.get(check.id)
        if result is None:
            cell = Text("not run", style="dim")
        elif not result.ran:
            cell = Text("refused: ", style="red") + inert_text(result.reason or "", max_chars=200)
        else:
            cell = Text(f"exit {result.exit_code}\n",
                        style="green" if result.exit_code == 0 else "yellow")
            cell.append_text(inert_text(tail(result.output)))
        table.add_row(inert_text(check.id, max_chars=60), command_text(check.command),
                      risk_badge(check.final_risk, banned=check.banned), cell)
    return table


def rollback_label(plan: AnnotatedPlan) -> str:
    """``available``, ``partial`` or ``none``."""
    return str(plan.rollback_status)


def summary_line(plan: AnnotatedPlan) -> Text:
    """``Risk: <badge>  Steps: n  Rollback: …  Scope: …``."""
    line = Text("Risk: ")
    line.append_text(risk_badge(plan.final_risk, banned=plan.banned))
    line.append(f"  Steps: {len(plan.steps)}  Rollback: {rollback_label(plan)}"
                f"  Scope: {plan.scope}")
    return line


def plan_view(plan: AnnotatedPlan, *, checks: list[CheckResult] | None = None,
              warnings: list[Finding] | None = None, plan_id: str | None = None,
              contradictions: Sequence[Contradiction] = ()) -> Group:
    """The whole plan: goals, analysis, checks, steps, notes, summary; a claim the telemetry
    contradicts is flagged right under the text that makes it."""
    from annactl.ui.render_facts import confidence_line, contradiction_lines

    parts: list[RenderableType] = []
    goals = plan.plan.goals or ["(no goal given)"]
    parts.append(inert_text(goals[0], "bold", max_chars=200))
    for goal in goals[1:]:
        parts.append(Text("  • ") + inert_text(goal, max_chars=200))
    if plan_id:
        parts.append(Text(f"plan {plan_id}", style="dim"))
    if plan.plan.analysis.strip():
        parts.append(Text("Analysis: ", style="bold") + inert_text(plan.plan.analysis,
                                                                  max_chars=2000))
        parts.extend(contradiction_lines(contradictions, "analysis"))
    if plan.checks:
        parts.append(checks_table(plan, checks))
    if plan.steps:
        parts.append(step_table(plan))
        parts.extend(_uncaptured_notes(plan))
    parts.extend(policy_notes(plan))
    if plan.plan.notes_for_user.strip():
        parts.append(Text("Notes: ", style="bold") + inert_text(plan.plan.notes_for_user,
                                                               max_chars=4000))
        parts.extend(contradiction_lines(contradictions, "notes_for_user"))
    parts.extend(contradiction_lines(contradictions, "meta"))
    if (line := confidence_line(contradictions)) is not None:
        parts.append(line)
    for finding in warnings or []:
        parts.append(Text("note: ", style="yellow") + inert_text(finding.message, max_chars=300))
    if plan.steps:
        parts.append(summary_line(plan))
    return Group(*parts)


_POLICY_STYLE = {"deny": "bold red", "ask": "yellow", "allow": "green", "default": "dim"}


def policy_notes(plan: AnnotatedPlan) -> list[Text]:
    """One line per check, step or rollback command a policy rule decided: the action, the
    rule and where it is written (the daemon set these; rule text is an admin's, inert)."""
    lines: list[Text] = []
    for step in (*plan.checks, *plan.steps, *plan.rollback):
        mark = step.policy
        if mark is None:
            continue
        what = {"deny": "denied", "ask": "asks for a confirmation", "allow": "allowed",
                "default": "matched, no effect"}[mark.action]
        line = Text(f"policy: {step.kind} {step.id}: {what} by rule ",
                    style=_POLICY_STYLE[mark.action])
        line += inert_text(f"{mark.rule} ({mark.source})", max_chars=300)
        if mark.note:
            line += Text(" — ") + inert_text(mark.note, max_chars=300)
        lines.append(line)
    return lines


_UNCAPTURED = "uncaptured_write"  # Code.UNCAPTURED_WRITE: writes no snapshot can restore


def _uncaptured_notes(plan: AnnotatedPlan) -> list[Text]:
    """One red line per step whose writes Anna cannot back up, with the analyser's reason."""
    lines: list[Text] = []
    for number, step in enumerate(plan.steps, start=1):
        if _UNCAPTURED not in step.codes:
            continue
        index = step.codes.index(_UNCAPTURED)
        reason = next((r for r in step.reasons if "Anna cannot back this up" in r),
                      step.reasons[index] if index < len(step.reasons) else "")
        lines.append(Text(f"step {number}: ", style="bold red") + inert_text(reason,
                                                                             max_chars=300))
    return lines


def notes_only(plan: AnnotatedPlan, *, telemetry: Telemetry | None = None,
               contradictions: Sequence[Contradiction] = ()) -> Group:
    """A plan with no steps is an answer: its notes. With ``telemetry``, the machine's facts
    come from Anna (a table) and the model's prose stands beside them, flagged where the
    telemetry contradicts it."""
    from annactl.ui.render_facts import answer_view

    if plan.plan.notes_for_user.strip():
        prose = inert_text(plan.plan.notes_for_user, max_chars=8000)
    else:
        prose = inert_text(plan.plan.analysis or "(nothing to do)", max_chars=4000)
    if telemetry is None and not contradictions:
        return Group(prose)
    return answer_view(prose, telemetry, contradictions)


def _counter(event: ExecEvent) -> str:
    return f"[{event.index}/{event.total}] " if event.index and event.total else ""


def _step_started(event: ExecEvent) -> RenderableType | None:
    return Text(f"{_counter(event)}▶ ", style="cyan") + \
        Text(inert(event.step_id or "", max_chars=60), style="bold") + \
        Text(" " + inert(event.message, max_chars=200), style="dim")


def _step_finished(event: ExecEvent, *, with_output: bool = True) -> RenderableType | None:
    ok = event.status == "succeeded"
    line = Text(f"{_counter(event)}{'✔' if ok else '✘'} ", style="green" if ok else "red")
    line.append(inert(event.step_id or "", max_chars=60), style="bold")
    line.append(f"  exit {event.exit_code}" if event.exit_code is not None else "")
    if with_output and event.output.strip():
        return Group(line, Text(_indent(tail(event.output)), style="dim"))
    return line


def _step_output(event: ExecEvent) -> RenderableType | None:
    return Text(_indent(tail(event.output, 3)), style="dim") if event.output.strip() else None


def _undo(event: ExecEvent) -> RenderableType | None:
    step = inert(event.step_id or "", max_chars=60)
    if event.type == "undo_started":
        return Text("↶ undoing ", style="yellow") + Text(step)
    failed = event.status in {"undo_failed", "failed"}
    line = Text("↶ undo failed " if failed else "↶ undone ", style="bold red" if failed
                else "yellow") + Text(step)
    if event.message.strip():
        line.append(": " + inert(event.message, max_chars=200), style="dim")
    return line


def _error(event: ExecEvent) -> RenderableType | None:
    return Text(f"error {event.code or ''}: ", style="bold red") + \
        inert_text(event.message, max_chars=400)


_EVENT_VIEWS = {"step_started": _step_started, "step_finished": _step_finished,
                "step_output": _step_output, "undo_started": _undo, "undo_finished": _undo,
                "error": _error}


def event_view(event: ExecEvent, *, streamed: bool = False) -> RenderableType | None:
    """One execution event as a progress line (None for events not shown).

    ``streamed``: the step's output already arrived as ``step_output`` events, so its
    ``step_finished`` line does not repeat it.
    """
    if event.type == "step_finished":
        return _step_finished(event, with_output=not streamed)
    view = _EVENT_VIEWS.get(str(event.type))
    return view(event) if view is not None else None


class OutputLines:
    """Turns streamed output chunks into whole lines, per step (chunks split lines anywhere).

    Lines are made inert and capped, so a step printing escape codes or a huge line cannot
    disturb the terminal.
    """

    MAX_LINE = 400
    """Longer lines are cut."""

    def __init__(self) -> None:
        self._partial: dict[str, str] = {}

    def feed(self, step_id: str | None, chunk: str) -> list[str]:
        """Complete lines now available for ``step_id``."""
        key = step_id or ""
        text = self._partial.get(key, "") + inert(chunk)
        *lines, rest = text.split("\n")
        self._partial[key] = rest[-self.MAX_LINE * 4:]
        return [line[: self.MAX_LINE] for line in lines]

    def flush(self, step_id: str | None) -> list[str]:
        """Whatever is left for ``step_id`` (its last line had no newline)."""
        rest = self._partial.pop(step_id or "", "")
        return [rest[: self.MAX_LINE]] if rest.strip() else []


def output_line(line: str) -> Text:
    """One line of a step's output, indented and dim."""
    return Text("    " + line, style="dim")


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


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


def result_view(record: PlanRecord) -> Group:
    """The outcome of a plan, with the rollback hint where one applies."""
    parts: list[RenderableType] = [Text("Result: ", style="bold") + status_text(record.status)]
    if record.error is not None:
        parts.append(Text(f"{record.error.code}: ", style="red") +
                     inert_text(record.error.message, max_chars=500))
    if record.undo:
        parts.append(undo_table(record.undo))
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
