"""Plans for the fleet tests, annotated by Anna's real validation."""

from __future__ import annotations

from anna_common.findings import AnnotatedPlan
from annactl.commands.playbook import ApprovalRecord, Mode, build
from tests.ui.plans import annotate_dict, plan_dict

__all__ = ["annotate_dict", "approval_for", "plan_dict", "playbook"]


def approval_for(plan: AnnotatedPlan, *, word: str | None = None) -> ApprovalRecord:
    """The approval ``export`` records for ``plan`` (HIGH when ``word`` is given)."""
    return ApprovalRecord(risk=str(plan.final_risk), confirmations=2 if word else 1,
                          word=word, by="tester", at="2026-11-23T07:00:00+00:00",
                          digest=plan.digest)


def playbook(plan: AnnotatedPlan, mode: Mode, *, plan_id: str = "p-test",
             word: str | None = None) -> str:
    """The exported playbook text."""
    return build(plan, plan_id=plan_id, approval=approval_for(plan, word=word), mode=mode)
