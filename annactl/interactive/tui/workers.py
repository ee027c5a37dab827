"""The TUI's workers: every daemon and model call of ``annactl tui``, each in a ``@work``
thread that reports back with a message of :mod:`annactl.interactive.tui.messages`.

Nothing here touches a screen: a worker's result (a plan, a queue, check output, execution
events, a record, an evaluation) or its failure (``WorkFailed``, with the code and the exit
status it maps to) is posted as a message, and :class:`~annactl.interactive.tui.app.AnnaTui`
shows it. A failure is a notification, never a traceback. :class:`Source` says where the
plan comes from.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import App

from annactl.core.exit_codes import ExitStatus, exit_status_for
from annactl.interactive.tui.messages import (
    ChecksDone,
    EvaluationDone,
    ExecEventArrived,
    ExecutionDone,
    OfflineAnswer,
    PlanningProgress,
    PlanReady,
    QueueReady,
    RollbackDone,
    WorkFailed,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.protocol.models import PlanRecord
    from anna_common.protocol.queue import QueueList
    from annactl.commands.flow import Flow
    from annactl.commands.prepared import Prepared
    from annactl.interactive.tui.screens.edit_steps import StepChanges
    from annactl.planning.fix import FixLoop
    from annactl.planning.outcome import Progress
    from annactl.ui import confirm


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


class TuiWorkers(App[int]):
    """The state the workers share with the app, and the workers (the app's base class)."""

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
        self.exit_note: str | None = None
        """A line printed on stderr once the screen is gone (Cancel says what it did)."""
        self.undo_asked = False
        """The plan being fetched is an undo an agent asked for (the queue's ``undo``)."""


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
                    on_progress=self._progress, cancel=self.cancel_planning,
                    on_offline=self._offline, on_offline_checks=self._offline_checks)
            self.post_message(PlanReady(prepared))
        except Exception as exc:  # reported as a notification
            self._show_banned(exc)
            self._failed("plan", exc)

    @work(thread=True, exclusive=True, group="plan", exit_on_error=False)
    def edit_plan(self, prepared: Prepared, changes: StepChanges) -> None:
        """Submit ``prepared`` minus the skipped steps, with the edited commands, as a new
        plan (the path of ``apply ID --skip/--edit``); when that fails, the plan that was
        changed is shown again after the notification."""
        from annactl.commands.edit import edited

        try:
            new = edited(self._flow_or_connect(), prepared, skip=list(changes.skip),
                         edits=dict(changes.edits))
            self.post_message(PlanReady(new))
        except Exception as exc:  # reported as a notification
            self._failed("change", exc)
            if not self._show_banned(exc):
                self.post_message(PlanReady(prepared, again=True))

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

    def _show_banned(self, exc: BaseException) -> bool:
        """A banned plan is still shown (reasons, Approve disabled); it was never stored.
        True when it is shown."""
        from annactl.commands.flow import PlanRejected
        from annactl.commands.prepared import Prepared

        annotated = exc.annotated if isinstance(exc, PlanRejected) else None
        if annotated is not None and annotated.banned:
            self.post_message(PlanReady(Prepared(plan_id="not stored", digest=annotated.digest,
                                                 annotated=annotated, source="rejected")))
            return True
        return False

    def _progress(self, progress: Progress) -> None:
        self.post_message(PlanningProgress(progress))

    def _offline(self, prepared: Prepared) -> None:
        self.post_message(OfflineAnswer(prepared))

    def _offline_checks(self, prepared: Prepared) -> None:
        """The planner ran the offline answer's checks (for the model): the box shows
        these results, never a second round of its own."""
        self.post_message(ChecksDone(prepared, list(prepared.checks)))

    @work(thread=True, group="checks", exit_on_error=False)
    def run_checks(self, prepared: Prepared) -> None:
        """Run the plan's read-only checks (they need no approval)."""
        try:
            self.post_message(ChecksDone(prepared,
                                         self._flow_or_connect().run_checks(prepared)))
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
