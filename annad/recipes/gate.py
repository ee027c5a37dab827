"""The one decision: may this step run without a person?

A recipe run executes a plan unattended only when *every* step and rollback command of
it passes :func:`may_run_unattended` (a rollback runs without a question when a step
fails, so it counts like a step). Anything else becomes a queued plan. The whole plan is
judged, not each step on its own: steps depend on each other, and running half a plan
while the other half waits would leave the machine in a state nobody approved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.plan import RiskLevel
from anna_common.risk import tiers

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan, AnnotatedStep

UNATTENDED = (RiskLevel.INFO, RiskLevel.LOW)
"""The tiers a recipe may run without a person."""


def may_run_unattended(step: AnnotatedStep, tier: RiskLevel) -> tuple[bool, str]:
    """(allowed, reason) for one step of a plan whose tier is ``tier``.

    ``step`` is the daemon's own annotation (its final risk is at least Anna's computed
    floor), never a label from the recipe file alone.
    """
    if step.banned:
        return False, f"{step.id}: hard-banned"
    if step.final_risk not in UNATTENDED:
        # (only INFO and LOW run unattended; the reason stays short: it is a table cell)
        return False, f"{step.id}: {step.final_risk} needs a person"
    if tier not in UNATTENDED:
        return False, f"{step.id}: the plan is {tier} as a whole"
    # The administrator's policy (docs/policy.md) marked each item at submit; a deny there
    # already refused the plan, kept here too so the gate alone never lets one through.
    # ``ask`` means a person must say yes: the plan waits in the queue.
    mark = step.policy
    if mark is not None and mark.action == "deny":
        return False, f"{step.id}: denied by policy rule {mark.rule} ({mark.source})"
    if mark is not None and mark.action == "ask":
        return False, f"{step.id}: policy rule {mark.rule} asks for a person"
    return True, f"{step.id}: {step.final_risk}"


def decide(plan: AnnotatedPlan) -> tuple[bool, list[str]]:
    """Whether the whole plan may run unattended, and the reasons it may not."""
    tier = tiers.plan_risk(plan)
    refusals = []
    for step in [*plan.steps, *plan.rollback]:
        allowed, reason = may_run_unattended(step, tier)
        if not allowed:
            refusals.append(reason)
    if tiers.confirmations_needed(plan) >= 2 and not refusals:
        refusals.append("the plan needs the typed word of a HIGH confirmation")
    return not refusals, refusals
