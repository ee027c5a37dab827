"""The outcome of a plan, offering rollback (focus starts on Close)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from annactl.interactive.tui.screens import Decision
from annactl.interactive.tui.widgets import title_text
from annactl.ui import render

if TYPE_CHECKING:
    from anna_common.protocol import PlanRecord

ROLLBACK_STATES = frozenset({"succeeded", "failed", "interrupted"})
"""States from which the person may still roll a plan back."""


class ResultScreen(ModalScreen[Decision]):
    """The journal's record of the plan; ``r`` rolls back, ``q``/Escape closes."""

    BINDINGS = [  # noqa: RUF012 - Textual's declared type
        Binding("r", "rollback", "Roll back"),
        Binding("q", "close", "Close"),
        Binding("escape", "close", "Close", show=False),
    ]
    AUTO_FOCUS = "#close"

    def __init__(self, record: PlanRecord) -> None:
        super().__init__()
        self.record = record

    @property
    def can_roll_back(self) -> bool:
        """Whether a rollback is on offer for this state."""
        return str(self.record.status) in ROLLBACK_STATES

    def compose(self) -> ComposeResult:
        """The result view and the buttons."""
        with Vertical(id="result-box") as box:
            box.border_title = title_text(self.record.annotated)
            box.border_subtitle = f"plan {self.record.plan_id}"
            with VerticalScroll(id="result-scroll"):
                if self.record.steps:
                    yield Static(render.execution_table(self.record), id="execution")
                yield Static(render.result_view(self.record), id="result")
            with Horizontal(id="buttons"):
                yield Button("Roll back", id="rollback", variant="warning",
                             disabled=not self.can_roll_back)
                yield Button("Close", id="close", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Buttons do what their keys do."""
        if event.button.id == "rollback":
            self.action_rollback()
        else:
            self.action_close()

    def action_rollback(self) -> None:
        """Undo the plan (only offered where the daemon can)."""
        if self.can_roll_back:
            self.dismiss(Decision.ROLLBACK)

    def action_close(self) -> None:
        """Leave."""
        self.dismiss(Decision.CLOSE)
