"""``annactl tui``: the approval screen as a Textual app.

The app shows one plan (from a request, a plan file or a stored id) in the
approval box; approval follows :mod:`annactl.ui.confirm` (a HIGH plan needs the
confirmation word in a second modal); execution streams into a progress view;
the result screen offers rollback, shows the evaluation of the results when it
arrives and, for a plan that missed its goals, a Fix button: the model's new plan
comes back to the approval box for a fresh decision (at most two fixes). Every
daemon and model call runs in a ``@work`` thread worker that reports back with the
messages in :mod:`annactl.interactive.tui.messages`; failures become notifications,
never tracebacks.
The app's result is the process exit status. The workers, and :class:`Source`, are in
:mod:`annactl.interactive.tui.workers` (the app's base class).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from annactl.core.exit_codes import ExitStatus, exit_status_for_plan
from annactl.interactive.tui.messages import (
    ChecksDone,
    EvaluationDone,
    ExecEventArrived,
    ExecutionDone,
    PlanReady,
    QueueReady,
    RollbackDone,
    StepsChanged,
    WorkFailed,
)
from annactl.interactive.tui.screens import Decision
from annactl.interactive.tui.screens.approval import ApprovalScreen
from annactl.interactive.tui.screens.ask import YesNoScreen
from annactl.interactive.tui.screens.progress import ProgressScreen
from annactl.interactive.tui.screens.queue import QueueChoice, QueueScreen
from annactl.interactive.tui.screens.result import ResultScreen
from annactl.interactive.tui.screens.word import WordScreen
from annactl.interactive.tui.waiting import WaitingApp
from annactl.interactive.tui.workers import Source
from annactl.ui import confirm, render
from annactl.ui.console import inert

__all__ = ["AnnaTui", "Source"]

if TYPE_CHECKING:
    from anna_common.errors import AnnaError
    from annactl.commands.prepared import Prepared
    from annactl.planning.memory import PatchReview


class AnnaTui(WaitingApp):
    """Approve, watch and roll back one plan."""

    CSS_PATH = "anna.tcss"
    TITLE = "Anna"
    BINDINGS = [  # noqa: RUF012 - Textual's declared type
        Binding("q", "quit_app", "Quit"),
        Binding("ctrl+c", "quit_app", "Quit", show=False, priority=True),
    ]

    def compose(self) -> ComposeResult:
        """The base screen: what was asked and what is happening."""
        asked = self.source.text or (str(self.source.plan_file) if self.source.plan_file
                                     else self.source.plan_id or "")
        yield Static(Text("Anna  ", style="bold") + Text(inert(asked, max_chars=200)), id="asked")
        yield Static("Preparing the plan…", id="state")
        yield Footer()

    def on_mount(self) -> None:
        """Show the given plan, or fetch one in a worker."""
        if self.prepared is not None:
            self.post_message(PlanReady(self.prepared))
        elif self.source.queue:
            if self.source.queue_list is not None:
                self.post_message(QueueReady(self.source.queue_list))
            else:
                self.load_queue()
        else:
            self.load_plan()

    # ------------------------------------------------------------------ messages

    def on_plan_ready(self, message: PlanReady) -> None:
        """A memory proposal first (if any), then the plan (one the person must not see
        now, beside Anna's offline answer, is held back: :mod:`.waiting`)."""
        if self.hold_back(message.prepared):
            return
        if self.undo_asked:  # an undo from the queue: ask, then roll back (_result_chosen)
            self.undo_asked = False
            self.prepared = message.prepared
            self.push_screen(YesNoScreen(f"Roll back plan {message.prepared.plan_id}? An agent "
                                         "asked for this undo. [y/N]"), self._undo_answered)
            return
        self.planning_over()
        prepared = self.prepared = message.prepared
        if self._flow is not None and prepared.outcome is not None and not message.again:
            from annactl.commands.memory import review_for
            from annactl.interactive.tui.screens.memory import MemoryScreen

            state_dir = self._flow.settings.state_dir
            review = review_for(state_dir, prepared.outcome)
            if review is not None and review.changes:
                self.push_screen(MemoryScreen(review), lambda decision: self._remembered(
                    decision, state_dir, review, prepared))
                return
        self._show_plan(prepared)

    def _remembered(self, decision: Decision | None, state_dir: Path, review: PatchReview,
                    prepared: Prepared) -> None:
        if decision == Decision.APPROVE:
            from annactl.commands.memory import apply

            error = apply(state_dir, review)
            if error is not None:
                self.notify(f"{error.code}: {inert(error.message)}", severity="error")
            else:
                self.notify("Remembered.")
        self._show_plan(prepared)

    def _show_plan(self, prepared: Prepared) -> None:
        """Show the plan: notes for an answer, the approval box for a plan with steps."""
        state = self.query_one("#state", Static)
        if not prepared.annotated.steps:
            state.update(render.notes_only(prepared.annotated,
                                           telemetry=prepared.answer_telemetry,
                                           contradictions=prepared.contradictions))
            self.status = ExitStatus.SUCCESS
            return
        state.update(Text("Waiting for your decision.", style="dim"))
        stored = prepared.source != "rejected"
        if stored and prepared.annotated.checks and not prepared.checks and \
                self._connect is not None:
            self.run_checks(prepared)
        self.push_screen(ApprovalScreen(prepared, refusal=self._needs_root(prepared)),
                         self._decided)

    def _needs_root(self, prepared: Prepared) -> AnnaError | None:
        """Why a stored plan cannot run through this daemon (it needs the system one)."""
        if self._flow is None or prepared.source == "rejected":
            return None
        from annactl.commands.needs_root import needs_root

        return needs_root(self._flow.daemon, prepared.annotated, prepared.plan_id)

    def on_queue_ready(self, message: QueueReady) -> None:
        """Show the waiting plans (or say that nothing waits)."""
        if isinstance(self.screen, QueueScreen):
            self.pop_screen()
        if not message.queue.entries:
            self.query_one("#state", Static).update(
                Text("Nothing waits for your approval.  (q quits)", style="dim"))
            return
        self.query_one("#state", Static).update(Text("The approval queue.", style="dim"))
        self.push_screen(QueueScreen(message.queue), self._queue_chosen)

    def _queue_chosen(self, choice: QueueChoice | None) -> None:
        if choice is None or choice.action == "quit" or choice.plan_id is None:
            self.exit(int(self.status))
            return
        if choice.action == "dismiss":
            self.notify(f"Dismissed {choice.plan_id}", markup=False)
            self.load_queue(dismiss=choice.plan_id)
            return
        # approving opens the plan in the approval box, like --plan ID (an undo: a question)
        self.undo_asked = choice.action == "undo"
        self.source.plan_id = choice.plan_id
        self.query_one("#asked", Static).update(Text("Anna  ", style="bold") +
                                                Text(choice.plan_id))
        self.query_one("#state", Static).update("Fetching the plan…")
        self.load_plan()

    def on_steps_changed(self, message: StepsChanged) -> None:
        """Submit the changed steps as a new plan; its approval box follows (PlanReady)."""
        self.query_one("#state", Static).update(Text("Anna is judging your changed plan…",
                                                     style="dim"))
        self.edit_plan(message.prepared, message.changes)

    def on_checks_done(self, message: ChecksDone) -> None:
        """Keep the check output for the details view, with the plan they ran for."""
        message.prepared.checks = list(message.results)

    def on_work_failed(self, message: WorkFailed) -> None:
        """A notification with the code, and the state line says what failed."""
        if self.quiet_failure(message):
            return
        self.planning_over()
        line = f"{message.code}: {inert(message.message, max_chars=300)}"
        self.notify(line, title=f"{message.stage} failed", severity="error", markup=False,
                    timeout=15)
        self.status = ExitStatus(message.exit_status)
        self.executing = False
        if isinstance(self.screen, ProgressScreen):
            self.screen.query_one("#progress-state", Static).update(
                Text(line + "  (q quits)", style="bold red"))
        else:
            self.query_one("#state", Static).update(Text(line + "  (q quits)", style="red"))

    def on_exec_event_arrived(self, message: ExecEventArrived) -> None:
        """Forward to the progress view."""
        if isinstance(self.screen, ProgressScreen):
            self.screen.apply(message.event)

    def on_execution_done(self, message: ExecutionDone) -> None:
        """Show the result, offer rollback, and start the evaluation."""
        from annactl.planning.fix import FixLoop

        self.executing = False
        self.status = exit_status_for_plan(str(message.record.status))
        self.push_screen(ResultScreen(message.record, evaluating=True), self._result_chosen)
        if self.prepared is not None and self._connect is not None:
            if self.loop is None:
                self.loop = FixLoop(self.prepared.request, mode="tui",
                                    planned=self.prepared.outcome is not None)
            self.evaluate(self.prepared, message.record)

    def on_evaluation_done(self, message: EvaluationDone) -> None:
        """Show the evaluation on the result screen; enable Fix when one may be asked for."""
        if self.loop is None:
            return
        self.loop.finished(message.record, message.evaluation)
        screen = self.screen
        if isinstance(screen, ResultScreen) and screen.record.plan_id == message.record.plan_id:
            screen.show_evaluation(message.evaluation, can_fix=self.loop.can_fix)

    def on_rollback_done(self, message: RollbackDone) -> None:
        """Report the rollback and show the updated record."""
        status = str(message.response.status)
        self.status = exit_status_for_plan(status, after_rollback=True)
        self.notify(f"Rollback: {status}", severity="information" if status == "rolled_back"
                    else "warning" if status == "rollback_unverified" else "error",
                    markup=False)
        self.push_screen(ResultScreen(message.record), self._result_chosen)

    # ------------------------------------------------------------------ decisions

    def _decided(self, decision: Decision | None) -> None:
        if decision == Decision.EDIT:  # a new plan is on its way (on_steps_changed)
            return
        if decision != Decision.APPROVE or self.prepared is None:
            rejected = self.prepared is not None and self.prepared.source == "rejected"
            # a declined fix leaves the failed plan's status as the outcome
            fixing = self.loop is not None and self.loop.rounds > 0
            if not (rejected or fixing) and self.prepared is not None:
                # said on the terminal after the screen closes, as the CLI says it
                self.exit_note = (f"Cancelled: nothing was run. Plan {self.prepared.plan_id} "
                                  f"is kept; annactl apply {self.prepared.plan_id} runs it.")
                if not self.source.queue:  # a queued plan keeps waiting in the queue
                    self._not_run(self.prepared.plan_id)
            elif not (rejected or fixing):
                self.exit_note = "Cancelled: nothing was run."
            self.exit(int(self.status if rejected or fixing else ExitStatus.DECLINED))
            return
        req = confirm.requirement(self.prepared.annotated)
        failed = confirm.failed_in_preview(self.prepared.preview)
        if req.tier == confirm.Tier.TWO or failed:  # a failed preview: never a plain yes
            self.push_screen(WordScreen(req if req.tier == confirm.Tier.TWO
                                        else confirm.anyway(req, failed)), self._word_given)
            return
        self._start(confirm.approval(req, confirmed=True))

    def _word_given(self, decision: Decision | None) -> None:
        if self.prepared is None:
            return
        if decision != Decision.APPROVE:
            self.push_screen(ApprovalScreen(self.prepared,
                                            refusal=self._needs_root(self.prepared)),
                             self._decided)
            return
        req = confirm.requirement(self.prepared.annotated)
        self._start(confirm.approval(req, confirmed=True, typed_word=req.word))

    def _start(self, approval: confirm.Approval) -> None:
        if self.prepared is None:
            return
        self.executing = True
        self.push_screen(ProgressScreen(self.prepared))
        self.execute(self.prepared, approval)

    def _result_chosen(self, decision: Decision | None) -> None:
        if decision == Decision.FIX and self.loop is not None:
            self.query_one("#state", Static).update(Text("Asking the model for a fix…",
                                                         style="dim"))
            self.plan_fix()
            return
        if decision == Decision.ROLLBACK and self.prepared is not None:
            req = confirm.rollback_requirement(self.prepared.annotated)
            if req.tier == confirm.Tier.TWO:
                # a HIGH rollback command needs its word, as it did at execute
                self.push_screen(WordScreen(req), self._rollback_word_given)
                return
            self.notify("Rolling back…", markup=False)
            self.rollback(self.prepared.plan_id)
            return
        self.exit(int(self.status))

    def _undo_answered(self, yes: bool | None) -> None:
        if yes:
            self._result_chosen(Decision.ROLLBACK)
            return
        self.exit_note = "Cancelled: nothing was rolled back; the undo still waits."
        self.exit(int(ExitStatus.DECLINED))

    def _rollback_word_given(self, decision: Decision | None) -> None:
        if self.prepared is None:
            return
        if decision != Decision.APPROVE:
            self.exit(int(self.status))
            return
        req = confirm.rollback_requirement(self.prepared.annotated)
        self.notify("Rolling back…", markup=False)
        self.rollback(self.prepared.plan_id, req.word)

    def action_quit_app(self) -> None:
        """Quit; while a plan runs, stop it (the daemon rolls it back) instead."""
        if self.executing:
            if isinstance(self.screen, ProgressScreen):
                self.screen.action_stop()
            return
        self.cancel_planning.set()
        self.exit(int(self.status))
