"""The evaluation the model answers in (:mod:`annactl.planning.evaluate`), as pydantic models.

Their own module: only a model's reply (and its JSON Schema) needs them, so showing Anna's
own evaluation of a stored plan's run never imports pydantic (``bench/startup.py``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class GoalVerdict(BaseModel):
    """Whether one goal of the plan was met, and the evidence."""

    model_config = ConfigDict(extra="forbid", strict=True)

    goal: str = Field(max_length=300)
    """A goal of the plan, in the plan's words."""
    met: bool
    """Whether the results show it reached."""
    why: str = Field(max_length=600)
    """The evidence in the results (exit codes, output, verification)."""


class Evaluation(BaseModel):
    """The evaluation schema the model answers in (generated into its JSON Schema)."""

    model_config = ConfigDict(extra="forbid", strict=True, title="Evaluation")

    goals_met: bool
    """True only when every goal was met."""
    goals: list[GoalVerdict] = Field(max_length=12)
    """One verdict per goal of the plan."""
    summary: str = Field(max_length=800)
    """One or two plain sentences for the person."""
    suggestion: str = Field(max_length=600)
    """What a corrected plan should do differently ("" when nothing failed)."""
