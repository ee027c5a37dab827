"""A yes/no question in a box, focus on No (as the CLI's ``[y/N]``)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class YesNoScreen(ModalScreen[bool]):
    """``question`` with Yes and No; Enter on a fresh box answers No, Escape too."""

    BINDINGS = [Binding("escape", "no", "No"), Binding("y", "yes", "Yes", show=False),  # noqa: RUF012
                Binding("n", "no", "No", show=False)]
    AUTO_FOCUS = "#no"

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        """The question (Anna's own words, plain text) and the two buttons."""
        with Vertical(id="yesno-box"):
            yield Static(self.question, id="question", markup=False)
            with Horizontal(id="buttons"):
                yield Button("Yes", id="yes", variant="warning")
                yield Button("No", id="no", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Yes or No."""
        self.dismiss(event.button.id == "yes")

    def action_yes(self) -> None:
        """Answer yes."""
        self.dismiss(True)

    def action_no(self) -> None:
        """Answer no."""
        self.dismiss(False)
