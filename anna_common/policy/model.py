"""The policy's values: its rules as written, the policy in force, a decision, its error.

Frozen pydantic models, unknown keys refused (``extra="forbid"``). Parsed from files by
:mod:`anna_common.policy.parse`, judged against a command by :mod:`anna_common.policy.decide`
(which re-exports them with the rest of the public interface). Pure: no I/O.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import RiskLevel, Scope
from anna_common.policy.agents import AgentRules
from anna_common.policy.mark import PolicyAction, PolicyMark

Origin = Literal["admin", "user"]
"""Whose file a rule comes from."""
_MODEL = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class PolicyError(AnnaError):
    """A policy file is malformed (``detail``: ``file``, ``line``)."""

    code = ErrorCode.POLICY_INVALID


class Rule(BaseModel):
    """One rule, as written (lists normalised)."""

    model_config = _MODEL

    id: str
    """Its name (the ``id`` key, else ``FILE:LINE``)."""
    action: Literal["deny", "ask", "allow"]
    """What it decides when it matches."""
    program: tuple[str, ...] = ()
    """Program names or globs (basenames): matched against the program and every wrapper
    crossed to reach it (``sudo``, ``env``)."""
    argv: tuple[str, ...] = ()
    """Argument globs; each must match some argument. ``-X`` (one letter) also matches a
    cluster of short options holding it (``-Rns``)."""
    path: tuple[str, ...] = ()
    """Path globs (``/etc/ssh/**``, ``~/.ssh/*``)."""
    access: Literal["write", "any"] = "write"
    """``write``: the paths a command writes; ``any``: every path it names."""
    scope: tuple[Scope, ...] = ()
    """Scopes it applies to (empty: all)."""
    tier: tuple[RiskLevel, ...] = ()
    """Final risk tiers it applies to (empty: all)."""
    note: str = ""
    """The administrator's words, shown with the decision."""
    source: str = ""
    """``FILE:LINE`` of its ``[[rule]]`` header."""
    origin: Origin = "admin"
    """Whose file it comes from."""

    def mark(self, action: PolicyAction, note: str = "") -> PolicyMark:
        """This rule as the mark a plan item carries."""
        return PolicyMark(action=action, rule=self.id, source=self.source,
                          note=note or self.note)


class Policy(BaseModel):
    """The rules in force, in order, and what loading them had to say."""

    model_config = _MODEL

    rules: tuple[Rule, ...] = ()
    """Administrator rules first, then the user's."""
    sources: tuple[str, ...] = ()
    """The files read."""
    notes: tuple[str, ...] = ()
    """Things the person should see (a user ``allow`` that was ignored)."""
    agents: AgentRules | None = None
    """The ``[agents]`` table: what agents may do through ``annactl mcp`` (None: no file
    said anything, the defaults hold)."""


class Decision(BaseModel):
    """What the policy says about one command."""

    model_config = _MODEL

    action: PolicyAction
    """``deny``, ``ask``, ``allow`` or ``default`` (the tier decides alone)."""
    rule: Rule | None = None
    """The rule that decided (None: no rule matched)."""
    note: str = ""
    """Why, beyond the rule (an unseen part, an allow above LOW)."""
    tier: RiskLevel = RiskLevel.INFO
    """The tier the decision was made at."""

    def mark(self) -> PolicyMark | None:
        """The mark a plan item carries (None when no rule matched)."""
        return None if self.rule is None else self.rule.mark(self.action, self.note)
