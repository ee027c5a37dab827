"""Small widgets of the TUI. Every string from outside is made inert before display."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from annactl.ui import render
from annactl.ui.console import inert
from annactl.ui.styles import STATUS_STYLE

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan

STEP_ICONS = {"pending": "·", "running": "▶", "succeeded": "✔", "failed": "✘", "skipped": "–",
              "undone": "↶", "undo_failed": "!", "verify_failed": "✘"}
"""The mark shown before a step in the progress view."""


def title_text(plan: AnnotatedPlan) -> Text:
    """The box title: the plan's first goal, inert and on one line."""
    goal = plan.plan.goals[0] if plan.plan.goals else "Action plan"
    return Text(inert(goal, max_chars=70).replace("\n", " ") or "Action plan")


class RiskLine(Static):
    """``Risk: <badge>`` for a plan."""

    def __init__(self, plan: AnnotatedPlan, **kwargs: str) -> None:
        line = Text("Risk: ") + render.risk_badge(plan.final_risk, banned=plan.banned)
        super().__init__(line, **kwargs)  # type: ignore[arg-type]


class StepLine(Static):
    """One step in the progress view: icon, id, status; updated as events arrive."""

    def __init__(self, number: int, total: int, step_id: str, description: str) -> None:
        super().__init__(id=f"step-{number}", classes="step-line")
        self.number = number
        self.total = total
        self.step_id = inert(step_id, max_chars=40)
        self.description = inert(description, max_chars=60).replace("\n", " ")
        self.set_status("pending")

    def set_status(self, status: str, exit_code: int | None = None) -> None:
        """Show a new state (a :class:`~anna_common.protocol.models.StepStatus` value)."""
        line = Text(f"{STEP_ICONS.get(status, '?')} [{self.number}/{self.total}] ",
                    style=STATUS_STYLE.get(status, ""))
        line.append(self.step_id, style="bold")
        line.append(f"  {self.description}  ")
        line.append(status + (f" (exit {exit_code})" if exit_code is not None else ""),
                    style=STATUS_STYLE.get(status, ""))
        self.update(line)
