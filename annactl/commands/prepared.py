"""A plan stored in the daemon, as the daemon annotated it: what the person approves.

Its own module so the flow (:mod:`annactl.commands.flow`) and the follower of a run
(:mod:`annactl.commands.follow`) share it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan, Finding
    from anna_common.protocol import CheckResult
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

    def summary_json(self) -> dict[str, Any]:
        """The JSON every command prints for a plan: ``plan_id``, ``status``, plan, findings."""
        data: dict[str, Any] = {
            "plan_id": self.plan_id,
            "status": "submitted",
            "digest": self.digest,
            "source": self.source,
            "plan": self.annotated.plan.model_dump(mode="json"),
            "annotated": self.annotated.model_dump(mode="json"),
            "findings": [],
            "warnings": [w.model_dump(mode="json") for w in self.warnings],
            "checks": [c.model_dump(mode="json") for c in self.checks],
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
        return data
