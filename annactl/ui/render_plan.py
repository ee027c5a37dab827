"""Rich renderables of a plan: its goals, analysis, checks, steps with their risk badges,
policy marks and notes; an answer with no steps as its notes.

Every string that came from the model, the daemon's journal or telemetry goes through
:mod:`annactl.ui.console` (``inert_text``) before it becomes a renderable; labels Anna
writes itself are plain ``Text``, so nothing here is ever parsed as markup. The names are
also importable from :mod:`annactl.ui.render`, where callers find them with the rest.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from annactl.ui.console import inert, inert_text
from annactl.ui.styles import RISK_STYLE

if TYPE_CHECKING:
    from collections.abc import Sequence

    from anna_common.findings import AnnotatedPlan, AnnotatedStep, Finding
    from anna_common.protocol.models import CheckResult
    from anna_common.telemetry import Telemetry
    from annactl.planning.citations import Citation
    from annactl.planning.facts import Contradiction

OUTPUT_TAIL_LINES = 6
"""Lines of a step's output shown under its progress line."""
COMMAND_CHARS = 4096
"""The most of a command any view shows: the contract's bound on a command
(``anna_common.plan.MAX_COMMAND_BYTES``), so a command of a valid plan is never cut — the
person approves what they saw, all of it (an apt hook 1,400 characters in hid behind a cut
at 600). A longer one is not a valid plan and cannot be approved; the bound only keeps a
view of garbage from holding the terminal."""


def risk_badge(level: str, *, banned: bool = False) -> Text:
    """A coloured ``RISK`` badge (plus ``BANNED`` when the command is hard-banned)."""
    badge = Text(f" {level} ", style=RISK_STYLE.get(str(level), "bold"))
    if banned:
        badge.append(" BANNED ", style="bold white on red")
    return badge


def command_text(command: str, *, max_chars: int = COMMAND_CHARS) -> RenderableType:
    """A whole command with shell highlighting, wrapped to the width it is given (inert
    first: highlighting never interprets it, markup and escapes in it stay text). Without
    colour, the same layout without loading pygments (:mod:`annactl.ui.command_view`)."""
    from annactl.ui.command_view import CommandView

    return CommandView(inert(command, max_chars=max_chars))


def tail(text: str, lines: int = OUTPUT_TAIL_LINES, *, max_chars: int = 2000) -> str:
    """The last ``lines`` lines of untrusted output, made inert."""
    clean = inert(text).rstrip("\n")
    kept = "\n".join(clean.splitlines()[-lines:])
    return kept[-max_chars:]


def head(text: str, lines: int = OUTPUT_TAIL_LINES, *, max_chars: int = 2000) -> str:
    """The first ``lines`` lines of untrusted output, made inert, and how many more there
    are: a check's output leads with what matters (``du | sort -rh`` puts the biggest
    first), so its beginning is shown, never its end."""
    clean = inert(text).rstrip("\n").splitlines()
    kept = "\n".join(clean[:lines])[:max_chars]
    more = len(clean) - lines
    return kept + (f"\n… {more} more line{'s' if more != 1 else ''}" if more > 0 else "")


def step_table(plan: AnnotatedPlan, *, title: str | None = "Steps") -> Table:
    """The steps: number, id over its description, command, risk badge over the scope,
    rollback."""
    table = Table(title=title, title_justify="left", expand=True, show_lines=True)
    # no column narrower than its header: cells fold, headers never do (terminals
    # narrower than render_narrow.NARROW get a list instead of this table)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("step", overflow="fold", ratio=2, min_width=12)
    table.add_column("command", overflow="fold", ratio=3, min_width=14)
    table.add_column("risk", no_wrap=True, min_width=8)
    table.add_column("rollback", overflow="fold", min_width=10, max_width=14)
    for number, step in enumerate(plan.steps, start=1):
        what = inert_text(step.id, "bold", max_chars=60) + Text("\n")
        what += inert_text(step.description, max_chars=300)
        risk = risk_badge(step.final_risk, banned=step.banned)
        risk.append(f"\n{step.scope}", style="dim")
        table.add_row(str(number), what, command_text(step.command), risk,
                      _rollback_cell(step, plan))
    return table


def _rollback_cell(step: AnnotatedStep, plan: AnnotatedPlan) -> Text:
    unchecked = "unverified_undo" in step.codes  # a live program Anna records no state of
    if step.rollback_id:
        cell = inert_text(step.rollback_id, "yellow" if unchecked else "green", max_chars=40)
        return cell + Text("\nunchecked", style="yellow") if unchecked else cell
    if unchecked:
        return Text("none", style="red")
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
    table.add_column("id", overflow="fold", min_width=4, max_width=18)
    table.add_column("command", overflow="fold", ratio=2, min_width=12)
    table.add_column("risk", no_wrap=True, min_width=4)
    table.add_column("result", overflow="fold", ratio=3, min_width=12)
    for check in plan.checks:
        table.add_row(inert_text(check.id, max_chars=60), command_text(check.command),
                      risk_badge(check.final_risk, banned=check.banned),
                      check_result_cell(outcome.get(check.id)))
    return table


def check_result_cell(result: CheckResult | None) -> Text:
    """A check's outcome: not run, refused and why, or its exit status and first lines."""
    if result is None:
        return Text("not run", style="dim")
    if not result.ran:
        return Text("refused: ", style="red") + inert_text(result.reason or "", max_chars=200)
    cell = Text(f"exit {result.exit_code}\n", style="green" if result.exit_code == 0
                else "yellow")
    cell.append_text(inert_text(head(result.output)))
    return cell


def _entry(number: str, body: list[RenderableType]) -> Table:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right", no_wrap=True, min_width=2)
    grid.add_column(overflow="fold", ratio=1)
    grid.add_row(Text(number, style="bold"), Group(*body))
    return grid


def step_list(plan: AnnotatedPlan, *, title: str = "Steps") -> Group:
    """The steps, one entry each: id, risk, scope and rollback on the first line, the
    description, then the command."""
    parts: list[RenderableType] = [Text(title, style="italic")]
    for number, step in enumerate(plan.steps, start=1):
        head = inert_text(step.id, "bold", max_chars=60) + Text(" ")
        head += risk_badge(step.final_risk, banned=step.banned)
        head += Text(f" {step.scope} · rollback: ") + _rollback_cell(step, plan)
        parts.append(_entry(f"{number}.", [head, inert_text(step.description, max_chars=300),
                                           command_text(step.command)]))
    return Group(*parts)


def check_list(plan: AnnotatedPlan, results: list[CheckResult] | None = None) -> Group:
    """The necessary checks, one entry each: id and risk, the command, then its result."""
    outcome = {r.id: r for r in results or []}
    parts: list[RenderableType] = [Text("Checks (read-only, run without asking)",
                                        style="italic")]
    for check in plan.checks:
        head = inert_text(check.id, "bold", max_chars=60) + Text(" ")
        head += risk_badge(check.final_risk, banned=check.banned)
        parts.append(_entry("•", [head, command_text(check.command),
                                  check_result_cell(outcome.get(check.id))]))
    return Group(*parts)


def rollback_list(plan: AnnotatedPlan) -> Group:
    """The plan's rollback commands, each whole: they run later, as approved now, when the
    plan is rolled back — a hook in one is as much the person's to see as in a step."""
    parts: list[RenderableType] = [Text("Rollback commands (run by annactl rollback)",
                                        style="italic")]
    for item in plan.rollback:
        head = inert_text(item.id, "bold", max_chars=60) + Text(" ")
        head += risk_badge(item.final_risk, banned=item.banned)
        parts.append(_entry("↶", [head, command_text(item.command)]))
    return Group(*parts)


def rollback_label(plan: AnnotatedPlan) -> str:
    """``available``, ``unverified``, ``partial`` or ``none``."""
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
              contradictions: Sequence[Contradiction] = (), streamed: bool = False) -> Group:
    """The whole plan: goals, analysis, checks, steps, notes, summary; a claim the telemetry
    contradicts is flagged right under the text that makes it. ``streamed``: the analysis
    was printed while the model wrote it (:mod:`annactl.ui.streamed`), so it is not repeated."""
    from annactl.ui.render_facts import confidence_line, contradiction_lines

    parts: list[RenderableType] = []
    goals = plan.plan.goals or ["(no goal given)"]
    parts.append(inert_text(goals[0], "bold", max_chars=200))
    for goal in goals[1:]:
        parts.append(Text("  • ") + inert_text(goal, max_chars=200))
    if plan_id:
        parts.append(Text(f"plan {plan_id}", style="dim"))
    if plan.plan.analysis.strip() and not streamed:
        parts.append(Text("Analysis: ", style="bold") + inert_text(plan.plan.analysis,
                                                                  max_chars=2000))
    parts.extend(contradiction_lines(contradictions, "analysis"))
    from annactl.ui.render_narrow import ByWidth

    if plan.checks:
        parts.append(ByWidth(lambda: checks_table(plan, checks),
                             lambda: check_list(plan, checks)))
    if plan.steps:
        parts.append(ByWidth(lambda: step_table(plan), lambda: step_list(plan)))
        if plan.rollback:
            parts.append(rollback_list(plan))
        parts.extend(_uncaptured_notes(plan))
        parts.extend(_unverified_notes(plan))
    parts.extend(policy_notes(plan))
    if plan.plan.notes_for_user.strip():
        parts.append(Text("Notes: ", style="bold") + inert_text(plan.plan.notes_for_user,
                                                               max_chars=4000))
        parts.extend(contradiction_lines(contradictions, "notes_for_user"))
    parts.extend(contradiction_lines(contradictions, "meta"))
    if (line := confidence_line(contradictions)) is not None:
        parts.append(line)
    for finding in warnings or []:
        parts.append(Text(f"note{finding_place(finding.path, plan)}: ", style="yellow")
                     + inert_text(finding.message, max_chars=300))
    if plan.steps:
        parts.append(summary_line(plan))
    return Group(*parts)


_PLACE = re.compile(r"^(command_plan|rollback_plan|necessary_checks)\[(\d+)\]")
_PLACE_WORDS = {"command_plan": "step", "rollback_plan": "rollback command",
                "necessary_checks": "check"}


def finding_place(path: str, plan: AnnotatedPlan) -> str:
    """`` on step 2 (install)`` / `` on rollback command undo_apply``: which command a
    finding is about (a raised risk on the rollback command is not the step's), or ""."""
    found = _PLACE.match(path or "")
    if found is None:
        return ""
    kind, index = found.group(1), int(found.group(2))
    items = {"command_plan": plan.steps, "rollback_plan": plan.rollback,
             "necessary_checks": plan.checks}[kind]
    name = inert(items[index].id, max_chars=40) if index < len(items) else ""
    if kind == "command_plan":
        return f" on step {index + 1}" + (f" ({name})" if name else "")
    return f" on {_PLACE_WORDS[kind]}" + (f" {name}" if name else "")


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
        # the analyser's words, or the daemon's "runs live; Anna cannot undo it: why"
        reason = next((r for r in step.reasons
                       if "Anna cannot back this up" in r or "Anna cannot undo it" in r),
                      step.reasons[index] if index < len(step.reasons) else "")
        lines.append(Text(f"step {number}: ", style="bold red") + inert_text(reason,
                                                                             max_chars=300))
    return lines


_UNVERIFIED = "unverified_undo"  # Code.UNVERIFIED_UNDO: a live step nobody can check


def _unverified_notes(plan: AnnotatedPlan) -> list[Text]:
    """One yellow line per live step whose undo Anna cannot check, in the daemon's words."""
    lines: list[Text] = []
    for number, step in enumerate(plan.steps, start=1):
        if _UNVERIFIED not in step.codes:
            continue
        reason = next((r for r in step.reasons if r.startswith("Anna cannot check")), "")
        lines.append(Text(f"step {number}: ", style="bold yellow") + inert_text(
            reason or "Anna cannot check this step's undo", max_chars=300))
    return lines


def notes_only(plan: AnnotatedPlan, *, telemetry: Telemetry | None = None,
               contradictions: Sequence[Contradiction] = (),
               citations: Sequence[Citation] = (), streamed: bool = False) -> Group:
    """A plan with no steps is an answer: its notes. With ``telemetry``, the machine's facts
    come from Anna (a table) and the model's prose stands beside them, flagged where the
    telemetry contradicts it. ``streamed``: the prose was printed while the model wrote it
    (:mod:`annactl.ui.streamed`); the rest stands under it."""
    from annactl.ui.render_facts import answer_view

    prose: Text | None
    if streamed:
        prose = None
    elif plan.plan.notes_for_user.strip():
        prose = inert_text(plan.plan.notes_for_user, max_chars=8000)
    else:
        prose = inert_text(plan.plan.analysis or "(nothing to do)", max_chars=4000)
    if telemetry is None and not contradictions and not citations:
        return Group() if prose is None else Group(prose)
    return answer_view(prose, telemetry, contradictions, citations)
