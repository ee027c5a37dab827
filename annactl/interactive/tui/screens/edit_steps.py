"""Change a plan's steps before approving: leave some out, or edit a command.

One row per step: a checkbox (ticked: the step stays) and its command in an input.
"Re-check" hands the changes back; the app submits them as a *new* plan through the same
path as ``annactl apply ID --skip/--edit`` (:func:`annactl.commands.edit.edited`): the
daemon validates, judges and previews it afresh and gives it its own digest, and the
approval box shows that plan. Nothing here approves anything; Escape goes back unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Footer, Input, Static

from annactl.ui.console import inert

if TYPE_CHECKING:
    from annactl.commands.prepared import Prepared


class StepBox(Checkbox):
    """A step's checkbox: ✓ kept, ✗ left out — the glyph says it, not only the colour
    (Textual's checkbox draws the same ``X`` either way, issue 36.6)."""

    KEPT = "✓"
    DROPPED = "✗"

    def __init__(self, label: Text, value: bool = True, **kwargs: str) -> None:
        super().__init__(label, value, **kwargs)  # type: ignore[arg-type]
        self.BUTTON_INNER = self.KEPT if value else self.DROPPED

    def watch_value(self) -> None:
        """The glyph follows the value (then Textual's own reaction: class, message)."""
        self.BUTTON_INNER = self.KEPT if self.value else self.DROPPED
        super().watch_value()


@dataclass(frozen=True)
class StepChanges:
    """What the person changed: steps left out, and new commands by step id."""

    skip: list[str] = field(default_factory=list)
    """Ids of the steps left out."""
    edits: dict[str, str] = field(default_factory=dict)
    """Step id → the command typed for it."""


class EditStepsScreen(ModalScreen[StepChanges | None]):
    """Untick steps to leave them out, edit commands; Re-check submits a new plan."""

    BINDINGS = [  # noqa: RUF012 - Textual's declared type
        Binding("escape", "back", "Back"),
        Binding("ctrl+r", "recheck", "Re-check"),
    ]

    def __init__(self, prepared: Prepared) -> None:
        super().__init__()
        self.prepared = prepared
        self.steps = list(prepared.annotated.steps)

    def compose(self) -> ComposeResult:
        """The rows, a line for what is wrong, and the buttons."""
        with Vertical(id="edit-box") as box:
            box.border_title = "Change the steps"
            yield Static(Text("Untick a step to leave it out (✗); edit a command to change it. "
                              "The changed plan is a new plan: Anna judges and previews it, "
                              "then asks you again.", style="dim"), id="edit-help")
            with VerticalScroll(id="edit-steps"):
                for index, step in enumerate(self.steps):
                    label = Text(inert(step.id, max_chars=40), style="bold")
                    label.append("  " + inert(step.description, max_chars=80))
                    yield StepBox(label, value=True, id=f"keep-{index}")
                    yield Input(inert(step.command), id=f"command-{index}",
                                classes="edit-command")
            yield Static("", id="edit-error")
            with Horizontal(id="buttons"):
                yield Button("Re-check", id="recheck", variant="primary")
                yield Button("Back", id="back")
        yield Footer()

    def on_mount(self) -> None:
        """Focus the first step's checkbox."""
        self.query_one("#keep-0", Checkbox).focus()

    def changes(self) -> StepChanges | str:
        """The changes as ticked and typed, or why they cannot be submitted."""
        skip: list[str] = []
        edits: dict[str, str] = {}
        for index, step in enumerate(self.steps):
            if not self.query_one(f"#keep-{index}", Checkbox).value:
                skip.append(step.id)
                continue
            typed = self.query_one(f"#command-{index}", Input).value
            if not typed.strip():
                return f"The command of {inert(step.id)} is empty; untick the step to leave it out."
            if typed != inert(step.command):
                edits[step.id] = typed
        if len(skip) == len(self.steps):
            return "Every step is left out: there would be nothing to approve."
        if not skip and not edits:
            return "Nothing is changed yet."
        return StepChanges(skip, edits)

    def action_recheck(self) -> None:
        """Hand the changes back (or say what is wrong with them)."""
        found = self.changes()
        if isinstance(found, str):
            self.query_one("#edit-error", Static).update(Text(found, style="bold red"))
            return
        self.dismiss(found)

    def action_back(self) -> None:
        """Back to the approval box, nothing changed."""
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Buttons do what their keys do."""
        if event.button.id == "recheck":
            self.action_recheck()
        else:
            self.action_back()
