"""The approval box (seed 000): title, ``Risk:``, ``Steps:``, every step's whole command,
``Rollback:`` and three buttons.

The commands are in the box itself, whole and wrapped (:func:`annactl.ui.render.command_text`,
inert: markup and escapes in them stay text), in a pane that scrolls when they are long: the
person approves what they have seen, not a summary of it (the box showed no command until
"Show Details", and a cut hid an apt hook's program after 600 characters).

Focus starts on Cancel: Enter on a fresh screen never approves anything that
changes the system. A banned plan shows why and its Approve button is disabled.
``e`` changes the steps (:mod:`annactl.interactive.tui.screens.edit_steps`): the changed
plan is a new one, judged and shown again in a new box.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Static

from annactl.interactive.tui.screens import Decision
from annactl.interactive.tui.widgets import RiskLine, title_text
from annactl.ui import confirm
from annactl.ui.console import inert, inert_text
from annactl.ui.render_facts import confidence_line
from annactl.ui.render_plan import command_text, risk_badge

if TYPE_CHECKING:
    from anna_common.errors import AnnaError
    from annactl.commands.prepared import Prepared
    from annactl.interactive.tui.screens.edit_steps import StepChanges


def _tier_note(req: confirm.Requirement) -> Text | None:
    if req.tier == confirm.Tier.BANNED:
        note = Text("BANNED: this plan can never be approved\n", style="bold red")
        for reason in req.reasons[:4]:
            note.append(f"• {reason}\n")
        return note
    if req.tier == confirm.Tier.TWO:
        return Text(f"HIGH: approving asks you to type {req.word!r}", style="bold red")
    if req.tier == confirm.Tier.NONE:
        return Text("Read-only: nothing is changed", style="blue")
    return None


def _refusal_note(refusal: AnnaError) -> Text:
    note = Text("Cannot run here: ", style="bold red")
    note.append(inert(refusal.message, max_chars=400))
    if refusal.hint:
        note.append("\nWhat you can do: ", style="bold")
        note.append(inert(refusal.hint, max_chars=300))
    return note


class ApprovalScreen(ModalScreen[Decision]):
    """Approve or cancel one plan; ``d`` opens the details."""

    BINDINGS = [  # noqa: RUF012 - Textual's declared type
        Binding("d", "details", "Show Details"),
        Binding("a", "approve", "Approve"),
        Binding("c", "cancel", "Cancel"),
        Binding("e", "edit", "Change Steps"),
        Binding("escape", "cancel", "Cancel", show=False),
        # beside Anna's offline answer (the app offers them only then: tui/waiting.py)
        Binding("m", "app.model_plan", "Model's plan"),
        Binding("w", "app.stop_waiting", "Stop waiting"),
    ]
    AUTO_FOCUS = "#cancel"

    def __init__(self, prepared: Prepared, *, banner: Text | None = None,
                 refusal: AnnaError | None = None) -> None:
        super().__init__()
        self.prepared = prepared
        self.requirement = confirm.requirement(prepared.annotated)
        self.banner = banner
        """A line above the plan (Anna's offline answer says so, issue 24.1)."""
        self.refusal = refusal
        """Why this plan cannot run here (it needs the system daemon): said in the box,
        with what the person can do, and Approve is disabled (issue 36.7)."""

    @property
    def approvable(self) -> bool:
        """Approve is offered: not banned, and nothing stops the plan from running here."""
        return self.requirement.tier != confirm.Tier.BANNED and self.refusal is None

    def compose(self) -> ComposeResult:
        """The box."""
        plan = self.prepared.annotated
        with Vertical(id="box") as box:
            box.border_title = title_text(plan)
            box.border_subtitle = f"plan {self.prepared.plan_id}"
            if self.banner is not None:
                yield Static(self.banner, id="banner")
            if self.prepared.changed:  # the box is the changed plan, not the one asked for
                yield Static(Text(f"Your changed plan ({inert(self.prepared.changed)}): a new "
                                  "plan, judged and previewed again.", style="bold"),
                             id="changed")
            yield RiskLine(plan, id="risk")
            yield Static(f"Steps: {len(plan.steps)}", id="steps")
            if plan.steps:
                with VerticalScroll(id="commands"):
                    for number, step in enumerate(plan.steps, start=1):
                        head = Text(f"{number}. ", style="bold") + inert_text(
                            step.id, "bold", max_chars=60) + Text(" ")
                        head += risk_badge(step.final_risk, banned=step.banned)
                        yield Static(Group(head, command_text(step.command)),
                                     classes="command")
            yield Static(f"Rollback: {plan.rollback_status}", id="rollback")
            note = _tier_note(self.requirement)
            if note is not None:
                yield Static(note, id="tier-note")
            if self.refusal is not None:
                yield Static(_refusal_note(self.refusal), id="needs-root")
            doubt = confidence_line(self.prepared.contradictions)
            if doubt is not None:  # the claims themselves are in Show Details
                yield Static(doubt, id="contradictions")
            with Horizontal(id="buttons"):
                yield Button("Show Details", id="details")
                yield Button("Approve", id="approve", variant="success",
                             disabled=not self.approvable)
                yield Button("Cancel", id="cancel", variant="error")
        yield Footer()

    def set_banner(self, banner: Text) -> None:
        """Say something new above the plan (the plan itself never changes here)."""
        self.banner = banner
        for widget in self.query("#banner").results(Static):
            widget.update(banner)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Buttons do what their keys do."""
        actions = {"details": self.action_details, "approve": self.action_approve,
                   "cancel": self.action_cancel}
        action = actions.get(event.button.id or "")
        if action is not None:
            action()

    def action_details(self) -> None:
        """Open the step table, checks and their output."""
        from annactl.interactive.tui.screens.details import DetailsScreen

        self.app.push_screen(DetailsScreen(self.prepared))

    def action_approve(self) -> None:
        """Approve (a banned plan refuses, saying why)."""
        if self.requirement.tier == confirm.Tier.BANNED:
            self.notify("This plan contains a hard-banned command and cannot be approved.",
                        severity="error", markup=False)
            return
        if self.refusal is not None:
            self.notify(inert(self.refusal.message, max_chars=300), severity="error",
                        markup=False)
            return
        self.dismiss(Decision.APPROVE)

    def action_cancel(self) -> None:
        """Do nothing."""
        self.dismiss(Decision.CANCEL)

    def action_edit(self) -> None:
        """Leave steps out or edit commands; the changes go to the app as a new plan."""
        from annactl.interactive.tui.screens.edit_steps import EditStepsScreen

        self.app.push_screen(EditStepsScreen(self.prepared), self._changed)

    def _changed(self, changes: StepChanges | None) -> None:
        if changes is None:
            return  # back in this box, nothing changed
        from annactl.interactive.tui.messages import StepsChanged

        self.app.post_message(StepsChanged(self.prepared, changes))
        self.dismiss(Decision.EDIT)
