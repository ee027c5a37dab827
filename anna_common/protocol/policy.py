"""Wire models of the policy endpoints (``GET /v1/policy``, ``POST /v1/policy/check``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from anna_common.plan import RiskLevel, Scope
from anna_common.policy.decide import Decision, Rule

# Field docstrings stay documentation only: no use_attribute_docstrings, whose source
# parsing at import cost every annactl command ~1/5 of its start-up (bench/startup.py).
# Only the model-facing ActionPlan schema carries them (anna_common/plan.py).
_MODEL = ConfigDict(extra="forbid", defer_build=True)

MAX_CHECK_COMMAND = 4096
"""Longest command ``policy check`` judges (a plan's command is at most 4096 bytes)."""


class PolicyView(BaseModel):
    """``GET /v1/policy``: the rules in force for the caller, in evaluation order."""

    model_config = _MODEL

    admin_file: str
    """The administrator's file the daemon reads (it may not exist: no rules)."""
    user_file: str | None
    """The caller's own file, when user policies are on."""
    sources: list[str]
    """The files that exist and were read."""
    rules: list[Rule]
    """Administrator rules first, then the caller's (its allow rules dropped)."""
    notes: list[str]
    """What loading had to say (an ignored user allow)."""


class PolicyCheckRequest(BaseModel):
    """``POST /v1/policy/check``."""

    model_config = _MODEL

    command: str = Field(min_length=1, max_length=MAX_CHECK_COMMAND)
    """The command to judge as a plan step."""


class PolicyCheckResponse(BaseModel):
    """What the policy would decide for the command as a plan step."""

    model_config = _MODEL

    command: str
    """The command judged."""
    decision: Decision
    """The policy's decision and the rule that made it."""
    tier: RiskLevel
    """Anna's risk floor for the command (the tier the decision was made at)."""
    scope: Scope
    """``system`` or ``user``."""
    banned: bool
    """Hard-banned: never approvable, whatever the policy says."""
    confirmations: int
    """Confirmations the step would need: 0, 1 or 2 (HIGH), the policy included."""
    reasons: list[str]
    """Anna's reasons for the tier."""
