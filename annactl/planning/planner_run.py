"""One planning request in progress: budgets, model calls, repair, checks rounds, traces.

Split from :mod:`annactl.planning.planner` so the public types stay small; the
:class:`Run` is created by :meth:`Planner.plan` and lives for one request.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode, LLMError
from anna_common.findings import ValidationResult
from annactl.planning import forms, prompt, run_end
from annactl.planning.facts import contradictions
from annactl.planning.llm.errors import llm_error
from annactl.planning.llm.trace import Tracer
from annactl.planning.offrequest import off_request_findings
from annactl.planning.outcome import (
    FALLBACK_CODES,
    MAX_ROUNDS,
    OFFLINE_CODES,
    PlanOutcome,
    Progress,
    StoredPlan,
    template_outcome,
    usage_checks,
)
from annactl.planning.packet import (
    Trace,
    check_results_document,
    now_iso,
    piped_document,
    stored,
)
from annactl.planning.run_calls import ModelCalls
from annactl.planning.run_offline import OfflineBeside
from annactl.planning.telemetry_trim import cut

if TYPE_CHECKING:
    from anna_common.plan import ActionPlan
    from anna_common.protocol.models import CheckResult, SubmitResponse
    from anna_common.risk.rules.base import AssessContext
    from anna_common.telemetry import Telemetry
    from annactl.planning.outcome import PlanningSession
    from annactl.planning.piped import Piped
    from annactl.planning.templates import TemplateMatch

log = logging.getLogger(__name__)

Messages = list[dict[str, str]]

class Run(ModelCalls, OfflineBeside):
    """State of one request (its model calls: :class:`~annactl.planning.run_calls.ModelCalls`;
    the offline answer beside the model: :class:`~annactl.planning.run_offline.OfflineBeside`)."""

    def __init__(self, planner: PlanningSession, request: str, *, mode: str,
                 on_progress: Callable[[Progress], None] | None,
                 cancel: threading.Event | None) -> None:
        self.planner = planner
        self.settings = planner.settings
        self.request = request
        self.mode = mode
        self.on_progress = on_progress
        self.cancel = cancel
        self.started = time.monotonic()
        self.tracer = Tracer(self.settings, request=request)
        self.telemetry: Telemetry | None = None
        self.context: AssessContext | None = None
        self.stats = PlanOutcome(result=ValidationResult(ok=False, errors=[], warnings=[],
                                                         plan=None), plan=None,
                                 trace_id=self.tracer.trace_id)
        self.preferences: dict[str, str] | None = None
        self.sent = ""
        """The user message sent to the model (what it was told about this machine)."""
        self.packet: dict[str, Any] | None = None
        """The LLMCP request packet :attr:`sent` was rendered from."""
        self.started_at = now_iso()
        self.continuation: Messages = []
        """Turns after the user message (a fix request continues a failed plan)."""
        self.checks_ran: set[str] = set()
        """Commands of the necessary checks already run for this request."""
        self.stored_id: str | None = None
        """The daemon's id of the plan stored for this request's checks: each later round
        (and the final plan) revises it, so the request keeps one plan in history."""
        self.stored: StoredPlan | None = None
        """That plan as last stored (:class:`~annactl.planning.outcome.StoredPlan`)."""
        self.piped: Piped | None = None
        """Text piped in with the request (a document of the packet)."""
        self.turns: list[tuple[str, str]] = []
        """Recent turns sent with the request (a form switch renders them again)."""
        self.init_calls()
        self.init_offline()

    # ------------------------------------------------------------------ the request
    def execute(self, telemetry: Telemetry | None, *, use_templates: bool,
                turns: list[tuple[str, str]], preferences: dict[str, str] | None) -> PlanOutcome:
        """Plan the request (see :mod:`annactl.planning.planner`)."""
        self.request = usage_checks(self.request, self.mode)
        self._load_memory(preferences)
        self.progress("telemetry")
        self.telemetry = telemetry if telemetry is not None else self.planner.fetch_telemetry()
        self.context = self.planner.assess_context(self.telemetry)
        if not self.continuation:
            family = self.context.distro or ""  # one the package templates speak?
            self.choose_form(forms.choose(self.request, arch=family in forms.PACKAGE_FAMILIES))
        self.turns = turns
        self.packet = self._plan_packet(turns)
        found: TemplateMatch | None = None
        if use_templates and self.settings.templates and not self.continuation:
            self.progress("template")
            found = self.planner.match_template(self.request, self.telemetry)
            if found is not None and found.rejected:
                self.tracer.event("TEMPLATE_REJECTED", template=found.template,
                                  reason=found.rejected)
            if (found is not None and found.confident and found.plan is not None
                    and self.piped is None):  # a template cannot read piped text: the model first
                self.tracer.event("TEMPLATE_USED", template=found.template)
                self.form_why = "a template answered: the model was not asked"
                return self._done(template_outcome(found, self.context, offline_reason=None,
                                                   started=self.started))
        if found is not None and found.plan is not None:
            self.fallback = found
            checks = (self.form == "answer" and bool(found.plan.necessary_checks)
                      and self.planner.daemon is not None)
            offered = self.offer_offline(found, checks_follow=checks)  # before checks, model
            if checks:
                self.template_checks(found, offered)
            if not self.settings.llm_url:
                # a weak match and no model configured: one quick try, not three slow ones
                self.planner.quick_model_probe()
        try:
            return self._done(self.model_loop())
        except LLMError as exc:
            if exc.code in OFFLINE_CODES and self.fallback is None:
                self._explain_no_template(exc, found)
            if exc.code not in FALLBACK_CODES or self.fallback is None:
                raise
            return self._done(self._fall_back(exc, self.fallback))

    def _fall_back(self, exc: LLMError, found: TemplateMatch) -> PlanOutcome:
        """The template's answer, with a note saying why the model's was not used."""
        assert self.context is not None
        if exc.detail.get("busy"):
            why = "the model server was still busy with an earlier request"
        elif exc.detail.get("budget"):
            why = (f"the model did not finish within the {self.settings.llm_budget:g} s "
                   "budget (ANNA_LLM_BUDGET)")
        elif exc.detail.get("truncated"):
            why = "the model's reply was cut at the token cap"
        elif exc.code in OFFLINE_CODES:
            why = f"no model reachable ({exc.code})"
        else:
            why = f"the model's reply could not be used ({exc.code})"
        reason = f"{why}: answered offline by the {found.template} template"
        self.tracer.event("TEMPLATE_OFFLINE", template=found.template, code=str(exc.code),
                          reason=why)
        outcome = template_outcome(found, self.context, offline_reason=reason,
                                   started=self.started)
        for name in ("model_calls", "repairs", "llm_s", "server_s", "tokens_in", "tokens_out",
                     "form", "finish_reasons", "provider", "model", "checks"):
            if name in ("provider", "model") and not getattr(self.stats, name):
                continue
            setattr(outcome, name, getattr(self.stats, name))
        outcome.provider = "template"
        return outcome

    def _load_memory(self, preferences: dict[str, str] | None) -> None:
        """The memory goes to the model in every mode: the caller's, or the stored one."""
        from annactl.planning.memory import Memory, version_of

        if preferences is None:
            preferences = Memory(self.settings.state_dir).all()
        self.preferences = preferences
        self.stats.memory_version = version_of(preferences)

    def _plan_packet(self, turns: list[tuple[str, str]]) -> dict[str, Any]:
        assert self.telemetry is not None
        piped = None if self.piped is None else piped_document(
            self.piped.text, lines=self.piped.lines, truncated=self.piped.truncated)
        if self.form in forms.SMALL_FORMS:
            spec = prompt.small_spec(self.request, self.form, telemetry=self.telemetry,
                                     preferences=self.preferences, turns=turns, piped=piped)
        else:
            spec = prompt.plan_spec(self.request, mode=self.mode, telemetry=self.telemetry,
                                    preferences=self.preferences, turns=turns, piped=piped)
        history = self.planner.history
        conversation = None
        if history is not None:
            try:
                conversation = {"id": history.conversation_id, "turn": history.next_turn()}
            except Exception:  # the store is a convenience; a broken one is reported at the end
                conversation = None
        return prompt.packet_for(spec, self._trace(1), conversation=conversation)

    def _trace(self, step: int) -> Trace:
        return Trace(self.tracer.trace_id, self.planner.run_id, step)
    def _explain_no_template(self, exc: LLMError, found: TemplateMatch | None) -> None:
        """Add to a model failure which offline template came close, and why it did not fit."""
        from annactl.planning.templates.base import Context
        from annactl.planning.templates.nearmiss import near_miss

        assert self.telemetry is not None and self.context is not None
        ctx = Context(request=self.request, telemetry=self.telemetry,
                      assess_context=self.context, home=self.planner.home)
        why = near_miss(ctx, found)
        if why is not None:
            exc.hint = (f"no offline answer either: {why}"
                        + (f"; {exc.hint}" if exc.hint else ""))
            exc.detail["template_near_miss"] = why

    def _done(self, outcome: PlanOutcome) -> PlanOutcome:
        outcome.trace_id = self.tracer.trace_id
        outcome.stored_id = self.stored_id
        outcome.packet = self.packet
        outcome.memory_version = self.stats.memory_version
        outcome.telemetry = self.telemetry
        outcome.user_message = self.sent
        outcome.piped = self.piped
        outcome.elapsed_s = time.monotonic() - self.started
        outcome.form_why = self.form_why
        self.progress("done")
        return outcome

    def model_loop(self) -> PlanOutcome:
        """Ask the model, repair once if needed, then refine through necessary checks."""
        assert self.telemetry is not None
        provider = self.planner.provider
        stats = self.stats
        stats.provider, stats.model = provider.name, provider.model
        allowed = self.settings.allowed_models
        if allowed and provider.model not in allowed:
            raise llm_error(ErrorCode.LLM_BUDGET_EXCEEDED,
                            f"the model {provider.model!r} is not in allowed_models",
                            f"use one of: {', '.join(allowed)}")
        assert self.packet is not None
        user = prompt.render_packet(self.packet)
        self.sent = user
        self.tracer.set("packet", stored(self.packet))
        self.start_budget()
        base, result, reply = self._first_answer(self._base(user))
        while self._wants_checks(result):
            results = self.run_checks(result)
            if results is None:
                break
            stats.rounds += 1
            packet = prompt.packet_for(prompt.refine_spec(self.request, results,
                                                          form=self.form),
                                       self._trace(stats.model_calls + 1))
            self.tracer.event("PACKET", task="anna.refine", packet=stored(packet))
            refine = [*base, {"role": "assistant", "content": prompt.echo_reply(reply)},
                      {"role": "user", "content": prompt.render_packet(packet)}]
            try:
                result, reply = self.ask_valid(refine, "refine")
            except LLMError as exc:
                if not exc.detail.get("budget"):
                    raise
                # the time budget ran out during refinement: the plan from before stands
                self.tracer.event("REFINE_SKIPPED", reason="time budget spent")
                break
        # the model's path only: a template's answer needs none of these (bench/startup.py)
        from annactl.planning.citations import flagged, uncited, verify
        from annactl.planning.replies import failure

        if result.ok and result.plan is not None and not self.built:
            off = off_request_findings(result.plan, self.request)
            if off:  # refinement ended early (checks could not run): still not an answer
                self.tracer.event("VALIDATION_FAILED", purpose="final",
                                  codes=[str(off[0].code)])
                code, message = failure([str(off[0].code)])
                raise llm_error(code, message, "rephrase the request; " + self.trace_hint(),
                                findings=[f.model_dump(mode="json") for f in off],
                                trace_id=self.tracer.trace_id)
        stats.result = result
        stats.plan = result.plan.plan if result.ok and result.plan is not None else None
        if stats.plan is not None:
            stats.contradictions = contradictions(stats.plan, self.telemetry)
            stats.citations = verify(self.cited, self.packet["context"]["documents"])
            stats.contradictions += flagged(stats.citations)
            if self.form == "answer" and not self.built:
                stats.contradictions += uncited(stats.plan.notes_for_user, stats.citations)
            if stats.contradictions:
                self.tracer.event("CONTRADICTIONS", facts=[c.to_dict()
                                                           for c in stats.contradictions])
        return stats

    def _first_answer(self, base: Messages) -> tuple[Messages, ValidationResult, str]:
        """The first usable reply; an unknown model that did not close the contract in its
        share of the budget is asked again in the request's small form."""
        try:
            return (base, *self.ask_valid(base, "plan"))
        except LLMError as exc:
            if not self.trial_failed(exc):
                raise
        self.packet = self._plan_packet(self.turns)
        base = self._base(prompt.render_packet(self.packet))
        return (base, *self.ask_valid(base, "plan"))

    def _base(self, user: str) -> Messages:
        """The system and user messages of the request's form (and any continuation)."""
        self.sent = user
        base: Messages = [{"role": "system", "content": prompt.system_message(self.form)},
                          {"role": "user", "content": user}, *self.continuation]
        self.tracer.set("prompt", {"version": prompt.prompts().version,
                                   "sha256": prompt.prompts().sha256,
                                   "system_bytes": len(base[0]["content"].encode()),
                                   "user_bytes": len(user.encode())})
        return base

    def may_refine(self, result: ValidationResult) -> bool:
        """A refined plan can still follow this one (it has checks and rounds remain)."""
        return bool(result.plan is not None and result.plan.plan.necessary_checks
                    and self.planner.daemon is not None and self.stats.rounds < MAX_ROUNDS
                    and self.stats.model_calls < self.settings.max_model_calls)

    def _wants_checks(self, result: ValidationResult) -> bool:
        if not result.ok or result.plan is None or not result.plan.plan.necessary_checks:
            return False
        if self.planner.daemon is None or self.stats.rounds >= MAX_ROUNDS:
            return False
        if {c.command for c in result.plan.plan.necessary_checks} <= self.checks_ran:
            # a refined plan that keeps its checks: their results are known, and the next
            # request would be byte-identical to the last (a wasted call, another stored plan)
            self.tracer.event("REFINE_SKIPPED", reason="its checks have run already")
            return False
        if self.stats.model_calls >= self.settings.max_model_calls:
            self.tracer.event("REFINE_SKIPPED", reason="model call budget spent")
            return False
        return True

    # ------------------------------------------------------------------ checks
    def run_checks(self, result: ValidationResult) -> list[CheckResult] | None:
        """Submit the plan and run its necessary checks on the daemon; None when impossible."""
        from anna_common.protocol.models import SessionEnv

        daemon = self.planner.daemon
        assert daemon is not None and result.plan is not None
        self.progress("checks")
        try:
            submitted = self._store(result.plan.plan, "model")
            response = daemon.run_checks(submitted.plan_id,
                                         session=SessionEnv.from_environ(dict(os.environ)))
        except AnnaError as exc:
            self.tracer.event("CHECKS_FAILED", code=str(exc.code), message=exc.message)
            log.info("necessary checks could not run: %s", exc.message)
            return None
        self.tracer.event("CHECKS_RUN", plan_id=submitted.plan_id, count=len(response.results),
                          ran=sum(1 for r in response.results if r.ran))
        self._store_checks(list(response.results))
        self.checks_ran.update(c.command for c in result.plan.plan.necessary_checks)
        return list(response.results)

    def _store(self, plan: ActionPlan, source: str) -> SubmitResponse:
        """Store ``plan`` to run its checks: the request's first plan, then revisions of it
        (the checks of every round stay events of that one plan in the daemon's journal).
        Not previewed: the plan shown is the refined one that revises it (and is previewed)."""
        daemon = self.planner.daemon
        assert daemon is not None
        submitted = daemon.submit(plan, request=self.request, source=source,
                                  revises=self.stored_id, preview=False)
        self.stored_id = submitted.plan_id
        self.stored = StoredPlan(plan, self.request, source, submitted)
        return submitted

    def _store_checks(self, results: list[CheckResult]) -> None:
        """Keep check results, and store them as a document of the request (seed 001)."""
        self.stats.checks.extend(results)
        if self.packet is None:
            return
        rows = [{"id": r.id, "ran": r.ran, "exit_code": r.exit_code,
                 "output": cut(r.output, 1200), "reason": r.reason} for r in results[:20]]
        doc = check_results_document(rows).to_dict()
        doc["doc_id"] = f"doc:check_results:{self.stats.rounds + 1}"
        self.packet["context"]["documents"].append(doc)

    # ------------------------------------------------------------------ the end
    def finish(self, outcome: PlanOutcome | None, error: AnnaError | None) -> None:
        """Write the trace and the history packets (:func:`run_end.finish`)."""
        run_end.finish(self, outcome, error, mode=self.mode, started_at=self.started_at,
                       preferences=self.preferences, packet=self.packet)
