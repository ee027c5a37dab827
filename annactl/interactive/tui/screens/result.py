"""The outcome of a plan, offering rollback (focus starts on Close).

After an execution the app passes ``evaluating=True``: the screen then also shows the
evaluation when it arrives (:meth:`ResultScreen.show_evaluation`) and a Fix button, enabled
only when the plan missed its goals and fix rounds remain; Fix asks the model for a new
plan, which comes back to the approval box for a fresh decision.
"""

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
    from anna_common.protocol.models import PlanRecord
    from annactl.planning.evaluate import EvaluationOutcome

class ResultScreen(ModalScreen[Decision]):
    """The journal's record of the plan; ``r`` rolls back, ``q``/Escape closes."""

    BINDINGS = [  # noqa: RUF012 - Textual's declared type
        Binding("r", "rollback", "Roll back"),
        Binding("f", "fix", "Fix"),
        Binding("q", "close", "Close"),
        Binding("escape", "close", "Close", show=False),
    ]
    AUTO_FOCUS = "#close"

    def __init__(self, record: PlanRecord, *, evaluating: bool = False) -> None:
        super().__init__()
        self.record = record
        self.evaluating = evaluating
        """Show the evaluation area and the Fix button."""
        self.can_fix = False
        """The evaluation arrived and says a fix may be asked for."""
        self.evaluation: EvaluationOutcome | None = None
        """The evaluation shown, once it arrived."""

    @property
    def can_roll_back(self) -> bool:
        """Whether a rollback is on offer for this state."""
        return render.rollback_offered(self.record)

    def compose(self) -> ComposeResult:
        """The result view and the buttons."""
        with Vertical(id="result-box") as box:
            box.border_title = title_text(self.record.annotated)
            box.border_subtitle = f"plan {self.record.plan_id}"
            with VerticalScroll(id="result-scroll"):
                if self.record.steps:
                    yield Static(render.execution_table(self.record), id="execution")
                yield Static(render.result_view(self.record), id="result")
                if self.evaluating:
                    yield Static("Evaluating the results…", id="evaluation")
            with Horizontal(id="buttons"):
                if self.can_roll_back:  # after a rollback (or nothing to undo): no button
                    yield Button("Roll back", id="rollback", variant="warning")
                if self.evaluating:
                    yield Button("Fix", id="fix", disabled=True)
                yield Button("Close", id="close", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Buttons do what their keys do."""
        if event.button.id == "rollback":
            self.action_rollback()
        elif event.button.id == "fix":
            self.action_fix()
        else:
            self.action_close()

    def action_rollback(self) -> None:
        """Undo the plan (only offered where the daemon can), after asking as the CLI does."""
        from annactl.interactive.tui.screens.ask import YesNoScreen
        from annactl.ui.console import inert

        if not self.can_roll_back:
            return
        goals = self.record.annotated.plan.goals
        title = inert(goals[0] if goals else "", max_chars=80)
        self.app.push_screen(YesNoScreen(f"Roll back plan {self.record.plan_id} ({title}, now "
                                         f"{self.record.status})?"), self._rollback_answered)

    def _rollback_answered(self, yes: bool | None) -> None:
        if yes:
            self.dismiss(Decision.ROLLBACK)

    def show_evaluation(self, evaluation: EvaluationOutcome, *, can_fix: bool) -> None:
        """Show the evaluation (untrusted text, rendered inert) and enable Fix if offered."""
        from annactl.ui.render_evaluation import evaluation_view

        if not self.evaluating:
            return
        self.query_one("#evaluation", Static).update(evaluation_view(evaluation))
        self.evaluation = evaluation
        self.can_fix = can_fix
        self.query_one("#fix", Button).disabled = not can_fix

    def action_fix(self) -> None:
        """Ask the model for a new plan (it is shown for approval; nothing runs yet)."""
        if self.can_fix:
            self.dismiss(Decision.FIX)

    def action_close(self) -> None:
        """Leave."""
        self.dismiss(Decision.CLOSE)
