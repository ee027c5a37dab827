"""The planning loop shared by one-shot, REPL and TUI.

request → telemetry → (offline template?) → prompt → model → extract JSON →
validate → at most one repair → (necessary checks on the daemon → refined
plan, at most :data:`MAX_ROUNDS` rounds) → :class:`PlanOutcome`.

Rules this module keeps:

* The model is a planner. Nothing here runs a command; checks run in the
  daemon, which assesses them itself.
* Validation never edits a plan. A plan with a hard-banned command is not
  repaired and never offered for approval: the outcome carries the
  validation (``banned``, ``BANNED_COMMAND``) and ``plan`` is None.
* Budgets per request: model calls (``max_model_calls``), prompt bytes
  (``max_prompt_bytes``), allowed models; exceeding one is
  ``LLM_BUDGET_EXCEEDED``.
* Untrusted text (telemetry, check output, the model's reply) only ever goes
  into user or assistant messages; the system message is static.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from anna_common.distro import context_from_telemetry
from anna_common.errors import AnnaError, ErrorCode, UsageError
from anna_common.findings import FindingCode, ValidationResult
from anna_common.validate import validate

if TYPE_CHECKING:
    from anna_common.plan import ActionPlan
    from anna_common.protocol import (
        CheckResult,
        ChecksResponse,
        SessionEnv,
        SubmitResponse,
        TelemetryResponse,
    )
    from anna_common.rules.base import AssessContext
    from anna_common.telemetry import Telemetry
    from annactl.config import ClientSettings
    from annactl.facts import Contradiction
    from annactl.history import History
    from annactl.llm.base import Provider
    from annactl.templates import TemplateMatch

log = logging.getLogger(__name__)

MAX_ROUNDS = 2
"""Rounds of necessary checks followed by a refined plan."""

OFFLINE_CODES = frozenset({ErrorCode.LLM_UNAVAILABLE, ErrorCode.LLM_TIMEOUT,
                           ErrorCode.LLM_MODEL_NOT_FOUND, ErrorCode.LLM_HTTP_ERROR})
"""Model failures after which a (weakly) matching template answers instead."""


class DaemonAPI(Protocol):
    """The part of :class:`annactl.daemon_client.DaemonClient` the planner uses."""

    def telemetry(self, *, fresh: bool = False,
                  session: SessionEnv | None = None) -> TelemetryResponse:
        """Current telemetry."""
        ...

    def submit(self, plan: ActionPlan, *, request: str = "",
               source: str = "model") -> SubmitResponse:
        """Store a plan; the daemon validates it itself."""
        ...

    def run_checks(self, plan_id: str, *,
                   session: SessionEnv | None = None) -> ChecksResponse:
        """Run a stored plan's necessary checks (read-only by the daemon's assessment)."""
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

    @property
    def confidence(self) -> float:
        """1.0 when the plan's claims agree with the telemetry; lower per contradiction."""
        from annactl.facts import confidence

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
        }


def is_banned(result: ValidationResult) -> bool:
    """The plan contains a hard-banned command: never repaired, never approvable."""
    return any(f.code == FindingCode.BANNED_COMMAND for f in result.errors) or bool(
        result.plan is not None and result.plan.banned)


class Planner:
    """Turns a request into a validated plan. One instance per session (REPL, TUI, command)."""

    def __init__(self, settings: ClientSettings, *, daemon: DaemonAPI | None = None,
                 provider: Provider | None = None, history: History | None = None) -> None:
        self.settings = settings
        self.daemon = daemon
        self.history = history
        self.home = str(Path.home())
        """The home directory plans are assessed against."""
        self._provider = provider
        self._owns_provider = provider is None
        from annactl.prompt import prompts

        prompts()  # a damaged prompt file fails here, at start, with its code (seed 003)
        self.run_id = uuid.uuid4().hex
        """This session's id (``trace.run_id`` in packets, ``run_id`` in the audit)."""
        self.session_calls = 0
        """Model calls made by this session so far (``max_session_calls``)."""
        self.session_tokens = 0
        """Prompt + reply tokens this session used so far (``max_session_tokens``)."""

    @property
    def provider(self) -> Provider:
        """The model provider (built from settings on first use)."""
        if self._provider is None:
            from annactl.llm import make_provider

            self._provider = make_provider(self.settings)
        return self._provider

    def close(self) -> None:
        """Close the provider if this planner built it."""
        if self._provider is not None and self._owns_provider:
            self._provider.close()

    def plan(self, request: str, *, mode: str = "one-shot", telemetry: Telemetry | None = None,
             use_templates: bool = True, turns: Sequence[tuple[str, str]] = (),
             preferences: dict[str, str] | None = None,
             on_progress: Callable[[Progress], None] | None = None,
             cancel: threading.Event | None = None) -> PlanOutcome:
        """Plan one request. Raises a coded error when no plan could be made."""
        from annactl.planner_run import Run

        run = Run(self, request, mode=mode, on_progress=on_progress, cancel=cancel)
        outcome: PlanOutcome | None = None
        error: AnnaError | None = None
        try:
            outcome = run.execute(telemetry, use_templates=use_templates, turns=list(turns),
                                  preferences=preferences)
            return outcome
        except AnnaError as exc:
            error = exc
            run.tracer.event("PLAN_FAILED", code=str(exc.code), message=exc.message)
            raise
        finally:
            run.finish(outcome, error)

    # ------------------------------------------------------------------ helpers for Run
    def fetch_telemetry(self) -> Telemetry:
        """Telemetry from the daemon, or an empty snapshot saying why there is none."""
        from anna_common.telemetry import Telemetry

        if self.daemon is None:
            return Telemetry(errors=["no telemetry: no daemon connection"])
        from anna_common.protocol import SessionEnv

        session = SessionEnv.from_environ(dict(os.environ))
        return self.daemon.telemetry(session=session).telemetry

    def assess_context(self, telemetry: Telemetry) -> AssessContext:
        """The context plans are validated in."""
        return context_from_telemetry(telemetry, self.home)

    def match_template(self, request: str, telemetry: Telemetry) -> TemplateMatch | None:
        """The best offline template for ``request``, if any."""
        from annactl import templates

        return templates.match(request, telemetry, context=self.assess_context(telemetry),
                               home=self.home)


def template_outcome(found: TemplateMatch, context: AssessContext, *,
                     offline_reason: str | None, started: float) -> PlanOutcome:
    """The outcome for a template's plan (validated like any other)."""
    assert found.plan is not None
    result = validate(found.plan, context)
    return PlanOutcome(result=result, plan=found.plan if result.ok else None,
                       template=found.template, offline_reason=offline_reason,
                       provider="template", model="", elapsed_s=time.monotonic() - started)


def usage_checks(request: str, mode: str) -> str:
    """The request, stripped, or a usage error when it cannot be planned."""
    from annactl.prompt import MAX_REQUEST_CHARS, MODES

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
