"""Anna's offline answer beside the model in one planning run (issue 24.1).

Split from :mod:`annactl.planning.planner_run` as a base class of its
:class:`~annactl.planning.planner_run.Run`: a weakly matching template's answer goes to the
front end before any check or model time (``on_offline``), and a question's template checks
run once, on that stored plan, for the model to read. The front end showing the answer gets
their results (``on_offline_checks``) instead of running the same checks a second time:
each ``POST /plans/ID/checks`` is a confined run of every check, journalled as a round.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from anna_common.errors import AnnaError
from annactl.planning.outcome import PlanOutcome, template_outcome

if TYPE_CHECKING:
    from anna_common.plan import ActionPlan
    from anna_common.protocol.models import CheckResult, SubmitResponse
    from anna_common.risk.rules.base import AssessContext
    from anna_common.telemetry import Telemetry
    from annactl.planning.llm.trace import Tracer
    from annactl.planning.outcome import PlanningSession
    from annactl.planning.templates import TemplateMatch


class OfflineBeside:
    """The offline answer shown first, and its checks run once (state lives on the run)."""

    planner: PlanningSession
    tracer: Tracer
    telemetry: Telemetry | None
    context: AssessContext | None
    started: float

    def init_offline(self) -> None:
        """The hooks and the stored offline answer of a fresh run."""
        self.on_offline: Callable[[PlanOutcome], None] | None = None
        """Gets a weak template's outcome before the model is asked (issue 24.1); a front
        end that stores it sets the outcome's ``stored_id`` (kept in :attr:`offline_id`)."""
        self.offline_id: str | None = None
        """The daemon's id of the offline answer the front end stored (None: none)."""
        self.on_offline_checks: Callable[[PlanOutcome], None] | None = None
        """Gets that outcome again, its ``checks`` filled, once the run ran them (its
        ``checks_follow`` said it would), so the front end never runs them itself."""

    def progress(self, stage: str, tokens: int = 0, message: str = "") -> None:
        """Report a stage (:class:`~annactl.planning.run_calls.ModelCalls` does)."""
        raise NotImplementedError

    def _store(self, plan: ActionPlan, source: str) -> SubmitResponse:
        """Store a plan for its checks (the run does)."""
        raise NotImplementedError

    def _store_checks(self, results: list[CheckResult]) -> None:
        """Keep check results for the model (the run does)."""
        raise NotImplementedError

    def offer_offline(self, found: TemplateMatch, *, checks_follow: bool
                      ) -> PlanOutcome | None:
        """The weak template's answer goes to the front end now, while the model works; a
        failure to show it never stops the model (the template still answers if it fails).
        ``checks_follow``: :meth:`template_checks` runs its checks next. The outcome the
        front end got, or None."""
        if self.on_offline is None:
            return None
        assert self.context is not None
        outcome = template_outcome(found, self.context, offline_reason=None,
                                   started=self.started)
        if outcome.plan is None:
            return None
        outcome.telemetry, outcome.trace_id = self.telemetry, self.tracer.trace_id
        outcome.checks_follow = checks_follow
        self.tracer.event("TEMPLATE_FIRST", template=found.template)
        try:
            self.on_offline(outcome)
        except AnnaError as exc:
            self.tracer.event("TEMPLATE_FIRST_FAILED", code=str(exc.code), message=exc.message)
            return None
        self.offline_id = outcome.stored_id
        return outcome

    def template_checks(self, found: TemplateMatch, offered: PlanOutcome | None) -> None:
        """Before a question is asked in the answer form: run the (weakly) matching template's
        read-only checks on the daemon, so the model can answer from, and cite, their output
        (``check:<id>``). Nothing runs without a daemon; a daemon error skips them. When the
        same template's answer was stored and shown first (``offered``), its checks are that
        plan's (not a second stored copy's), the front end gets their results, and the
        model's answer is a plan of its own: the person saw the first one, so it is never
        revised under them (docs/planning.md)."""
        from anna_common.protocol.models import SessionEnv

        daemon = self.planner.daemon
        assert daemon is not None and found.plan is not None
        self.progress("checks")
        results: list[CheckResult] = []
        try:
            plan_id = self.offline_id or self._store(found.plan, "template").plan_id
            response = daemon.run_checks(plan_id,
                                         session=SessionEnv.from_environ(dict(os.environ)))
        except AnnaError as exc:
            self.tracer.event("CHECKS_FAILED", code=str(exc.code), message=exc.message)
        else:
            results = list(response.results)
            self.tracer.event("CHECKS_RUN", plan_id=plan_id, count=len(results),
                              ran=sum(1 for r in results if r.ran), template=found.template)
            self._store_checks(results)
        if offered is not None and self.on_offline_checks is not None:
            offered.checks = results  # empty when they could not run: nothing more comes
            self.on_offline_checks(offered)
