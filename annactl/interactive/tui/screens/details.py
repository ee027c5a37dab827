"""Details of a plan: goals, analysis, the checks and their output, the step table, notes.

Reuses :func:`annactl.ui.render.plan_view`, the renderer of the one-shot output, so the
terminal and the TUI show a plan the same way (and make its text inert the same way).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from annactl.ui import render

if TYPE_CHECKING:
    from annactl.commands.prepared import Prepared


class DetailsScreen(ModalScreen[None]):
    """Everything about the plan, scrollable; Escape (or d) goes back to the box."""

    BINDINGS = [  # noqa: RUF012 - Textual's declared type
        Binding("escape", "close", "Back"),
        Binding("d", "close", "Back", show=False),
        Binding("q", "close", "Back", show=False),
    ]

    def __init__(self, prepared: Prepared) -> None:
        super().__init__()
        self.prepared = prepared

    def compose(self) -> ComposeResult:
        """The plan view in a scrolling pane."""
        view = render.plan_view(self.prepared.annotated, checks=self.prepared.checks,
                                warnings=self.prepared.warnings,
                                plan_id=self.prepared.plan_id,
                                contradictions=self.prepared.contradictions)
        with VerticalScroll(id="details-pane"):
            yield Static(view, id="plan-view")
        yield Footer()

    def action_close(self) -> None:
        """Back to the approval box."""
        self.dismiss(None)
