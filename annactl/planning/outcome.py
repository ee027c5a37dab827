"""What planning produces and what a planning run needs, shared by the planner and its run.

:class:`PlanOutcome` and :class:`Progress` are the planner's public results;
:class:`PlanningSession` is the part of :class:`annactl.planning.planner.Planner` that one run
(:mod:`annactl.planning.planner_run`) uses, so the run never imports the planner that starts it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from anna_common.errors import AnnaError, ErrorCode, UsageError
from anna_common.findings import FindingCode, ValidationResult

if TYPE_CHECKING:
    from anna_common.plan import ActionPlan
    from anna_common.protocol.models import (
        CheckResult,
        ChecksResponse,
        JudgeResponse,
        SessionEnv,
        SubmitResponse,
        TelemetryResponse,
    )
    from anna_common.risk.rules.base import AssessContext
    from anna_common.telemetry import Telemetry
    from annactl.core.config import ClientSettings
    from annactl.planning.citations import Citation
    from annactl.planning.facts import Contradiction
    from annactl.planning.llm.base import Provider
    from annactl.planning.piped import Piped
    from annactl.planning.streaming import StreamedReply
    from annactl.planning.templates import TemplateMatch

QUICK_CONNECT_S = 1.0
"""Connect timeout of the one model attempt made before a weak offline answer."""
MAX_ROUNDS = 2
"""Rounds of necessary checks followed by a refined plan."""

OFFLINE_CODES = frozenset({ErrorCode.LLM_UNAVAILABLE, ErrorCode.LLM_TIMEOUT,
                           ErrorCode.LLM_MODEL_NOT_FOUND, ErrorCode.LLM_HTTP_ERROR})
"""Model failures that mean no model answered in time."""
FALLBACK_CODES = OFFLINE_CODES | {ErrorCode.LLM_BAD_REPLY, ErrorCode.LLM_ECHOED_EXAMPLE,
                                  ErrorCode.LLM_OFF_REQUEST}
"""Model failures after which a (weakly) matching template answers instead, with a note:
no model, the time budget spent, a reply bad or cut at the token cap (issue 24.1). Not
the configured call and token limits: those stay errors."""


class DaemonAPI(Protocol):
    """The part of :class:`annactl.core.daemon_client.DaemonClient` the planner uses."""

    def telemetry(self, *, fresh: bool = False,
                  session: SessionEnv | None = None) -> TelemetryResponse:
        """Current telemetry."""
        ...

    def submit(self, plan: ActionPlan, *, request: str = "", source: str = "model",
               revises: str | None = None, preview: bool = True) -> SubmitResponse:
        """Store a plan (``revises``: in the place of this request's stored plan; not
        ``preview``: only to run its checks); the daemon validates it itself."""
        ...

    def run_checks(self, plan_id: str, *,
                   session: SessionEnv | None = None) -> ChecksResponse:
        """Run a stored plan's necessary checks (read-only by the daemon's assessment)."""
        ...

    def judge(self, plan: ActionPlan, approved_digest: str | None) -> JudgeResponse:
        """The daemon's validation and assessment of a plan; nothing is stored or run."""
        ...


@dataclass
class Progress:
    """What the planner is doing, for spinners and status lines."""

    stage: str
    """``telemetry``, ``template``, ``model``, ``repair``, ``checks``, ``refine``, ``done``."""
    elapsed_s: float
    """Seconds since the request started."""
    tokens: int = 0
    """Tokens received so far in the current model call."""
    message: str = ""
    """A short human note."""
    budget_s: float = 0.0
    """The request's model time budget (``llm_budget``); 0 until the first model call, or
    when there is no budget."""
    deadline: float | None = None
    """``time.monotonic()`` when that budget runs out (this process's clock), so a front end
    can show the time used between two reports."""
    streamed: StreamedReply | None = None
    """The current model call's reply so far (:mod:`annactl.planning.streaming`), for a
    front end that prints its prose as the model writes it."""


@dataclass(frozen=True)
class StoredPlan:
    """A plan this request stored in the daemon (to run its checks), as it was stored."""

    plan: ActionPlan
    """The plan sent."""
    request: str
    """The request it was stored with."""
    source: str
    """``model`` or ``template``."""
    response: SubmitResponse
    """The daemon's answer: id, digest, its annotation and preview."""


@dataclass
class PlanOutcome:
    """What planning produced. ``plan`` is None unless the final validation passed."""

    result: ValidationResult
    """The final validation; ``result.plan`` is the annotated plan (even when banned)."""
    plan: ActionPlan | None
    """The plan to submit, only when ``result.ok``."""
    model_calls: int = 0
    """Calls to the model (repairs and refinements included)."""
    repairs: int = 0
    """Repair calls made."""
    rounds: int = 0
    """Rounds of necessary checks that fed a refined plan."""
    template: str | None = None
    """Template id when answered offline."""
    template_confident: bool = False
    """The template matched the whole request (else a keyword only: a weak match)."""
    offline_reason: str | None = None
    """Why a template answered instead of the model, when the model failed."""
    checks: list[CheckResult] = field(default_factory=list)
    """Outcomes of the necessary checks the daemon ran (untrusted output)."""
    trace_id: str = ""
    """Identifies this request in traces and history."""
    provider: str = ""
    """Provider name."""
    model: str = ""
    """Model name."""
    elapsed_s: float = 0.0
    """Wall time of the whole request."""
    llm_s: float = 0.0
    """Wall time spent waiting for the model."""
    server_s: float = 0.0
    """The server's own reported time (llama.cpp ``timings``, Ollama ``total_duration``)."""
    tokens_in: int = 0
    """Prompt tokens over all calls, as the server reported them."""
    tokens_out: int = 0
    """Generated tokens over all calls."""
    contradictions: list[Contradiction] = field(default_factory=list)
    """The model's claims about the machine that the telemetry contradicts."""
    telemetry: Telemetry | None = None
    """The snapshot the plan was made from (answers render their facts from it)."""
    memory_version: str = ""
    """The memory's version when the request packet was built (a patch applies only to it)."""
    packet: dict[str, Any] | None = None
    """The LLMCP request packet the user message was rendered from (full, unredacted)."""
    user_message: str = ""
    """The user message the model planned from ("" for a template): evaluation continues it."""
    form: str = ""
    """The request form of the last model call (``answer``, ``package``, ``service``,
    ``wallpaper``, ``plan``, ``plan+compact``; :mod:`annactl.planning.forms`), "" if none."""
    form_why: str = ""
    """Why the request was asked in that form (the model's profile, a pin; issue 39.2)."""
    finish_reasons: list[str] = field(default_factory=list)
    """Each model call's ``finish_reason`` (``length``: cut at the token cap)."""
    citations: list[Citation] = field(default_factory=list)
    """What the model cited, each verified against the documents it was given."""
    stored_id: str | None = None
    """The daemon's id of the plan this request stored to run its checks (None: none was
    stored): the final plan is submitted as its revision, one stored plan per request."""
    piped: Piped | None = None
    """Text piped into ``annactl ask`` with the request (None: nothing was piped)."""
    checks_follow: bool = False
    """An offline answer shown while the model works whose checks the planner runs next
    (a question's, for the model to read): the front end gets their results back
    (``on_offline_checks``) and does not run them itself."""

    @property
    def confidence(self) -> float:
        """1.0 when the plan's claims agree with the telemetry; lower per contradiction."""
        from annactl.planning.facts import confidence

        return confidence(self.contradictions)

    def summary(self) -> dict[str, Any]:
        """JSON-ready summary (``annactl plan --json`` adds the daemon's ``plan_id``)."""
        return {
            "plan": self.plan.model_dump(mode="json") if self.plan else None,
            "ok": self.result.ok,
            "banned": bool(self.result.plan and self.result.plan.banned),
            "findings": [f.model_dump(mode="json") for f in self.result.errors],
            "warnings": [f.model_dump(mode="json") for f in self.result.warnings],
            "model_calls": self.model_calls, "repairs": self.repairs, "rounds": self.rounds,
            "template": self.template, "offline_reason": self.offline_reason,
            "checks": [c.model_dump(mode="json") for c in self.checks],
            "trace_id": self.trace_id, "provider": self.provider, "model": self.model,
            "elapsed_s": round(self.elapsed_s, 4), "llm_s": round(self.llm_s, 4),
            "server_s": round(self.server_s, 4), "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "contradictions": [c.to_dict() for c in self.contradictions],
            "confidence": self.confidence,
            "memory_patch": dict(self.plan.memory_patch) if self.plan else {},
            "form": self.form, "finish_reasons": list(self.finish_reasons),
            "citations": [c.to_dict() for c in self.citations],
            "piped": self.piped.to_dict() if self.piped is not None else None,
        }


def is_banned(result: ValidationResult) -> bool:
    """The plan contains a hard-banned command: never repaired, never approvable."""
    return any(f.code == FindingCode.BANNED_COMMAND for f in result.errors) or bool(
        result.plan is not None and result.plan.banned)


class ExchangeLog(Protocol):
    """Where a run records its exchange (:class:`annactl.planning.history.History`)."""

    conversation_id: str
    """The conversation new packets belong to."""

    def next_turn(self) -> int:
        """The turn number the next exchange gets."""
        ...

    def record_exchange(self, request: str, *, mode: str, telemetry: Telemetry | None,
                        preferences: dict[str, str] | None, outcome: PlanOutcome | None,
                        error: AnnaError | None, trace_id: str,
                        packet: dict[str, Any] | None = None) -> tuple[dict[str, Any],
                                                                       dict[str, Any]]:
        """Store a request packet and its response packet (one turn)."""
        ...


class PlanningSession(Protocol):
    """What one planning run uses from its planner (:class:`~annactl.planning.planner.Planner`)."""

    run_id: str
    """The session's id (``trace.run_id``, the audit's ``run_id``)."""
    session_calls: int
    """Model calls this session made so far."""
    session_tokens: int
    """Tokens this session used so far."""

    @property
    def settings(self) -> ClientSettings:
        """The client's settings."""
        ...

    @property
    def daemon(self) -> DaemonAPI | None:
        """The daemon, when connected."""
        ...

    @property
    def history(self) -> ExchangeLog | None:
        """Where the exchange is recorded, if anywhere."""
        ...

    @property
    def provider(self) -> Provider:
        """The model provider."""
        ...

    def fetch_telemetry(self) -> Telemetry:
        """Telemetry from the daemon, or an empty snapshot saying why there is none."""
        ...

    def assess_context(self, telemetry: Telemetry) -> AssessContext:
        """The context plans are validated in."""
        ...

    def match_template(self, request: str, telemetry: Telemetry) -> TemplateMatch | None:
        """The best offline template for the request, if any."""
        ...

    @property
    def home(self) -> str:
        """The caller's home directory (templates expand ``~/`` with it)."""
        ...

    def quick_model_probe(self) -> None:
        """Make the model's next request a single attempt with a short connect timeout."""
        ...


def template_outcome(found: TemplateMatch, context: AssessContext, *,
                     offline_reason: str | None, started: float) -> PlanOutcome:
    """The outcome for a template's plan (validated like any other)."""
    from anna_common.validate import validate  # the risk engine: loaded only when used

    assert found.plan is not None
    result = validate(found.plan, context)
    return PlanOutcome(result=result, plan=found.plan if result.ok else None,
                       template=found.template, template_confident=found.confident,
                       offline_reason=offline_reason,
                       provider="template", model="", elapsed_s=time.monotonic() - started)


def usage_checks(request: str, mode: str) -> str:
    """The request, stripped, or a usage error when it cannot be planned."""
    from annactl.planning.prompt import MAX_REQUEST_CHARS, MODES

    text = request.strip()
    if not text:
        raise UsageError("the request is empty", hint='say what you want, e.g. annactl "how is '
                         'my system?"')
    if len(text) > MAX_REQUEST_CHARS:
        raise UsageError(f"the request is {len(text)} characters; at most {MAX_REQUEST_CHARS} "
                         "are planned", hint="shorten it")
    if mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}", hint=f"one of {', '.join(MODES)}")
    return text
