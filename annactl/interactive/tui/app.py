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
The app's result is the process exit status.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from annactl.core.exit_codes import ExitStatus, exit_status_for, exit_status_for_plan
from annactl.interactive.tui.messages import (
    ChecksDone,
    EvaluationDone,
    ExecEventArrived,
    ExecutionDone,
    PlanningProgress,
    PlanReady,
    QueueReady,
    RollbackDone,
    WorkFailed,
)
from annactl.interactive.tui.screens import Decision
from annactl.interactive.tui.screens.approval import ApprovalScreen
from annactl.interactive.tui.screens.progress import ProgressScreen
from annactl.interactive.tui.screens.queue import QueueChoice, QueueScreen
from annactl.interactive.tui.screens.result import ResultScreen
from annactl.interactive.tui.screens.word import WordScreen
from annactl.ui import confirm, render
from annactl.ui.console import inert

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.protocol import PlanRecord
    from anna_common.protocol_queue import QueueList
    from annactl.commands.flow import Flow
    from annactl.commands.prepared import Prepared
    from annactl.planning.fix import FixLoop
    from annactl.planning.memory import PatchReview
    from annactl.planning.outcome import Progress


@dataclass
class Source:
    """Where the plan comes from (exactly one of these is set)."""

    text: str | None = None
    """A request to plan."""
    plan_file: Path | None = None
    """A plan JSON file (validated like a model reply)."""
    plan_id: str | None = None
    """A plan the daemon already stores."""
    prepared: Prepared | None = None
    """A plan already submitted and annotated."""
    use_templates: bool = True
    """Whether offline templates may answer the request."""
    queue: bool = False
    """Open on the approval queue (``annactl tui`` with plans waiting)."""
    queue_list: QueueList | None = None
    """The queue already fetched (else a worker fetches it)."""


class AnnaTui(App[int]):
    """Approve, watch and roll back one plan."""

    CSS_PATH = "anna.tcss"
    TITLE = "Anna"
    BINDINGS = [  # noqa: RUF012 - Textual's declared type
        Binding("q", "quit_app", "Quit"),
        Binding("ctrl+c", "quit_app", "Quit", show=False, priority=True),
    ]

    def __init__(self, source: Source, *, connect: Callable[[], Flow] | None = None) -> None:
        super().__init__()
        self.source = source
        self._connect = connect
        self._flow: Flow | None = None
        self.prepared: Prepared | None = source.prepared
        self.status = ExitStatus.DECLINED  # nothing ran until something does
        self.executing = False
        self.cancel_planning = threading.Event()
        self.loop: FixLoop | None = None
        """The evaluate → fix rounds of this request (made when its first plan finishes)."""

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

    # ------------------------------------------------------------------ workers

    def _flow_or_connect(self) -> Flow:
        if self._flow is None:
            if self._connect is None:
                from anna_common.errors import DaemonError

                raise DaemonError("no daemon connection was configured for this screen")
            self._flow = self._connect()
        return self._flow

    def _failed(self, stage: str, exc: BaseException) -> None:
        from anna_common.errors import AnnaError

        code = str(exc.code) if isinstance(exc, AnnaError) else "INTERNAL_ERROR"
        message = exc.message if isinstance(exc, AnnaError) else f"{type(exc).__name__}: {exc}"
        self.post_message(WorkFailed(stage, code, message, int(exit_status_for(exc))))

    @work(thread=True, exclusive=True, group="plan", exit_on_error=False)
    def load_plan(self) -> None:
        """Plan the request, read the file or fetch the stored plan; submit; annotate."""
        try:
            flow = self._flow_or_connect()
            if self.source.plan_file is not None:
                text = self.source.plan_file.read_text(encoding="utf-8", errors="replace")
                prepared = flow.plan_file_text(text, name=str(self.source.plan_file))
            elif self.source.plan_id is not None:
                prepared = flow.stored(self.source.plan_id)
            else:
                prepared = flow.plan_text(
                    self.source.text or "", mode="tui", use_templates=self.source.use_templates,
                    on_progress=self._progress, cancel=self.cancel_planning)
            self.post_message(PlanReady(prepared))
        except Exception as exc:  # reported as a notification
            self._show_banned(exc)
            self._failed("plan", exc)

    @work(thread=True, exclusive=True, group="queue", exit_on_error=False)
    def load_queue(self, dismiss: str | None = None) -> None:
        """Fetch the approval queue (after dismissing ``dismiss``, when given)."""
        try:
            daemon = self._flow_or_connect().daemon
            if dismiss is not None:
                daemon.dismiss(dismiss)
            self.post_message(QueueReady(daemon.queue()))
        except Exception as exc:  # reported as a notification
            self._failed("queue", exc)

    def _show_banned(self, exc: BaseException) -> None:
        """A banned plan is still shown (reasons, Approve disabled); it was never stored."""
        from annactl.commands.flow import PlanRejected
        from annactl.commands.prepared import Prepared

        annotated = exc.annotated if isinstance(exc, PlanRejected) else None
        if annotated is not None and annotated.banned:
            self.post_message(PlanReady(Prepared(plan_id="not stored", digest=annotated.digest,
                                                 annotated=annotated, source="rejected")))

    def _progress(self, progress: Progress) -> None:
        self.post_message(PlanningProgress(progress))

    @work(thread=True, group="checks", exit_on_error=False)
    def run_checks(self, prepared: Prepared) -> None:
        """Run the plan's read-only checks (they need no approval)."""
        try:
            self.post_message(ChecksDone(self._flow_or_connect().run_checks(prepared)))
        except Exception as exc:  # reported as a notification
            self._failed("checks", exc)

    @work(thread=True, exclusive=True, group="execute", exit_on_error=False)
    def execute(self, prepared: Prepared, approval: confirm.Approval) -> None:
        """Execute and stream events, then fetch the record."""
        try:
            flow = self._flow_or_connect()
            for event in flow.execute(prepared, approval):
                self.post_message(ExecEventArrived(event))
            self.post_message(ExecutionDone(flow.record(prepared.plan_id)))
        except Exception as exc:  # reported as a notification
            self._failed("execute", exc)

    @work(thread=True, exclusive=True, group="evaluate", exit_on_error=False)
    def evaluate(self, prepared: Prepared, record: PlanRecord) -> None:
        """Evaluate the finished plan and store the evaluation (never fails: Anna's own
        summary stands in for the model's)."""
        from annactl.commands.loop import store
        from annactl.planning.evaluate import offline
        from annactl.planning.evaluate_call import evaluate_finished

        try:
            flow = self._flow_or_connect()
            evaluation = evaluate_finished(flow.planner(), prepared.outcome, record)
            store(flow, prepared, record, evaluation)
        except Exception as exc:  # the result screen must get an evaluation whatever happens
            evaluation = offline(record, f"no evaluation ({type(exc).__name__})")
        self.post_message(EvaluationDone(evaluation, record))

    @work(thread=True, exclusive=True, group="plan", exit_on_error=False)
    def plan_fix(self) -> None:
        """Ask the model for a new plan; it comes back as a PlanReady like any plan."""
        try:
            assert self.loop is not None
            prepared = self.loop.plan_fix(self._flow_or_connect(), on_progress=self._progress,
                                          cancel=self.cancel_planning)
            self.post_message(PlanReady(prepared))
        except Exception as exc:  # reported as a notification
            self._show_banned(exc)
            self._failed("fix", exc)

    @work(thread=True, group="cancel", exit_on_error=False)
    def stop_execution(self) -> None:
        """Ask the daemon to stop the running plan and roll it back."""
        if self.prepared is None:
            return
        try:
            self._flow_or_connect().cancel(self.prepared.plan_id)
        except Exception as exc:  # reported as a notification
            self._failed("cancel", exc)

    @work(thread=True, exclusive=True, group="rollback", exit_on_error=False)
    def rollback(self, plan_id: str, word: str | None = None) -> None:
        """Undo the plan the person chose to roll back (``word``: for a HIGH rollback
        command, what the person typed)."""
        try:
            flow = self._flow_or_connect()
            response = flow.rollback(plan_id, confirm_word=word)
            self.post_message(RollbackDone(response, flow.record(plan_id)))
        except Exception as exc:  # reported as a notification
            self._failed("rollback", exc)

    # ------------------------------------------------------------------ messages

    def on_planning_progress(self, message: PlanningProgress) -> None:
        """Planning stage, elapsed time and tokens."""
        self.query_one("#state", Static).update(progress_text(message.progress))

    def on_plan_ready(self, message: PlanReady) -> None:
        """A memory proposal first (if any), then the plan."""
        prepared = self.prepared = message.prepared
        if self._flow is not None and prepared.outcome is not None:
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
        self.push_screen(ApprovalScreen(prepared), self._decided)

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
        # approving opens the plan in the approval box, like --plan ID
        self.source.plan_id = choice.plan_id
        self.query_one("#asked", Static).update(Text("Anna  ", style="bold") +
                                                Text(choice.plan_id))
        self.query_one("#state", Static).update("Fetching the plan…")
        self.load_plan()

    def on_checks_done(self, message: ChecksDone) -> None:
        """Keep the check output for the details view."""
        if self.prepared is not None:
            self.prepared.checks = list(message.results)

    def on_work_failed(self, message: WorkFailed) -> None:
        """A notification with the code, and the state line says what failed."""
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
                    else "error", markup=False)
        self.push_screen(ResultScreen(message.record), self._result_chosen)

    # ------------------------------------------------------------------ decisions

    def _decided(self, decision: Decision | None) -> None:
        if decision != Decision.APPROVE or self.prepared is None:
            rejected = self.prepared is not None and self.prepared.source == "rejected"
            # a declined fix leaves the failed plan's status as the outcome
            fixing = self.loop is not None and self.loop.rounds > 0
            self.exit(int(self.status if rejected or fixing else ExitStatus.DECLINED))
            return
        req = confirm.requirement(self.prepared.annotated)
        if req.tier == confirm.Tier.TWO:
            self.push_screen(WordScreen(req), self._word_given)
            return
        self._start(confirm.approval(req, confirmed=True))

    def _word_given(self, decision: Decision | None) -> None:
        if self.prepared is None:
            return
        if decision != Decision.APPROVE:
            self.push_screen(ApprovalScreen(self.prepared), self._decided)
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


def progress_text(progress: Progress) -> Text:
    """``model · 3.2 s · 120 tokens`` while planning."""
    line = Text(f"{inert(progress.stage, max_chars=20)} · {progress.elapsed_s:.1f} s")
    if progress.tokens:
        line.append(f" · {progress.tokens} tokens")
    if progress.message:
        line.append(" · " + inert(progress.message, max_chars=100), style="dim")
    return line
