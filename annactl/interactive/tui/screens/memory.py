"""The model proposes to remember a setting: the person says yes or no (seed 004 memory_patch).

Shown before the plan's approval box. Only an explicit Remember applies the
change; Escape, "Not now" or leaving applies nothing. Values are untrusted
text (made inert).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from annactl.interactive.tui.screens import Decision
from annactl.ui.console import inert

if TYPE_CHECKING:
    from annactl.planning.memory import PatchReview


class MemoryScreen(ModalScreen[Decision]):
    """Remember the proposed settings, or not."""

    BINDINGS = [Binding("escape", "cancel", "Not now")]  # noqa: RUF012 - Textual's type
    AUTO_FOCUS = "#cancel"

    def __init__(self, review: PatchReview) -> None:
        super().__init__()
        self.review = review
        """What the model proposes (whitelisted, valid changes only)."""

    def compose(self) -> ComposeResult:
        """The proposed changes, what was refused, and the two buttons."""
        with Vertical(id="word-box") as box:
            box.border_title = "The model proposes to remember"
            lines = Text()
            for key, value in self.review.changes.items():
                lines.append(f"• {key} = {inert(value, max_chars=200)}\n" if value
                             else f"• forget {key}\n")
            for key, why in self.review.refused.items():
                lines.append(f"✗ {inert(key, max_chars=40)}: {why}\n", style="yellow")
            yield Static(lines, id="memory-changes")
            with Horizontal(id="buttons"):
                yield Button("Remember", id="remember", variant="primary")
                yield Button("Not now", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Remember approves; Not now does nothing."""
        self.dismiss(Decision.APPROVE if event.button.id == "remember" else Decision.CANCEL)

    def action_cancel(self) -> None:
        """Escape: nothing is remembered."""
        self.dismiss(Decision.CANCEL)
