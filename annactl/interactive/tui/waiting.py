"""The TUI while the model works (issue 24): the progress line and Anna's offline answer first.

The progress line ticks on its own (every :data:`TICK_S`) with the time used of the model
budget, as the CLI spinner shows it (:mod:`annactl.ui.waiting`), not only when the planner
reports.

When a template matches the request only weakly, its answer (stored in the daemon) is shown
at once, labelled with its template and confidence, while the model goes on within its budget.
What the person approves is always the plan on screen:

* the model's plan, arriving while the offline answer's approval box is open, never replaces
  it: the box says the model's plan is ready and ``m`` shows it (the offline answer is then
  recorded as not run);
* approving the offline answer, or ``w`` (stop waiting), ends the wait: a model plan that
  still arrives is recorded as not run and never shown;
* cancelling the offline answer keeps waiting for the model (the answer is recorded as not
  run; ``annactl apply ID`` still runs it);
* when the model fails and the template answers after all, it is the same stored plan: the
  box only says why.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Static

from annactl.core.exit_codes import ExitStatus
from annactl.interactive.tui.messages import PlanReady
from annactl.interactive.tui.screens import Decision
from annactl.interactive.tui.screens.approval import ApprovalScreen
from annactl.interactive.tui.workers import TuiWorkers
from annactl.ui.console import inert
from annactl.ui.waiting import offline_label, progress_line

if TYPE_CHECKING:
    from collections.abc import Callable

    from annactl.commands.flow import Flow
    from annactl.commands.prepared import Prepared
    from annactl.interactive.tui.messages import (
        OfflineAnswer,
        PlanningProgress,
        WorkFailed,
    )
    from annactl.interactive.tui.workers import Source
    from annactl.planning.outcome import Progress

TICK_S = 0.5
"""How often the progress line is redrawn while planning."""
KEYS = "  (m: the model's plan once it is ready · w: stop waiting)"
"""What the person can do while the offline answer waits beside the model."""


class WaitingApp(TuiWorkers):
    """The progress line and the offline answer (the app's base class, above the workers)."""

    BINDINGS = [  # noqa: RUF012 - Textual's declared type
        Binding("m", "model_plan", "Model's plan"),
        Binding("w", "stop_waiting", "Stop waiting"),
    ]

    def __init__(self, source: Source, *, connect: Callable[[], Flow] | None = None) -> None:
        super().__init__(source, connect=connect)
        self._latest: Progress | None = None
        self._progress_at = 0.0
        self.offline: Prepared | None = None
        """Anna's offline answer, once shown."""
        self._offline_box: ApprovalScreen | None = None
        """Its approval box while the person has not decided."""
        self.model_ready: Prepared | None = None
        """The model's plan, held back while the offline answer's box is open."""
        self.waiting_model = False
        """The model is still working beside a shown offline answer."""
        self._late = False
        """The person stopped waiting: the planner's last word is still to come, unshown."""

    def on_mount(self) -> None:
        """Redraw the progress line on a clock, not only when the planner reports."""
        self.set_interval(TICK_S, self._tick)

    # ------------------------------------------------------------------ the progress line
    def on_planning_progress(self, message: PlanningProgress) -> None:
        """Planning stage, elapsed time, tokens and the model budget used."""
        self._latest, self._progress_at = message.progress, time.monotonic()
        self._tick()

    def _tick(self) -> None:
        progress = self._latest
        if progress is None or progress.stage == "done":
            return
        now = time.monotonic()
        line = progress_line(progress, progress.elapsed_s + now - self._progress_at, now)
        self.query_one("#state", Static).update(line)

    def planning_over(self) -> None:
        """The planner finished (a plan, or a failure): the line stops."""
        self._latest = None

    # ------------------------------------------------------------------ the offline answer
    def on_offline_answer(self, message: OfflineAnswer) -> None:
        """Show Anna's offline answer at once; the model goes on."""
        prepared = self.offline = self.prepared = message.prepared
        self.waiting_model = True
        label = offline_label(prepared.outcome, prepared.plan_id, waiting=True)
        label.append(KEYS, style="dim")
        if not prepared.annotated.steps:  # nothing to approve: the answer, above the line
            from annactl.ui import render

            self.status = ExitStatus.SUCCESS  # an answer was given
            self.default_screen.mount(Static(label, id="offline-label"),
                                      Static(render.notes_only(prepared.annotated),
                                             id="offline"),
                                      before=self.query_one("#state", Static))
        else:
            follow = prepared.outcome is not None and prepared.outcome.checks_follow
            if prepared.annotated.checks and not prepared.checks and not follow and \
                    self._connect is not None:  # the planner's run comes back otherwise
                self.run_checks(prepared)
            self._offline_box = ApprovalScreen(prepared, banner=label)
            self.push_screen(self._offline_box, self._offline_decided)
        self.refresh_bindings()

    def _end_of_wait(self) -> tuple[bool, bool] | None:
        """The planning run beside the offline answer ended: ``(late, waiting)`` — the
        person had stopped waiting, or was still waiting for the model — or None when
        neither (a later planning run, shown as any)."""
        late, self._late = self._late, False
        waiting, self.waiting_model = self.waiting_model, False
        if not (late or waiting):
            return None
        self.planning_over()
        self.refresh_bindings()
        return late, waiting

    def hold_back(self, prepared: Prepared) -> bool:
        """Called with every plan a planner finishes: True when it must not be shown now.
        Only the planning run that showed the offline answer is concerned; a later one (a
        fix after the offline answer ran) is shown as any plan."""
        if self.offline is None:
            return False
        ended = self._end_of_wait()
        if ended is None:
            return False
        late, waiting = ended
        if prepared is self.offline:  # the model failed: the same offline answer stands
            if waiting:
                reason = prepared.outcome.offline_reason if prepared.outcome else None
                self._say(Text("The offline answer stands: " + inert(reason or "",
                                                                      max_chars=200)))
            return True
        if late:  # the person stopped waiting or took the offline answer: never shown
            if prepared.source != "rejected":
                self._not_run(prepared.plan_id)
            return True
        if self._offline_box is not None:
            self.model_ready = prepared
            self._say(Text("The model's plan is ready: press m to see it instead. This box "
                           "keeps Anna's offline answer until you do.", style="bold"))
            self.notify("The model's plan is ready: m shows it.", markup=False)
            self.refresh_bindings()
            return True
        self._say(Text("The model's answer is below.", style="bold"))  # a shown answer
        return False

    def quiet_failure(self, message: WorkFailed) -> bool:
        """A planning failure beside a shown offline answer: the answer stands (True: the
        failure is handled here)."""
        if self.offline is None or message.stage != "plan":
            return False
        ended = self._end_of_wait()
        if ended is None:
            return False
        _, waiting = ended
        if waiting:
            line = f"{message.code}: {inert(message.message, max_chars=200)}"
            self.notify(line, title="the model failed", severity="warning", markup=False)
            self._say(Text(f"The model failed ({message.code}); Anna's offline answer stands."))
        return True

    def _say(self, line: Text) -> None:
        """A line under the offline answer's label (in its box, or above the state line)."""
        assert self.offline is not None
        offline = self.offline
        label = offline_label(offline.outcome, offline.plan_id, waiting=False)
        label.append("\n").append_text(line)
        if self._offline_box is not None:
            self._offline_box.set_banner(label)
        for widget in self.query("#offline-label").results(Static):
            widget.update(label)

    def _offline_decided(self, decision: Decision | None) -> None:
        offline, self._offline_box = self.offline, None
        model, self.model_ready = self.model_ready, None
        assert offline is not None
        self.refresh_bindings()
        if decision == Decision.APPROVE:
            self._stop_waiting()
            if model is not None and model.source != "rejected":
                self._not_run(model.plan_id)  # held back, never chosen
            self.prepared = offline
            self._decided(decision)
            return
        if model is None and not self.waiting_model:
            self._decided(decision)  # nothing else is coming: cancelled, as any plan
            return
        self._not_run(offline.plan_id)
        self.offline = None  # declined: what the model brings is shown as any plan
        if model is not None:  # Decision.SWITCH, or a cancel when the model's plan is ready
            self.post_message(PlanReady(model))
            return
        self.query_one("#state", Static).update(Text(
            "You declined Anna's offline answer; waiting for the model's plan.  (q quits)",
            style="dim"))

    def action_model_plan(self) -> None:
        """``m``: leave the offline answer for the model's plan, which has arrived."""
        box = self._offline_box
        if self.model_ready is None or box is None:
            self.notify("The model's plan has not arrived.", markup=False)
            return
        if self.screen is not box:
            self.notify("Close the details first.", markup=False)
            return
        box.dismiss(Decision.SWITCH)

    def action_stop_waiting(self) -> None:
        """``w``: stop waiting for the model; the offline answer stands."""
        if self.offline is None or not self.waiting_model:
            return
        self._stop_waiting()
        self._say(Text("You stopped waiting for the model; this answer stands."))

    def _stop_waiting(self) -> None:
        import threading

        if not self.waiting_model:
            return  # the planner is done already: nothing more will come
        self.waiting_model, self._late = False, True
        self.planning_over()
        self.cancel_planning.set()
        # a later fix is planned with a fresh event (the one set belongs to this request)
        self.cancel_planning = threading.Event()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``m`` and ``w`` are offered only while they mean something."""
        if action == "model_plan":
            return self.model_ready is not None and self._offline_box is not None
        if action == "stop_waiting":
            return self.offline is not None and self.waiting_model
        return True

    # ------------------------------------------------------------------ for the app
    def _decided(self, decision: Decision | None) -> None:
        """What the app does with a decision on a plan (the app defines it)."""
        raise NotImplementedError

    def _not_run(self, plan_id: str) -> None:
        """A plan not chosen is recorded as shown and not run, never left ``submitted``."""
        from contextlib import suppress

        from anna_common.errors import AnnaError

        if self._flow is None:
            return  # no daemon was reached (a plan handed in): nothing to record
        with suppress(AnnaError):
            self._flow.daemon.mark_dry_run(plan_id)
