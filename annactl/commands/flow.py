"""The one path a plan takes through the client, shared by one-shot, REPL and TUI.

request or file or stored id → (planner) → ``daemon.submit`` → the *daemon's*
annotated plan → read-only checks → (confirmation, by the front end) →
``daemon.execute`` → events → the journal's record → (rollback). When the daemon
stops answering mid-plan, the events go on with :mod:`annactl.commands.follow`: it waits for
the daemon to come back and ends with the plan's real outcome.

The front ends differ only in how they show things and how they ask; what
gets planned, submitted, approved and executed is decided here and in
:mod:`annactl.ui.confirm`.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode, PlanError
from annactl.commands.prepared import Prepared

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Iterator

    from anna_common.findings import AnnotatedPlan, Finding
    from anna_common.protocol.models import (
        CheckResult,
        ExecEvent,
        PlanRecord,
        RollbackResponse,
        SessionEnv,
    )
    from anna_common.telemetry import Telemetry
    from annactl.commands.follow import Follower
    from annactl.core.config import ClientSettings
    from annactl.core.daemon_client import DaemonClient
    from annactl.core.quicksettings import QuickSettings
    from annactl.planning.outcome import PlanOutcome, Progress
    from annactl.planning.piped import Piped
    from annactl.ui.confirm import Approval


def session_env() -> SessionEnv:
    """The caller's whitelisted session environment (desktop detection, user-scope steps)."""
    from anna_common.protocol.models import SessionEnv

    return SessionEnv.from_environ(dict(os.environ))


class PlanRejected(PlanError):
    """A plan failed validation (or is banned); carries Anna's annotation so it can be shown."""

    def __init__(self, message: str, *, code: ErrorCode, detail: dict[str, Any],
                 annotated: AnnotatedPlan | None) -> None:
        super().__init__(message, code=code, detail=detail)
        self.annotated = annotated


def invalid_plan(message: str, findings: list[Finding],
                 annotated: AnnotatedPlan | None = None) -> PlanRejected:
    """The error for a plan that failed validation, findings attached (exit 3)."""
    banned = any(f.code == "BANNED_COMMAND" for f in findings) or bool(
        annotated is not None and annotated.banned)
    lines = "; ".join(f"{f.code} {f.path}: {f.message}" if f.path else f"{f.code}: {f.message}"
                      for f in findings[:5])
    return PlanRejected(f"{message}: {lines}" if lines else message,
                        code=ErrorCode.PLAN_BANNED if banned else ErrorCode.PLAN_INVALID,
                        detail={"findings": [f.model_dump(mode="json") for f in findings]},
                        annotated=annotated)


class Flow:
    """Plans, submits, checks, executes and rolls back through one daemon client."""

    def __init__(self, settings: ClientSettings | QuickSettings, daemon: DaemonClient) -> None:
        self.settings = settings
        """The client settings (applying a stored plan reads only a few: QuickSettings)."""
        self.daemon = daemon
        self._planner: Any = None
        self._history: Any = None
        self._history_opened = False
        self._followed: dict[str, Follower] = {}
        self._final: dict[str, PlanRecord] = {}

    def planner(self) -> Any:
        """The planner (built on first use: only commands that plan pay for it)."""
        if self._planner is None:
            from annactl.core.quicksettings import QuickSettings
            from annactl.planning.planner import Planner

            if isinstance(self.settings, QuickSettings):  # planning reads every setting
                from annactl.core.config import load_settings

                self.settings = load_settings()
            self._planner = Planner(self.settings, daemon=self.daemon, history=self.history())
        return self._planner

    def history(self) -> Any:
        """The conversation store (opened on first use, shared with the planner), or None
        when it cannot be opened."""
        if not self._history_opened:
            self._history_opened = True
            self._history = _history(self.settings)
        return self._history

    def plan_text(self, request: str, *, mode: str = "one-shot", use_templates: bool = True,
                  turns: list[tuple[str, str]] | None = None,
                  preferences: dict[str, str] | None = None, telemetry: Telemetry | None = None,
                  on_progress: Callable[[Progress], None] | None = None,
                  cancel: threading.Event | None = None,
                  continuation: list[dict[str, str]] | None = None,
                  piped: Piped | None = None,
                  on_offline: Callable[[Prepared], None] | None = None,
                  on_offline_checks: Callable[[Prepared], None] | None = None) -> Prepared:
        """Ask the planner for a plan and store it in the daemon (``continuation``: the
        turns of a fix request, :mod:`annactl.planning.fix`; ``piped``: text piped in with
        the request).

        ``on_offline`` (issue 24.1): gets Anna's offline answer, stored, while the model is
        still working (in the planner's thread). When the model then fails and that template
        answers after all, the same plan is returned (the same object), never stored twice.
        ``on_offline_checks``: gets that plan again, its ``checks`` filled, when the planner
        ran them itself (a question's, for the model to read; ``outcome.checks_follow``), so
        a front end never runs them a second time.
        """
        early: list[Prepared] = []

        def offline(first: PlanOutcome) -> None:
            assert on_offline is not None and first.plan is not None
            prepared = self.submit(first.plan, request=request, source="template")
            prepared.outcome = first
            first.stored_id = prepared.plan_id  # a question's checks run on this plan
            from annactl.planning.templates import records_first

            if records_first(first.template, first.template_confident):
                prepared = self._recorded(prepared, request)
            early.append(prepared)
            on_offline(prepared)

        def offline_checks(first: PlanOutcome) -> None:
            assert on_offline_checks is not None
            for prepared in early:
                if prepared.outcome is first:
                    prepared.checks = list(first.checks)
                    on_offline_checks(prepared)

        outcome = self.planner().plan(request, mode=mode, telemetry=telemetry,
                                      use_templates=use_templates, turns=list(turns or []),
                                      preferences=preferences, on_progress=on_progress,
                                      cancel=cancel, continuation=continuation or (),
                                      piped=piped,
                                      on_offline=offline if on_offline is not None else None,
                                      on_offline_checks=offline_checks
                                      if on_offline_checks is not None else None)
        if outcome.plan is None or not outcome.result.ok:
            raise invalid_plan("the model's plan cannot be offered", outcome.result.errors,
                               outcome.result.plan)
        if early and early[0].outcome is not None and outcome.offline_reason and \
                outcome.template == early[0].outcome.template:
            # the model failed and the template answered after all: the plan already shown
            outcome.plan = early[0].outcome.plan
            early[0].outcome = outcome
            return early[0]
        source = "template" if outcome.template else "model"
        # the plan stored for the checks' rounds, if any, becomes this one: one plan per
        # request. It is submitted even when equal to the stored one, which was stored only
        # for its checks (not previewed, not executable): this submit makes the one preview.
        prepared = self.submit(outcome.plan, request=request, source=source,
                               revises=outcome.stored_id)
        prepared.outcome = outcome
        prepared.checks = list(outcome.checks)
        if not outcome.template:  # a model's plan: no template records first, none is loaded
            return prepared
        from annactl.planning.templates import records_first

        if records_first(outcome.template, outcome.template_confident):
            prepared = self._recorded(prepared, request)
        return prepared

    def _recorded(self, first: Prepared, request: str) -> Prepared:
        """A recording template's second round: run the first plan's read-only checks
        (they record the current state), plan again with what they printed, and offer that
        plan — a new plan with its own digest, validated by the daemon like any. The first
        is recorded as never run. When the template no longer answers, the first stays."""
        from contextlib import suppress

        from annactl.planning.templates import match

        outcome = first.outcome
        telemetry = outcome.telemetry if outcome is not None else None
        if outcome is None or telemetry is None:
            return first
        results = self.run_checks(first)
        recorded = {r.id: r.output for r in results if r.ran and r.exit_code == 0}
        planner = self.planner()
        found = match(request, telemetry, context=planner.assess_context(telemetry),
                      home=planner.home, recorded=recorded)
        if found is None or found.plan is None or found.template != outcome.template:
            return first
        second = self.submit(found.plan, request=request, source="template",
                             revises=first.plan_id)
        if second.plan_id != first.plan_id:
            with suppress(AnnaError):  # bookkeeping: the plan offered is the second one
                self.daemon.mark_dry_run(first.plan_id)
        outcome.plan = found.plan
        second.outcome = outcome
        # the checks run again for the plan that is offered: its results are its own
        self.run_checks(second)
        return second

    def plan_file_text(self, text: str, *, name: str = "plan file") -> Prepared:
        """A plan from a file goes through the same validation as a model reply."""
        from anna_common.validate import validate_text
        from annactl.core.environment import local_context

        result = validate_text(text, local_context())
        if not result.ok or result.plan is None:
            raise invalid_plan(f"{name} is not a valid plan", result.errors, result.plan)
        return self.submit(result.plan.plan, request=f"(from {name})", source="file")

    def submit(self, plan: Any, *, request: str, source: str, revises: str | None = None
               ) -> Prepared:
        """Store a plan; the daemon validates and annotates it itself. ``revises``: the
        request's plan stored earlier (for its checks), which this one replaces; when that
        one can no longer be revised (it ran, or was removed), the plan is stored anew."""
        response = None
        if revises is not None:
            try:
                response = self.daemon.submit(plan, request=request, source=source,
                                              revises=revises)
            except AnnaError as exc:
                if exc.code not in (ErrorCode.PLAN_NOT_FOUND, ErrorCode.PLAN_STATE):
                    raise
                log.info("plan %s cannot be revised (%s): stored anew", revises, exc.message)
        if response is None:
            response = self.daemon.submit(plan, request=request, source=source)
        return Prepared(plan_id=response.plan_id, digest=response.digest,
                        annotated=response.annotated, source=source, request=request,
                        warnings=list(response.warnings), preview=response.preview)

    def stored(self, plan_id: str) -> Prepared:
        """A plan the daemon already holds (``apply ID``, ``tui --plan ID``)."""
        record = self.daemon.get_plan(plan_id)
        preview = None
        if record.annotated.steps:
            try:
                preview = self.daemon.preview(plan_id)
            except AnnaError as exc:  # the plan is still shown and approvable on its own
                log.warning("no preview for plan %s: %s", plan_id, exc.message)
        return Prepared(plan_id=record.plan_id, digest=record.digest,
                        annotated=record.annotated, source="stored", request=record.request,
                        preview=preview)

    def run_checks(self, prepared: Prepared) -> list[CheckResult]:
        """Run the plan's read-only checks (the daemon refuses any that are not)."""
        if not prepared.annotated.checks:
            return []
        prepared.checks = list(self.daemon.run_checks(prepared.plan_id,
                                                      session=self.daemon.session()).results)
        return prepared.checks

    def execute(self, prepared: Prepared, approval: Approval, *,
                keep_on_verify_fail: bool = False) -> Iterator[ExecEvent]:
        """Execute exactly the plan shown (by digest) with the approval given.

        Refusals raise here. The events follow the plan to its end even if the daemon
        stops answering on the way (then :meth:`record` returns the outcome read after).
        """
        from annactl.commands.follow import Follower

        stream = self.daemon.execute(prepared.plan_id, prepared.digest,
                                     confirmed=approval.confirmed,
                                     high_confirmed=approval.high_confirmed,
                                     session=self.daemon.session(), confirm_word=approval.word,
                                     keep_on_verify_fail=keep_on_verify_fail)
        follower = Follower(self.daemon, prepared, wait_s=self.settings.reconnect_wait_s)
        self._followed[prepared.plan_id] = follower
        return _followed(follower, stream)

    def record(self, plan_id: str) -> PlanRecord:
        """The journal's view of a plan (for a plan just executed: as read at its end)."""
        follower = self._followed.pop(plan_id, None)
        if follower is not None and follower.record is not None:
            return follower.record
        final = self._final.pop(plan_id, None)
        return final if final is not None else self.daemon.get_plan(plan_id)

    def cancel(self, plan_id: str) -> PlanRecord:
        """Stop a running plan; the daemon rolls it back."""
        return self.daemon.cancel(plan_id)

    def rollback(self, plan_id: str, *, confirm_word: str | None = None) -> RollbackResponse:
        """Undo a finished (or interrupted, or failed) plan (``confirm_word``: the word a
        HIGH rollback command needs).

        A daemon being stopped answers the rollback (it waits for it, or stops it between
        two steps: ``interrupted``) and may be gone a moment later: :meth:`record` then
        returns the plan as the rollback's answer described it.
        """
        from annactl.commands.follow import after_rollback

        before = self.daemon.get_plan(plan_id)
        response = self.daemon.rollback(plan_id, session=self.daemon.session(),
                                         confirm_word=confirm_word)
        self._final[plan_id] = after_rollback(self.daemon, before, response)
        return response


def _followed(follower: Follower, stream: Iterator[ExecEvent]) -> Iterator[ExecEvent]:
    yield from follower.events(stream)
    yield from follower.final_record()


def _history(settings: ClientSettings | QuickSettings) -> Any:
    """The conversation store, or None when it cannot be opened (planning still works)."""
    try:
        from annactl.planning.history import History

        return History(settings.state_dir)
    except Exception:  # history is a convenience, never a reason to fail planning
        return None


def connect_flow(settings: ClientSettings) -> Flow:
    """A :class:`Flow` on the daemon that :func:`~annactl.core.daemon_client.connect` finds."""
    from annactl.core.daemon_client import connect

    return Flow(settings, connect(settings))
