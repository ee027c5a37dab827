"""The model calls of one planning run: budgets, the time budget, repairs that can help.

Split from :mod:`annactl.planning.planner_run` (which drives the request) as a base class
of its :class:`~annactl.planning.planner_run.Run`.

Repairs are made only where they can help (issue 24.2, measured with two tiny models):

* a reply cut at the token cap (``finish_reason: length``) is never repaired in the same
  form: with a template that fits, the template answers at once; a full plan is repaired
  once in the compact form; a small form has nothing smaller and is not repaired;
* a bad reply is repaired once, unless a template fits and the time left in the budget is
  less than the first call took (the repair would run out of time: answer now);
* no request is ever sent twice byte for byte (at temperature 0 it gets the same reply).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode, LLMError
from anna_common.findings import Finding, FindingCode, ValidationResult
from anna_common.plan import canonical_json
from annactl.planning import forms, prompt
from annactl.planning.llm.errors import check_cancel, llm_error
from annactl.planning.offrequest import off_request_findings
from annactl.planning.outcome import PlanOutcome, Progress, is_banned
from annactl.planning.run_forms import FormChoice
from annactl.planning.streaming import StreamedReply

if TYPE_CHECKING:
    from anna_common.risk.rules.base import AssessContext
    from anna_common.telemetry import Telemetry
    from annactl.core.config import ClientSettings
    from annactl.planning.llm.base import ChatResult
    from annactl.planning.llm.trace import Tracer
    from annactl.planning.outcome import PlanningSession, StoredPlan
    from annactl.planning.templates import TemplateMatch

Messages = list[dict[str, str]]


class ModelCalls(FormChoice):
    """Calls, repairs and the time budget of one request (state lives on the run; which
    form it is asked in: :class:`~annactl.planning.run_forms.FormChoice`)."""

    planner: PlanningSession
    settings: ClientSettings
    request: str
    tracer: Tracer
    stats: PlanOutcome
    telemetry: Telemetry | None
    context: AssessContext | None
    stored: StoredPlan | None
    sent: str
    started: float
    on_progress: Callable[[Progress], None] | None
    cancel: threading.Event | None

    def init_calls(self) -> None:
        """Per-request call state (called by the run's constructor)."""
        self.form = "plan"
        """The request form (:mod:`annactl.planning.forms`)."""
        self.compact = False
        """The full plan is asked for in its compact form (after a reply cut at the cap)."""
        self.fallback: TemplateMatch | None = None
        """A (weakly) matching template that answers when the model cannot."""
        self.deadline: float | None = None
        """``time.monotonic()`` when the request's model time budget runs out."""
        self.cited: list[dict[str, str]] = []
        """What the last usable reply cited (verified at the end)."""
        self.built = False
        """The last usable reply's plan was written by a family template."""
        self._sent_keys: set[str] = set()
        self._last_call_s = 0.0
        self.streamed: StreamedReply | None = None
        """The current call's reply as it streams in (reported with every progress)."""
        self.init_forms()

    # ------------------------------------------------------------------ progress
    def progress(self, stage: str, tokens: int = 0, message: str = "") -> None:
        """Report progress (and honour cancellation); the time budget rides along."""
        check_cancel(self.cancel)
        if self.on_progress is None:
            return
        budget = self.settings.llm_budget if self.deadline is not None else 0.0
        self.on_progress(Progress(stage, time.monotonic() - self.started, tokens, message,
                                  budget_s=budget, deadline=self.deadline,
                                  streamed=self.streamed))

    def start_budget(self) -> None:
        """The model time budget, counted from the request's start: Anna's own work before
        the first call (telemetry, templates, a question's template checks) is part of the
        wait the person sees (issue 39.8)."""
        budget = self.settings.llm_budget
        self.deadline = self.started + budget if budget > 0 else None
        self.start_trial()

    def budget_error(self) -> LLMError:
        """The budget ran out before the reply was usable."""
        self.tracer.event("BUDGET_SPENT", budget_s=self.settings.llm_budget)
        return llm_error(ErrorCode.LLM_TIMEOUT, f"the model did not finish within the "
                         f"{self.settings.llm_budget:g} s budget of this request",
                         "raise ANNA_LLM_BUDGET, or use a smaller or faster model",
                         budget=True, trace_id=self.tracer.trace_id)

    # ------------------------------------------------------------------ model calls
    def ask_valid(self, messages: Messages, purpose: str) -> tuple[ValidationResult, str]:
        """One call, and one repair call if it can help (see the module docstring)."""
        from annactl.planning.replies import failure  # the model's path only

        reply = self.call(messages, purpose)
        result = self.check_reply(reply)
        self.observe_valid(self.form, result.ok)
        if result.ok or is_banned(result):
            return result, reply.text
        codes = sorted({str(f.code) for f in result.errors})
        self.tracer.event("VALIDATION_FAILED", purpose=purpose, codes=codes)
        if reply.truncated and (self.fallback is not None or not self._smaller_form()):
            raise self._unusable(codes, "the model's reply was cut at the token cap "
                                 f"({reply.completion_tokens} tokens); no smaller form is left "
                                 "to repair it in", truncated=True)
        left = None if self.deadline is None else self.deadline - time.monotonic()
        if self.fallback is not None and left is not None and left < self._last_call_s:
            raise self._unusable(codes, f"the model's reply could not be used "
                                 f"({', '.join(codes)}) and a repair would not finish within "
                                 "the time budget", no_time=True)
        if self.stats.model_calls >= self.settings.max_model_calls:
            if self.fallback is not None:
                raise self._unusable(codes, f"the model's reply could not be used "
                                     f"({', '.join(codes)}) and no model call is left to "
                                     "repair it")
            raise self._budget(f"the reply needs a repair but all "
                               f"{self.settings.max_model_calls} model calls are spent")
        self.stats.repairs += 1
        if reply.truncated:
            self.compact = True  # the full plan, repaired in its compact form
        self.tracer.event("REPAIR_ATTEMPT", purpose=purpose, repair=self.stats.repairs,
                          compact=self.compact)
        repair = [*messages, {"role": "assistant", "content": prompt.echo_reply(reply.text)},
                  {"role": "user", "content": prompt.repair_message(
                      result.errors, truncated=reply.truncated, form=self.form)}]
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
                        trace_id=self.tracer.trace_id, truncated=second.truncated)

    def _smaller_form(self) -> bool:
        """A smaller form is left to repair a cut reply in (the full plan's compact form)."""
        settings = self.settings
        return (self.form == "plan" and not self.compact and not settings.llm_compact
                and settings.llm_ids == "positional" and self.trial_form is None)

    def _unusable(self, codes: list[str], message: str, **detail: Any) -> LLMError:
        from annactl.planning.replies import failure

        code = failure(codes)[0] if not detail.get("truncated") else ErrorCode.LLM_BAD_REPLY
        return llm_error(code, message, "try a larger model or rephrase the request; "
                         + self.trace_hint(), trace_id=self.tracer.trace_id, **detail)

    def trace_hint(self) -> str:
        """Where the exchange is recorded, or how to record it (never both)."""
        if self.tracer.enabled:
            path = self.settings.state_dir / "traces" / f"{self.tracer.trace_id}.json"
            return f"the exchange is recorded in {path}"
        return "ANNA_TRACE=1 records the exchange"

    def may_refine(self, result: ValidationResult) -> bool:
        """A refined plan can still follow this one (overridden by the run)."""
        return False

    def check_reply(self, reply: ChatResult) -> ValidationResult:
        """Validate a reply in the request's form; a reply cut off at the token limit is a
        failure whatever it holds."""
        from anna_common.extract import ExtractError, extract_json
        from annactl.planning.grounding import echo_findings

        if reply.truncated:
            finding = Finding(code=FindingCode.PARSE_ERROR,
                              message="the reply was cut off at the token limit")
            return ValidationResult(ok=False, errors=[finding], warnings=[], plan=None)
        try:
            raw = extract_json(reply.text)
        except ExtractError as exc:
            finding = Finding(code=FindingCode.PARSE_ERROR, message=str(exc))
            return ValidationResult(ok=False, errors=[finding], warnings=[], plan=None)
        converted = forms.to_plan(self.form, raw, self.template_context)
        if converted.plan is None:
            return ValidationResult(ok=False, errors=converted.findings, warnings=[], plan=None)
        result = self.validated(converted.plan)
        if not result.ok or result.plan is None:
            return result
        self.cited = converted.citations
        self.built = converted.built
        grounding = echo_findings(result.plan, request=self.request, sent=self.sent)
        if not self.may_refine(result) and not converted.built:
            # a plan that first asks for checks is judged on its refined form; a family
            # form's plan is the family template's own ("htop is already installed")
            grounding += off_request_findings(result.plan, self.request)
        if not grounding:
            return result
        return ValidationResult(ok=False, errors=grounding, warnings=result.warnings,
                                plan=result.plan)

    def validated(self, raw: dict[str, Any]) -> ValidationResult:
        """The plan as the daemon judges it (``POST /v1/judge``), else as
        :func:`anna_common.validate.validate` judges it here.

        The daemon validates and assesses every plan again at submit whatever the client
        found, its analysis is warm, and its verdict is the one shown: asking it spares this
        process the risk engine (its import and first analysis were ~100 ms of the ~430 ms
        a planning request cost here, bench/request_cpu.py). A plan the daemon refuses
        (invalid, banned, denied), or no daemon that answers, is validated here, so the
        findings a repair names, and a banned plan's annotation, are exactly as before.
        """
        daemon = self.planner.daemon
        if daemon is not None:
            from pydantic import ValidationError

            from anna_common.plan import ActionPlan

            try:
                model = ActionPlan.model_validate(raw)
                stored = self.stored
                if stored is not None and stored.plan == model:  # judged when it was stored
                    judged: Any = stored.response
                else:
                    judged = daemon.judge(model, None)
            except (ValidationError, AnnaError):
                pass
            else:
                # the daemon never sees the memory proposal: the plan is the one the model wrote
                annotated = judged.annotated.model_copy(update={"plan": model})
                return ValidationResult(ok=True, errors=[], warnings=list(judged.warnings),
                                        plan=annotated)
        from anna_common.validate import validate  # the risk engine: loaded only when used

        return validate(raw, self.context)

    def template_context(self) -> Any:
        """What a family form's template builds from (the request, telemetry, home)."""
        from annactl.planning.templates.base import Context

        assert self.telemetry is not None and self.context is not None
        return Context(request=self.request, telemetry=self.telemetry,
                       assess_context=self.context, home=self.planner.home, sent=self.sent)

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
        from annactl.planning.replies import chat_request

        stats = self.stats
        if stats.model_calls >= self.settings.max_model_calls:
            raise self._budget(f"all {self.settings.max_model_calls} model calls of this "
                               "request are spent")
        self._session_budget()
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise self.budget_error()
        request = chat_request(self.settings, messages, purpose, form=self.form,
                               compact=self.compact, deadline=self.call_deadline())
        if request.prompt_bytes > self.settings.max_prompt_bytes:
            raise self._budget(f"the prompt is {request.prompt_bytes} bytes; the budget is "
                               f"{self.settings.max_prompt_bytes}")
        key = hashlib.sha256(canonical_json({"messages": messages, "schema": request.schema_sha,
                                             "options": request.options})).hexdigest()
        # at temperature 0 the same bytes get the same reply (a refinement that repeats
        # itself is the refine loop's to stop: it still holds a usable plan)
        if key in self._sent_keys and purpose != "refine":
            raise llm_error(ErrorCode.LLM_BAD_REPLY, "the model's reply could not be used, "
                            "and asking again unchanged would repeat it", self.trace_hint())
        self._sent_keys.add(key)
        stats.model_calls += 1
        stats.form = request.form
        self.planner.session_calls += 1
        stage = "model" if purpose == "plan" else purpose
        self.streamed = StreamedReply(request.form, stats.model_calls)
        self.progress(stage)
        self.tracer.event("LLM_REQUEST_SENT", purpose=purpose, call=stats.model_calls,
                          model=stats.model, prompt_bytes=request.prompt_bytes,
                          form=request.form, prompt_sha=key)
        began = time.monotonic()
        try:
            reply = self.planner.provider.chat(
                request, on_tokens=lambda n: self.progress(stage, tokens=n), cancel=self.cancel,
                events=self.tracer.event, on_text=self.streamed.append)
        except LLMError as exc:
            self.tracer.event("LLM_ERROR", code=str(exc.code), message=exc.message)
            self.observe(request.form, None, time.monotonic() - began, exc)
            raise
        finally:
            self._last_call_s = time.monotonic() - began
            stats.llm_s += self._last_call_s
        self.observe(request.form, reply, self._last_call_s)
        stats.server_s += (reply.server_ms or 0.0) / 1000
        stats.tokens_in += reply.prompt_tokens
        stats.tokens_out += reply.completion_tokens
        stats.finish_reasons.append(reply.finish_reason or "")
        self.planner.session_tokens += reply.prompt_tokens + reply.completion_tokens
        self.tracer.event("LLM_RESPONSE_OK", purpose=purpose, latency_s=round(reply.latency_s, 4),
                          server_ms=reply.server_ms, tokens_in=reply.prompt_tokens,
                          tokens_out=reply.completion_tokens, cached_tokens=reply.cached_tokens,
                          finish_reason=reply.finish_reason, source=reply.source,
                          response_format=reply.response_format, raw=reply.text)
        return reply
