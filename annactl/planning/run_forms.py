"""Which form one request is asked in, from the model's profile (issue 39.2).

Split from :mod:`annactl.planning.planner_run` as a base class of its
:class:`~annactl.planning.planner_run.Run`: the choice (:func:`profile.decide`), the
observations each model call adds to the profile, and an unknown model's fallback from the
full contract to the request's small form within the same time budget.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from anna_common.errors import ErrorCode, LLMError
from annactl.planning import profile

if TYPE_CHECKING:
    from annactl.core.config import ClientSettings
    from annactl.planning.llm.base import ChatResult
    from annactl.planning.llm.trace import Tracer


class FormChoice:
    """The form choice of one request (state lives on the run)."""

    settings: ClientSettings
    tracer: Tracer
    form: str
    compact: bool
    deadline: float | None

    def init_forms(self) -> None:
        """Per-request state (called by the run's constructor)."""
        self.form_why = ""
        """Why the request was asked in its form (shown by bench/golden.py, traced)."""
        self.trial_form: str | None = None
        """An unknown model's small form to fall back to when the contract does not close."""
        self.trial_deadline: float | None = None
        """When the contract's trial ends (``time.monotonic()``)."""
        self.profile_key = ""

    def choose_form(self, words: str) -> None:
        """Set :attr:`form` from the request's words (``words``) and the model's profile."""
        settings = self.settings
        self.profile_key = profile.key_of(settings.llm_provider, settings.resolved_llm_url,
                                          settings.llm_model)
        pin = getattr(settings, "llm_forms", "auto")
        choice = profile.decide(profile.load(settings.state_dir, self.profile_key), pin=pin,
                                budget=settings.llm_budget)
        if choice.kind == "contract":
            self.form = "plan"
            if choice.trial and words != "plan":
                self.trial_form = words
        else:
            self.form = words
            if words == "plan" and pin == "auto" and settings.llm_ids == "positional":
                self.compact = True  # a model that cuts full plans gets the compact one
        self.form_why = f"{choice.why}; asked in the {self.form} form"
        self.tracer.event("FORM_CHOSEN", form=self.form, why=choice.why, trial=choice.trial)

    def call_deadline(self) -> float | None:
        """The deadline of the next call: the budget's, or the contract trial's if sooner."""
        if self.trial_deadline is None:
            return self.deadline
        if self.deadline is None:
            return self.trial_deadline
        return min(self.deadline, self.trial_deadline)

    def start_trial(self) -> None:
        """The contract's share of the budget starts now (an unknown model's first try)."""
        if self.trial_form is not None and self.deadline is not None:
            left = self.deadline - time.monotonic()
            self.trial_deadline = time.monotonic() + left * profile.TRIAL_SHARE

    def trial_failed(self, exc: LLMError) -> bool:
        """The contract trial ended without a usable reply in time, and its small form is
        left to ask in (the caller switches and asks again within the budget)."""
        if self.trial_form is None:
            return False
        late = exc.code == ErrorCode.LLM_TIMEOUT and not exc.detail.get("busy")
        cut = bool(exc.detail.get("truncated"))
        if not (late or cut):
            return False
        if self.deadline is not None and time.monotonic() >= self.deadline - 1.0:
            return False
        self.tracer.event("FORM_FALLBACK", frm="plan", to=self.trial_form,
                          reason="cut at the token cap" if cut else "not closed in time")
        self.form_why += (f"; the contract was {'cut' if cut else 'not closed in time'}: "
                          f"asked again in the {self.trial_form} form")
        self.form, self.trial_form, self.trial_deadline = self.trial_form, None, None
        return True

    # ------------------------------------------------------------------ observations
    def observe(self, form: str, reply: ChatResult | None, seconds: float,
                error: LLMError | None = None) -> None:
        """Add one call's outcome to the model's profile."""
        if not self.profile_key:
            return
        kind = "plan" if form.startswith("plan") else "small"
        if reply is not None:
            outcome = "cut" if reply.truncated else "closed"
            seconds = max(seconds, float(reply.latency_s or 0.0))
        elif error is not None and error.code == ErrorCode.LLM_TIMEOUT \
                and not error.detail.get("busy"):
            outcome = "slow"
        else:
            return  # unreachable, refused: nothing about what the model can do
        profile.record(self.settings.state_dir, self.profile_key, kind, outcome, seconds)

    def observe_valid(self, form: str, ok: bool) -> None:
        """Say whether the last closed reply was usable."""
        if self.profile_key:
            profile.mark_valid(self.settings.state_dir, self.profile_key,
                               "plan" if form.startswith("plan") else "small", ok)

    def form_detail(self) -> dict[str, Any]:
        """The form and why, for an error's detail (bench/golden.py reports them)."""
        return {"form": self.form, "why": self.form_why}
