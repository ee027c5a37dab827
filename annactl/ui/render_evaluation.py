"""How an evaluation looks (one-shot, REPL and TUI share it).

The model's evaluation is untrusted text and Anna's offline summary quotes step ids
and error messages from outside: everything goes through the inert helpers of
:mod:`annactl.ui.console`, so no markup or escape code from either reaches the screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text

from annactl.ui.console import inert_text
from annactl.ui.render_facts import claim_line

if TYPE_CHECKING:
    from rich.console import RenderableType

    from annactl.planning.evaluate import EvaluationOutcome


def evaluation_view(outcome: EvaluationOutcome, *, fix_hint: str = "") -> Group:
    """The verdict per goal, the summary, the suggestion, and who wrote it."""
    met = outcome.goals_met
    who = "the model" if outcome.source == "model" else "Anna (from exit codes)"
    head = Text("Evaluation: ", style="bold") + Text(
        "goals met" if met else "goals not met", style="green" if met else "bold red")
    head.append(f"  by {who}", style="dim")
    parts: list[RenderableType] = [head]
    for verdict in outcome.evaluation.goals:
        line = Text("  ✓ " if verdict.met else "  ✗ ", style="green" if verdict.met else "red")
        line.append_text(inert_text(verdict.goal, max_chars=200))
        line.append(" — ", style="dim")
        line.append_text(inert_text(verdict.why, max_chars=400))
        parts.append(line)
    if outcome.evaluation.summary:
        parts.append(inert_text(outcome.evaluation.summary, max_chars=800))
    for claim in outcome.contradictions:
        parts.append(claim_line(claim.fact, claim.claim, "journal", claim.journal,
                                claim_chars=160, truth_chars=200))
    if outcome.contradictions:
        parts.append(Text(f"{len(outcome.contradictions)} claim(s) of this evaluation "
                          "contradict the daemon's journal; trust the journal (annactl show "
                          f"{outcome.plan_id}).", style="yellow"))
    if outcome.evaluation.suggestion and not met:
        parts.append(Text("Suggestion: ", style="bold") +
                     inert_text(outcome.evaluation.suggestion, max_chars=600))
    if outcome.note:
        note = f"note: {outcome.note}" + (f" [{outcome.error_code}]" if outcome.error_code
                                           else "")
        parts.append(inert_text(note, "dim", max_chars=300))
    if fix_hint:
        parts.append(Text(fix_hint, style="dim"))
    return Group(*parts)
