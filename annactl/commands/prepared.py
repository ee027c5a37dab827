"""A plan stored in the daemon, as the daemon annotated it: what the person approves.

Its own module so the flow (:mod:`annactl.commands.flow`) and the follower of a run
(:mod:`annactl.commands.follow`) share it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan, Finding
    from anna_common.protocol.models import CheckResult
    from anna_common.protocol.preview import PlanPreview
    from anna_common.telemetry import Telemetry
    from annactl.planning.facts import Contradiction
    from annactl.planning.outcome import PlanOutcome


@dataclass
class Prepared:
    """A plan stored in the daemon, as the daemon annotated it: what the person approves."""

    plan_id: str
    """The daemon's id (for execute, show, rollback)."""
    digest: str
    """The digest execute must send back."""
    annotated: AnnotatedPlan
    """The daemon's own assessment of every command."""
    source: str = "model"
    """``model``, ``template``, ``file`` or ``stored``."""
    request: str = ""
    """The person's words (untrusted when shown)."""
    warnings: list[Finding] = field(default_factory=list)
    """Validation warnings (risk raised, confirmation added)."""
    checks: list[CheckResult] = field(default_factory=list)
    """Outcomes of the read-only checks, once run."""
    outcome: PlanOutcome | None = None
    """The planner's report (model calls, repairs, template), when a model or template made it."""
    preview: PlanPreview | None = None
    """What each step will do, as the daemon previewed it (None: no preview was made)."""
    conversation: dict[str, Any] | None = None
    """``ask --continue``/``--session``: the conversation and the earlier turns the model got
    (``--json`` prints it as ``conversation``)."""
    changed: str = ""
    """For a plan the person changed (``--skip``/``--edit``, the TUI's Change Steps, the
    REPL's ``skip``/``edit``): what was changed, from which plan; empty otherwise."""

    @property
    def contradictions(self) -> list[Contradiction]:
        """The model's claims that the telemetry contradicts (shown wherever the plan is)."""
        return list(self.outcome.contradictions) if self.outcome is not None else []

    @property
    def answer_telemetry(self) -> Telemetry | None:
        """For a model's answer with no steps: the telemetry Anna shows beside its prose
        (a template's notes already come from telemetry)."""
        outcome = self.outcome
        if outcome is None or outcome.template is not None or self.annotated.steps:
            return None
        return outcome.telemetry

    def summary_json(self) -> dict[str, Any]:
        """The JSON every command prints for a plan: ``plan_id``, ``status``, plan, findings,
        and a ``preview`` object per step."""
        from annactl.ui.render_preview import preview_json

        data: dict[str, Any] = {
            "plan_id": self.plan_id,
            # the daemon's rule: a plan with no steps is recorded as answered
            "status": "submitted" if self.annotated.steps else "answered",
            "digest": self.digest,
            "source": self.source,
            "plan": self.annotated.plan.model_dump(mode="json"),
            "annotated": self.annotated.model_dump(mode="json"),
            "findings": [],
            "warnings": [w.model_dump(mode="json") for w in self.warnings],
            "checks": [c.model_dump(mode="json") for c in self.checks],
            "preview": preview_json(self.preview, self.annotated.steps),
            "model_calls": 0,
            "repairs": 0,
            "template": None,
        }
        if self.outcome is not None:
            summary = self.outcome.summary()
            # the daemon's annotation, warnings and check results are the ones that count
            for key in ("plan", "ok", "findings", "warnings", "checks"):
                summary.pop(key, None)
            data.update(summary)
            piped = self.outcome.piped
            if piped is not None and self.outcome.template and isinstance(data["piped"], dict):
                from annactl.planning.piped_tally import tally

                counted = tally(piped.whole)  # no model read it: Anna's own count, as in text
                data["piped"]["tally"] = counted.to_dict() if counted is not None else None
        if self.conversation is not None:
            data["conversation"] = self.conversation
        return data
