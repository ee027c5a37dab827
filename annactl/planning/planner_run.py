"""One planning request in progress: budgets, model calls, repair, checks rounds, traces.

Split from :mod:`annactl.planning.planner` so the public types stay small; the
:class:`Run` is created by :meth:`Planner.plan` and lives for one request.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode, LLMError
from anna_common.findings import Finding, FindingCode, ValidationResult
from anna_common.plan import canonical_json
from anna_common.validate import validate_text
from annactl.planning import prompt
from annactl.planning.audit import AuditLog, run_record
from annactl.planning.facts import contradictions
from annactl.planning.grounding import echo_findings
from annactl.planning.llm.base import ChatResult, check_cancel, llm_error
from annactl.planning.llm.trace import Tracer
from annactl.planning.offrequest import off_request_findings
from annactl.planning.outcome import (
    MAX_ROUNDS,
    OFFLINE_CODES,
    PlanOutcome,
    Progress,
    is_banned,
    template_outcome,
    usage_checks,
)
from annactl.planning.packet import Trace, now_iso, stored
from annactl.planning.replies import chat_request, failure

if TYPE_CHECKING:
    from anna_common.protocol.models import CheckResult
    from anna_common.risk.rules.base import AssessContext
    from anna_common.telemetry import Telemetry
    from annactl.planning.outcome import PlanningSession
    from annactl.planning.templates import TemplateMatch

log = logging.getLogger(__name__)

Messages = list[dict[str, str]]

class Run:
    """State of one request."""

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

    # ------------------------------------------------------------------ progress
    def progress(self, stage: str, tokens: int = 0, message: str = "") -> None:
        """Report progress (and honour cancellation)."""
        check_cancel(self.cancel)
        if self.on_progress is not None:
            self.on_progress(Progress(stage, time.monotonic() - self.started, tokens, message))

    # ------------------------------------------------------------------ the request
    def execute(self, telemetry: Telemetry | None, *, use_templates: bool,
                turns: list[tuple[str, str]], preferences: dict[str, str] | None) -> PlanOutcome:
        """Plan the request (see :mod:`annactl.planning.planner`)."""
        self.request = usage_checks(self.request, self.mode)
        self._load_memory(preferences)
        self.progress("telemetry")
        self.telemetry = telemetry if telemetry is not None else self.planner.fetch_telemetry()
        self.context = self.planner.assess_context(self.telemetry)
        self.packet = self._plan_packet(turns)
        found: TemplateMatch | None = None
        if use_templates and self.settings.templates and not self.continuation:
            self.progress("template")
            found = self.planner.match_template(self.request, self.telemetry)
            if found is not None and found.rejected:
                self.tracer.event("TEMPLATE_REJECTED", template=found.template,
                                  reason=found.rejected)
            if found is not None and found.confident and found.plan is not None:
                self.tracer.event("TEMPLATE_USED", template=found.template)
                return self._done(template_outcome(found, self.context, offline_reason=None,
                                                   started=self.started))
        if found is not None and found.plan is not None and not self.settings.llm_url:
            # a weak match and no model configured: one quick try, not three slow ones
            self.planner.quick_model_probe()
        try:
            return self._done(self.model_loop())
        except LLMError as exc:
            if exc.code in OFFLINE_CODES and (found is None or found.plan is None):
                self._explain_no_template(exc, found)
            if exc.code not in OFFLINE_CODES or found is None or found.plan is None:
                raise
            reason = (f"no model reachable ({exc.code}): answered offline by the "
                      f"{found.template} template")
            self.tracer.event("TEMPLATE_OFFLINE", template=found.template, code=str(exc.code))
            outcome = template_outcome(found, self.context, offline_reason=reason,
                                       started=self.started)
            outcome.model_calls = self.stats.model_calls
            return self._done(outcome)

    def _load_memory(self, preferences: dict[str, str] | None) -> None:
        """The memory goes to the model in every mode: the caller's, or the stored one."""
        from annactl.planning.memory import Memory, version_of

        if preferences is None:
            preferences = Memory(self.settings.state_dir).all()
        self.preferences = preferences
        self.stats.memory_version = version_of(preferences)

    def _plan_packet(self, turns: list[tuple[str, str]]) -> dict[str, Any]:
        assert self.telemetry is not None
        spec = prompt.plan_spec(self.request, mode=self.mode, telemetry=self.telemetry,
                                preferences=self.preferences, turns=turns)
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
        outcome.packet = self.packet
        outcome.memory_version = self.stats.memory_version
        outcome.telemetry = self.telemetry
        outcome.user_message = self.sent
        outcome.elapsed_s = time.monotonic() - self.started
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
        base: Messages = [{"role": "system", "content": prompt.system_message()},
                          {"role": "user", "content": user}, *self.continuation]
        self.tracer.set("prompt", {"version": prompt.prompts().version,
                                   "sha256": prompt.prompts().sha256,
                                   "system_bytes": len(base[0]["content"].encode()),
                                   "user_bytes": len(user.encode())})
        result, reply = self.ask_valid(base, "plan")
        while self._wants_checks(result):
            results = self.run_checks(result)
            if results is None:
                break
            stats.rounds += 1
            packet = prompt.packet_for(prompt.refine_spec(self.request, results),
                                       self._trace(stats.model_calls + 1))
            self.tracer.event("PACKET", task="anna.refine", packet=stored(packet))
            refine = [*base, {"role": "assistant", "content": prompt.echo_reply(reply)},
                      {"role": "user", "content": prompt.render_packet(packet)}]
            result, reply = self.ask_valid(refine, "refine")
        if result.ok and result.plan is not None:
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
            if stats.contradictions:
                self.tracer.event("CONTRADICTIONS", facts=[c.to_dict()
                                                           for c in stats.contradictions])
        return stats

    def _may_refine(self, result: ValidationResult) -> bool:
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

    # ------------------------------------------------------------------ model calls
    def ask_valid(self, messages: Messages, purpose: str) -> tuple[ValidationResult, str]:
        """One call, and one repair call if the reply is invalid (but not banned)."""
        reply = self.call(messages, purpose)
        result = self.check_reply(reply)
        if result.ok or is_banned(result):
            return result, reply.text
        self.tracer.event("VALIDATION_FAILED", purpose=purpose,
                          codes=sorted({str(f.code) for f in result.errors}))
        if self.stats.model_calls >= self.settings.max_model_calls:
            raise self._budget(f"the reply needs a repair but all "
                               f"{self.settings.max_model_calls} model calls are spent")
        self.stats.repairs += 1
        self.tracer.event("REPAIR_ATTEMPT", purpose=purpose, repair=self.stats.repairs)
        repair = [*messages, {"role": "assistant", "content": prompt.echo_reply(reply.text)},
                  {"role": "user", "content": prompt.repair_message(result.errors,
                                                                    truncated=reply.truncated)}]
        second = self.call(repair, "repair")
        result = self.check_reply(second)
        if result.ok or is_banned(result):
            return result, second.text
        codes = sorted({str(f.code) for f in result.errors})
        self.tracer.event("VALIDATION_FAILED", purpose="repair", codes=codes)
        code, message = failure(codes)
        raise llm_error(code, message, "try a larger model or rephrase the request; "
                        + self.trace_hint(),
                        findings=[f.model_dump(mode="json") for f in result.errors],
                        trace_id=self.tracer.trace_id)

    def trace_hint(self) -> str:
        """Where the exchange is recorded, or how to record it (never both)."""
        if self.tracer.enabled:
            path = self.settings.state_dir / "traces" / f"{self.tracer.trace_id}.json"
            return f"the exchange is recorded in {path}"
        return "ANNA_TRACE=1 records the exchange"

    def check_reply(self, reply: ChatResult) -> ValidationResult:
        """Validate a reply; a reply cut off at the token limit is a failure whatever it holds."""
        if reply.truncated:
            finding = Finding(code=FindingCode.PARSE_ERROR,
                              message="the reply was cut off at the token limit")
            return ValidationResult(ok=False, errors=[finding], warnings=[], plan=None)
        result = validate_text(reply.text, self.context)
        if not result.ok or result.plan is None:
            return result
        grounding = echo_findings(result.plan, request=self.request, sent=self.sent)
        if not self._may_refine(result):
            # a plan that first asks for checks is judged on its refined form
            grounding += off_request_findings(result.plan, self.request)
        if not grounding:
            return result
        return ValidationResult(ok=False, errors=grounding, warnings=result.warnings,
                                plan=result.plan)

    def _budget(self, message: str, *,
                hint: str = "raise ANNA_MAX_MODEL_CALLS or ANNA_MAX_PROMPT_BYTES") -> AnnaError:
        self.tracer.event("BUDGET_EXCEEDED", message=message)
        return llm_error(ErrorCode.LLM_BUDGET_EXCEEDED, message, hint)

    def _session_budget(self) -> None:
        planner, settings = self.planner, self.settings
        if planner.session_calls >= settings.max_session_calls:
            raise self._budget(f"all {settings.max_session_calls} model calls of this session "
                               "are spent", hint="start a new session, or raise "
                               "ANNA_MAX_SESSION_CALLS")
        if planner.session_tokens >= settings.max_session_tokens:
            raise self._budget(f"this session used {planner.session_tokens} tokens; its budget "
                               f"is {settings.max_session_tokens}", hint="start a new session, "
                               "or raise ANNA_MAX_SESSION_TOKENS")

    def call(self, messages: Messages, purpose: str) -> ChatResult:
        """One model call within the per-request and per-session budgets, traced."""
        stats = self.stats
        if stats.model_calls >= self.settings.max_model_calls:
            raise self._budget(f"all {self.settings.max_model_calls} model calls of this "
                               "request are spent")
        self._session_budget()
        request = chat_request(self.settings, messages, purpose)
        if request.prompt_bytes > self.settings.max_prompt_bytes:
            raise self._budget(f"the prompt is {request.prompt_bytes} bytes; the budget is "
                               f"{self.settings.max_prompt_bytes}")
        stats.model_calls += 1
        self.planner.session_calls += 1
        stage = "model" if purpose == "plan" else purpose
        self.progress(stage)
        self.tracer.event("LLM_REQUEST_SENT", purpose=purpose, call=stats.model_calls,
                          model=stats.model, prompt_bytes=request.prompt_bytes,
                          prompt_sha=hashlib.sha256(canonical_json(messages)).hexdigest())
        began = time.monotonic()
        try:
            reply = self.planner.provider.chat(
                request, on_tokens=lambda n: self.progress(stage, tokens=n), cancel=self.cancel,
                events=self.tracer.event)
        except LLMError as exc:
            self.tracer.event("LLM_ERROR", code=str(exc.code), message=exc.message)
            raise
        finally:
            stats.llm_s += time.monotonic() - began
        stats.server_s += (reply.server_ms or 0.0) / 1000
        stats.tokens_in += reply.prompt_tokens
        stats.tokens_out += reply.completion_tokens
        self.planner.session_tokens += reply.prompt_tokens + reply.completion_tokens
        self.tracer.event("LLM_RESPONSE_OK", purpose=purpose, latency_s=round(reply.latency_s, 4),
                          server_ms=reply.server_ms, tokens_in=reply.prompt_tokens,
                          tokens_out=reply.completion_tokens, cached_tokens=reply.cached_tokens,
                          finish_reason=reply.finish_reason, source=reply.source,
                          response_format=reply.response_format, raw=reply.text)
        return reply

    # ------------------------------------------------------------------ checks
    def run_checks(self, result: ValidationResult) -> list[CheckResult] | None:
        """Submit the plan and run its necessary checks on the daemon; None when impossible."""
        from anna_common.protocol.models import SessionEnv

        daemon = self.planner.daemon
        assert daemon is not None and result.plan is not None
        self.progress("checks")
        try:
            submitted = daemon.submit(result.plan.plan, request=self.request, source="model")
            response = daemon.run_checks(submitted.plan_id,
                                         session=SessionEnv.from_environ(dict(os.environ)))
        except AnnaError as exc:
            self.tracer.event("CHECKS_FAILED", code=str(exc.code), message=exc.message)
            log.info("necessary checks could not run: %s", exc.message)
            return None
        self.tracer.event("CHECKS_RUN", plan_id=submitted.plan_id, count=len(response.results),
                          ran=sum(1 for r in response.results if r.ran))
        self.stats.checks.extend(response.results)
        self.checks_ran.update(c.command for c in result.plan.plan.necessary_checks)
        return list(response.results)

    # ------------------------------------------------------------------ the end
    def finish(self, outcome: PlanOutcome | None, error: AnnaError | None) -> None:
        """Write the trace and the history packets."""
        summary: dict[str, Any] = outcome.summary() if outcome is not None else {
            "error": error.to_dict() if error is not None else None,
            "model_calls": self.stats.model_calls, "repairs": self.stats.repairs}
        summary.pop("plan", None)
        self.tracer.set("outcome", summary)
        self.tracer.write()
        AuditLog(self.settings.state_dir).write(run_record(
            trace_id=self.tracer.trace_id, run_id=self.planner.run_id, mode=self.mode,
            stats=outcome if outcome is not None else self.stats,
            plan=outcome.plan if outcome is not None else None, error=error,
            started_at=self.started_at))
        history = self.planner.history
        if history is None:
            return
        try:
            history.record_exchange(self.request, mode=self.mode, telemetry=self.telemetry,
                                    preferences=self.preferences, outcome=outcome, error=error,
                                    trace_id=self.tracer.trace_id, packet=self.packet)
        except (OSError, AnnaError) as exc:  # history must never break planning
            log.warning("could not store history: %s", exc)
