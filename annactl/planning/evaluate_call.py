"""The evaluation exchange with the model (see :mod:`annactl.planning.evaluate`).

The call continues the planning conversation — the same static system message, the
same user message, the approved plan as the model's turn — with the results as an
untrusted document, and asks for an :class:`~annactl.planning.evaluate.Evaluation`
as the structured-output format. One call, no repair: a bad reply, a model failure
or Ctrl-C gives Anna's own summary instead, carrying the code. Traced like planning
(``ANNA_TRACE=1``): the request, the reply, and the evaluation that was shown.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from typing import TYPE_CHECKING

from anna_common.errors import AnnaError, ErrorCode
from annactl.planning.evaluate import (
    EvaluationInvalid,
    EvaluationOutcome,
    evaluation_schema,
    execution_results_document,
    offline,
    parse_evaluation,
    plan_json,
)

if TYPE_CHECKING:
    from anna_common.protocol.models import PlanRecord
    from annactl.core.config import ClientSettings
    from annactl.core.quicksettings import QuickSettings
    from annactl.planning.llm.base import Provider
    from annactl.planning.llm.trace import Tracer
    from annactl.planning.outcome import PlanOutcome
    from annactl.planning.planner import Planner

log = logging.getLogger(__name__)


def evaluation_messages(user_message: str, plan_text: str,
                        record: PlanRecord) -> list[dict[str, str]]:
    """The planning conversation continued: the plan as the reply, then the results."""
    from annactl.planning import prompt

    return [{"role": "system", "content": prompt.system_message()},
            {"role": "user", "content": user_message},
            {"role": "assistant", "content": plan_text},
            {"role": "user", "content": prompt.fill(prompt.prompts().text("evaluate"), {
                "results": execution_results_document(record)})}]


def ask_model(provider: Provider, messages: list[dict[str, str]], record: PlanRecord, *,
              cancel: threading.Event | None = None,
              tracer: Tracer | None = None) -> EvaluationOutcome:
    """One evaluation call. Never raises: every failure becomes Anna's own evaluation
    carrying its code."""
    from anna_common.plan import canonical_json
    from annactl.planning import prompt
    from annactl.planning.llm.base import ChatRequest, no_events

    schema = evaluation_schema()
    prompts = prompt.prompts()
    request = ChatRequest(messages=tuple(messages), schema=schema,
                          schema_sha=hashlib.sha256(canonical_json(schema)).hexdigest(),
                          prompt_version=prompts.version, prompt_sha=prompts.sha256,
                          purpose="evaluate")
    events = tracer.event if tracer is not None else no_events
    events("LLM_REQUEST_SENT", purpose="evaluate", prompt_bytes=request.prompt_bytes,
           plan_id=record.plan_id)
    began = time.monotonic()
    try:
        reply = provider.chat(request, cancel=cancel, events=events)
        events("LLM_RESPONSE_OK", purpose="evaluate", latency_s=round(reply.latency_s, 4),
               tokens_in=reply.prompt_tokens, tokens_out=reply.completion_tokens,
               finish_reason=reply.finish_reason, raw=reply.text)
        if reply.truncated:
            raise EvaluationInvalid(["PARSE_ERROR: the reply was cut off at the token limit"])
        evaluation = parse_evaluation(reply.text, record)
    except EvaluationInvalid as exc:
        events("EVALUATION_INVALID", findings=exc.findings)
        return offline(record, "the model's evaluation was not valid", code=str(exc.code),
                       findings=exc.findings, elapsed_s=time.monotonic() - began)
    except AnnaError as exc:
        events("LLM_ERROR", code=str(exc.code), message=exc.message)
        return offline(record, f"no evaluation from the model ({exc.code})", code=str(exc.code),
                       elapsed_s=time.monotonic() - began)
    except Exception as exc:  # an evaluation must never break showing the result
        log.warning("evaluation failed: %s", exc)
        return offline(record, "no evaluation from the model (internal error)",
                       code=str(ErrorCode.INTERNAL_ERROR), elapsed_s=time.monotonic() - began)
    from annactl.planning.evalclaims import check_evaluation

    contradictions = check_evaluation(evaluation, record)
    if contradictions:
        events("EVALUATION_CONTRADICTS_RECORD", claims=[c.to_dict() for c in contradictions])
    return EvaluationOutcome(evaluation, source="model", status=str(record.status),
                             plan_id=record.plan_id, elapsed_s=time.monotonic() - began,
                             contradictions=contradictions)


def _without_model(planner: Planner, outcome: PlanOutcome | None, record: PlanRecord,
                   messages: list[dict[str, str]]) -> EvaluationOutcome | None:
    """Anna's own evaluation when the model may not be asked; None when it may."""
    settings = planner.settings
    size = sum(len(m["content"].encode()) for m in messages)
    if size > settings.max_prompt_bytes:
        return offline(record, f"the results make a {size}-byte prompt; the budget is "
                       f"{settings.max_prompt_bytes}", code=str(ErrorCode.LLM_BUDGET_EXCEEDED))
    try:
        model = planner.provider.model
    except AnnaError as exc:
        return offline(record, f"no evaluation from the model ({exc.code})", code=str(exc.code))
    if settings.allowed_models and model not in settings.allowed_models:
        return offline(record, f"the model {model!r} is not in allowed_models",
                       code=str(ErrorCode.LLM_BUDGET_EXCEEDED))
    return None


def without_planner(settings: ClientSettings | QuickSettings, outcome: PlanOutcome | None,
                    record: PlanRecord) -> EvaluationOutcome | None:
    """Anna's own evaluation when the model is not to be asked at all (evaluation off, or
    the model did not make the plan in this session); None when it may be asked.

    Needs no planner: ``apply ID`` of a stored plan evaluates without building one (its
    imports are most of a plan-less command's start-up, ``bench/startup.py``).
    """
    if not settings.evaluate:
        return offline(record, "evaluation by the model is off (ANNA_EVALUATE=false)")
    if outcome is None or outcome.template is not None or not outcome.user_message:
        return offline(record, "the model did not make this plan in this session")
    return None


def evaluate_finished(planner: Planner, outcome: PlanOutcome | None, record: PlanRecord, *,
                      cancel: threading.Event | None = None) -> EvaluationOutcome:
    """The evaluation of a finished plan: the model's when it planned it, Anna's otherwise.

    ``planner`` is the session's planner (its settings and provider); ``outcome`` what made
    the plan (None for a stored plan or a plan file). Never raises.
    """
    early = without_planner(planner.settings, outcome, record)
    if early is not None or outcome is None:  # (no outcome always has an early answer)
        return early or offline(record, "the model did not make this plan in this session")
    messages = evaluation_messages(outcome.user_message, plan_json(record), record)
    refused = _without_model(planner, outcome, record, messages)
    if refused is not None:
        return refused
    from annactl.planning.llm.trace import Tracer

    tracer = Tracer(planner.settings, request=record.request)
    tracer.set("evaluate", {"plan_id": record.plan_id, "planned_in": outcome.trace_id})
    try:
        result = ask_model(planner.provider, messages, record, cancel=cancel, tracer=tracer)
        tracer.set("outcome", result.to_dict())
        return result
    finally:
        tracer.write()  # only when tracing is on; never raises
