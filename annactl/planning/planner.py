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
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from anna_common.distro import context_from_telemetry
from anna_common.errors import AnnaError
from annactl.planning.outcome import QUICK_CONNECT_S, DaemonAPI, PlanOutcome, Progress

if TYPE_CHECKING:
    from anna_common.risk.rules.base import AssessContext
    from anna_common.telemetry import Telemetry
    from annactl.core.config import ClientSettings
    from annactl.planning.history import History
    from annactl.planning.llm.base import Provider
    from annactl.planning.piped import Piped
    from annactl.planning.templates import TemplateMatch

log = logging.getLogger(__name__)


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
        from annactl.planning.prompt import prompts

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
            from annactl.planning.llm import make_provider

            self._provider = make_provider(self.settings)
        return self._provider

    def quick_model_probe(self) -> None:
        """One attempt with a short connect timeout (a weak offline answer is waiting and no
        model was configured); only for a provider this planner built itself."""
        if not self._owns_provider:
            return
        quick = getattr(self.provider, "quick", None)
        if callable(quick):
            quick(QUICK_CONNECT_S)

    def close(self) -> None:
        """Close the provider if this planner built it."""
        if self._provider is not None and self._owns_provider:
            self._provider.close()

    def plan(self, request: str, *, mode: str = "one-shot", telemetry: Telemetry | None = None,
             use_templates: bool = True, turns: Sequence[tuple[str, str]] = (),
             preferences: dict[str, str] | None = None,
             on_progress: Callable[[Progress], None] | None = None,
             cancel: threading.Event | None = None,
             continuation: Sequence[dict[str, str]] = (),
             piped: Piped | None = None,
             on_offline: Callable[[PlanOutcome], None] | None = None,
             on_offline_checks: Callable[[PlanOutcome], None] | None = None) -> PlanOutcome:
        """Plan one request. Raises a coded error when no plan could be made.

        ``continuation``: turns after the user message (a failed plan and the fix request,
        :mod:`annactl.planning.fix`); the reply is validated like any plan. ``piped``: text
        piped in with the request, sent as an untrusted document; a template, which cannot
        read it, then answers only when the model cannot. ``on_offline``: called (in this
        thread) with a weakly matching template's outcome before the model is asked, so a
        front end can show it while the model works; ``on_offline_checks``: called with it
        again once this run ran its checks (when its ``checks_follow`` said so).
        """
        from annactl.planning.planner_run import Run

        run = Run(self, request, mode=mode, on_progress=on_progress, cancel=cancel)
        run.on_offline, run.on_offline_checks = on_offline, on_offline_checks
        run.continuation = [dict(m) for m in continuation]
        run.piped = piped
        outcome: PlanOutcome | None = None
        error: AnnaError | None = None
        try:
            outcome = run.execute(telemetry, use_templates=use_templates, turns=list(turns),
                                  preferences=preferences)
            return outcome
        except AnnaError as exc:
            error = exc
            exc.detail.setdefault("form_choice", run.form_detail())
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
        from anna_common.protocol.models import SessionEnv

        session = SessionEnv.from_environ(dict(os.environ))
        return self.daemon.telemetry(session=session).telemetry

    def assess_context(self, telemetry: Telemetry) -> AssessContext:
        """The context plans are validated in."""
        return context_from_telemetry(telemetry, self.home)

    def match_template(self, request: str, telemetry: Telemetry) -> TemplateMatch | None:
        """The best offline template for ``request``, if any."""
        from annactl.planning import templates

        return templates.match(request, telemetry, context=self.assess_context(telemetry),
                               home=self.home)


