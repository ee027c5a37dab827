"""The policy's verdict on one check, step or rollback command, as carried in a plan.

Kept apart from :mod:`anna_common.policy.decide` (the matcher) so the plan models
(:mod:`anna_common.findings`) can hold it without importing the shell analysis.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

PolicyAction = Literal["deny", "ask", "allow", "default"]
"""``deny``: never runs; ``ask``: needs a confirmation even when its tier needs none;
``allow``: the single confirmation of an INFO/LOW item is waived; ``default``: no rule
changes what the tier asks (a rule may still be named: an ``allow`` above LOW)."""


class PolicyMark(BaseModel):
    """Which policy rule decided an item, and what it decided."""

    # no use_attribute_docstrings: see anna_common/findings.py
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    action: PolicyAction
    """The effect on this item."""
    rule: str
    """The rule's id (its ``id`` key, else ``FILE:LINE``)."""
    source: str
    """The file and line the rule is written at (``/etc/anna/policy.toml:12``)."""
    note: str = ""
    """Why, when the rule alone does not say (``Anna cannot see what it runs``, ``allow only
    waives INFO/LOW confirmations``)."""
