"""The second confirmation of a HIGH plan: type the word the prompt names (molly-guard).

Only an exact match approves; a wrong word says so and waits; Escape cancels.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from annactl.interactive.tui.screens import Decision
from annactl.ui import confirm


class WordScreen(ModalScreen[Decision]):
    """Approve a HIGH plan by typing its confirmation word."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]  # noqa: RUF012 - Textual's type

    def __init__(self, requirement: confirm.Requirement) -> None:
        super().__init__()
        self.requirement = requirement

    def compose(self) -> ComposeResult:
        """The question, what is HIGH, the input and the buttons."""
        word = self.requirement.word or ""
        with Vertical(id="word-box") as box:
            box.border_title = ("HIGH risk: second confirmation"
                                if self.requirement.word != confirm.RUN_ANYWAY
                                else "A step failed in its preview")
            reasons = Text()
            for reason in self.requirement.reasons[:4]:
                reasons.append(f"• {reason}\n")
            yield Static(reasons, id="word-reasons")
            prompt = Text("Type ") + Text(word, style="bold reverse") + Text(" to approve:")
            yield Static(prompt, id="word-prompt")
            yield Input(placeholder=word, id="word")
            yield Static("", id="word-error")
            with Horizontal(id="buttons"):
                yield Button("Confirm", id="confirm", variant="error")
                yield Button("Cancel", id="cancel", variant="primary")

    def on_mount(self) -> None:
        """Typing goes to the input; a wrong or empty word approves nothing."""
        self.query_one("#word", Input).focus()

    def _try(self, typed: str) -> None:
        if confirm.word_matches(self.requirement, typed):
            self.dismiss(Decision.APPROVE)
            return
        self.query_one("#word-error", Static).update(
            Text("That is not the word; nothing was approved.", style="bold red"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the input."""
        self._try(event.value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Confirm checks the word; Cancel cancels."""
        if event.button.id == "confirm":
            self._try(self.query_one("#word", Input).value)
        else:
            self.action_cancel()

    def action_cancel(self) -> None:
        """Back out."""
        self.dismiss(Decision.CANCEL)
