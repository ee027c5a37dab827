"""Validation findings and the annotated view of a plan (the models validate returns)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

from anna_common.plan import ActionPlan, RiskLevel, Scope
from anna_common.policy.mark import PolicyMark

# Field docstrings stay documentation only: no use_attribute_docstrings, whose source
# parsing at import cost every annactl command ~1/5 of its start-up (bench/startup.py).
# Only the model-facing ActionPlan schema carries them (anna_common/plan.py).
_MODEL = ConfigDict(extra="forbid", defer_build=True)

StepKind = Literal["check", "step", "rollback"]
"""Which list of the plan an annotated step came from."""
RollbackStatus = Literal["available", "unverified", "partial", "none"]
"""How much of a plan's change can be undone."""


class FindingCode(StrEnum):
    """Stable validation finding codes. Append-only."""

    PARSE_ERROR = "PARSE_ERROR"
    """No JSON object could be read from the text."""
    SCHEMA_ERROR = "SCHEMA_ERROR"
    """The object does not match the ActionPlan v3 schema."""
    LIMIT_EXCEEDED = "LIMIT_EXCEEDED"
    """Too many entries, a command or id too long, or the plan too big."""
    DUPLICATE_ID = "DUPLICATE_ID"
    """Two checks, steps or rollback steps share an id."""
    UNKNOWN_ROLLBACK_REF = "UNKNOWN_ROLLBACK_REF"
    """A step's ``rollback_id`` names no rollback step."""
    EMPTY_COMMAND = "EMPTY_COMMAND"
    """A command is empty or only whitespace."""
    BANNED_COMMAND = "BANNED_COMMAND"
    """A command is hard-banned; the plan can never be approved."""
    CHECK_NOT_READ_ONLY = "CHECK_NOT_READ_ONLY"
    """A necessary check is not INFO by Anna's own assessment."""
    NOT_NATIVE = "NOT_NATIVE"
    """A command uses a package manager foreign to this distribution."""
    RISK_RAISED = "RISK_RAISED"
    """Warning: Anna raised the model's risk label."""
    CONFIRMATION_ADDED = "CONFIRMATION_ADDED"
    """Warning: the model said no confirmation, Anna requires one."""
    OPAQUE_COMMAND = "OPAQUE_COMMAND"
    """Warning: a command does not parse as bash; it is treated as HIGH."""
    VERSION_MISMATCH = "VERSION_MISMATCH"
    """Warning: ``meta.llm_version`` is not ``anna_runtime_v3``."""
    LLM_ECHOED_EXAMPLE = "LLM_ECHOED_EXAMPLE"
    """The reply copies a prompt example instead of planning the request (annactl only)."""
    LLM_OFF_REQUEST = "LLM_OFF_REQUEST"
    """The plan has no step that could do what the request asks (annactl only)."""
    CONTROL_CHARACTER = "CONTROL_CHARACTER"
    """A command holds NUL, ESC or another control character (only tab and newline may
    appear): it would run, or show, differently than it reads."""


class Finding(BaseModel):
    """One problem found in a plan."""

    model_config = _MODEL

    code: FindingCode
    """Stable code."""
    message: str
    """One human sentence."""
    path: str = ""
    """Where: ``command_plan[1].command``, ``necessary_checks[0].id``, ``""`` for the whole plan."""


class AnnotatedStep(BaseModel):
    """A check, step or rollback step with Anna's own assessment attached."""

    model_config = _MODEL

    kind: StepKind
    """Which list it came from."""
    index: int
    """Position in that list."""
    id: str
    """The entry's id."""
    description: str
    """The model's description (untrusted text)."""
    command: str
    """The command (untrusted text)."""
    model_risk: RiskLevel
    """The model's label (INFO for rollback steps, which carry none)."""
    floor: RiskLevel
    """Anna's computed floor."""
    final_risk: RiskLevel
    """max(model_risk, floor): what the person is asked to approve."""
    banned: bool
    """Hard-banned: never approvable."""
    scope: Scope
    """``system`` (root) or ``user``."""
    codes: list[str]
    """Anna's reason codes."""
    reasons: list[str]
    """Anna's reasons."""
    parse_ok: bool
    """False when the command does not parse."""
    requires_confirmation: bool
    """True when final_risk is LOW or above, or the model asked for one."""
    rollback_id: str | None = None
    """For steps: the rollback entry that undoes it."""
    confirm_word: str | None = None
    """For HIGH steps: what the person must type to confirm."""
    writes: list[str] = []
    """Paths it writes, as Anna resolved them."""
    policy: PolicyMark | None = None
    """The policy rule that decided it (set by the daemon; None when no rule matched)."""


class AnnotatedPlan(BaseModel):
    """The plan as the model wrote it, plus Anna's verdict on every command."""

    model_config = _MODEL

    plan: ActionPlan
    """The plan, unchanged."""
    digest: str
    """sha256 of the plan's canonical JSON."""
    checks: list[AnnotatedStep]
    """necessary_checks, annotated."""
    steps: list[AnnotatedStep]
    """command_plan, annotated."""
    rollback: list[AnnotatedStep]
    """rollback_plan, annotated."""
    final_risk: RiskLevel
    """The highest final risk of the steps and rollback commands (INFO for a plan without
    either): a rollback command runs unasked when a step fails, so it counts."""
    banned: bool
    """Some check, step or rollback command is hard-banned."""
    scope: Scope
    """``system`` when any step needs root."""
    confirmations: int
    """0 for INFO, 1 for LOW/MEDIUM (or when the model asked), 2 for HIGH (rollback
    commands included)."""
    confirm_word: str | None
    """For HIGH plans: the raw word the second confirmation asks for (from the first HIGH
    step, else the first HIGH rollback command); shown and compared through
    :func:`anna_common.risk.tiers.plan_word`."""
    rollback_status: RollbackStatus = "none"
    """Whether every changing step can be undone (by its rollback command or the daemon's
    snapshots and recorded pre-state), every one can but some undo is one nothing checks
    (``unverified``: a live program whose state Anna records none of), some can, or none."""


class ValidationResult(BaseModel):
    """What :func:`validate` returns."""

    model_config = _MODEL

    ok: bool
    """No errors (warnings allowed)."""
    errors: list[Finding]
    """Problems that make the plan unusable."""
    warnings: list[Finding]
    """Things the person should know (risk raised, confirmation added)."""
    plan: AnnotatedPlan | None
    """The annotated plan when the schema held, else null."""
