"""Wire models of unattended recipes and the approval queue (``/v1/recipes``, ``/v1/queue``).

A recipe is a named, parameterised plan template an administrator keeps in
``/etc/anna/recipes.d``; a systemd timer asks the daemon to run it. The daemon runs it
only when every step and rollback command is INFO or LOW (and policy allows it);
otherwise the stored plan waits in the queue for a person (``annactl queue``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from anna_common.plan import RiskLevel
from anna_common.protocol.records import PlanStatus

# Field docstrings stay documentation only: no use_attribute_docstrings, whose source
# parsing at import cost every annactl command ~1/5 of its start-up (bench/startup.py).
# Only the model-facing ActionPlan schema carries them (anna_common/plan.py).
_MODEL = ConfigDict(extra="forbid", defer_build=True)

RECIPE_NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
"""A recipe's name: its file name without ``.toml`` (never a path)."""
MAX_PARAMS = 32
"""Parameters a run request may set."""


class RecipeRunRequest(BaseModel):
    """``POST /v1/recipes/{name}/run``."""

    model_config = _MODEL

    params: dict[str, str] = Field(default_factory=dict, max_length=MAX_PARAMS)
    """Values for the recipe's declared parameters (others are refused); each is passed to
    the command as one shell-quoted word."""
    trigger: Literal["timer", "manual"] = "manual"
    """Who asked: the systemd timer or a person (journalled)."""


class RecipeRunResponse(BaseModel):
    """What a recipe run did."""

    model_config = _MODEL

    recipe: str
    """The recipe's name."""
    plan_id: str
    """The plan the run stored (shown in history; queued plans are approved by this id)."""
    outcome: Literal["ran", "queued"]
    """``ran``: executed unattended; ``queued``: waits for a person."""
    status: PlanStatus
    """The plan's state after the run (``submitted`` when queued)."""
    risk: RiskLevel
    """The plan's tier as the daemon computed it."""
    reasons: list[str] = Field(default_factory=list)
    """Why it was queued (one line per step that may not run unattended)."""
    notified: int = 0
    """Desktop sessions told that something waits."""


class QueueEntry(BaseModel):
    """One plan waiting for approval."""

    model_config = _MODEL

    plan_id: str
    """Approve with ``annactl queue approve ID`` (or ``annactl apply ID``)."""
    recipe: str
    """The recipe that made it."""
    goal: str
    """The plan's first goal (untrusted text)."""
    risk: RiskLevel
    """The plan's tier."""
    reasons: list[str]
    """Why it could not run unattended."""
    queued_at: float
    """Unix time it was queued."""
    state: Literal["waiting", "dismissed"] = "waiting"
    """``dismissed`` after ``annactl queue dismiss``."""
    agent: str | None = None
    """The agent that proposed it through ``annactl mcp`` (its MCP client's name, made
    printable; untrusted), None for a recipe's plan. ``recipe`` is then empty."""
    kind: Literal["plan", "rollback"] = "plan"
    """``plan``: approving runs the plan (``annactl apply ID``); ``rollback``: an agent
    asked for the undo of a plan that ran, and approving rolls it back (``annactl
    rollback ID``)."""


class QueueList(BaseModel):
    """``GET /v1/queue``: waiting plans, oldest first."""

    model_config = _MODEL

    entries: list[QueueEntry]
    """Plans still ``submitted`` whose entry was not dismissed."""
