"""The policy's ``[agents]`` table: what other agents may do through ``annactl mcp``.

An agent (Claude Code, goose, any MCP client) reaches Anna only through ``annactl mcp``,
as the user who runs it; the daemon serves it on its own routes (``/v1/agent/...``) and
asks these rules first, on every call. The administrator's table sets them; a user's own
file may only restrict them further (``enabled``/``propose`` can only be turned off, the
lists only grow, the limits only shrink). No table: agents may look, check and propose,
within the default limits below. Pure: no I/O.

An agent's name is what its MCP client says it is (``clientInfo.name``): untrusted, so
``deny_names`` is a convenience for well-behaved clients, not a wall. The wall is that no
tool of an agent changes the machine: a person approves every plan that does.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from anna_common.policy.glob import flat_match, size_problem

TOOLS = ("anna_status", "anna_explain", "anna_check", "anna_propose", "anna_result",
         "anna_history", "anna_rollback")
"""Every tool ``annactl mcp`` serves (names ``deny_tools`` may use)."""
PROPOSING = frozenset({"anna_propose", "anna_rollback"})
"""The tools ``propose = false`` turns off: they put something in front of a person."""
MAX_LIMIT = 100_000
"""Largest value a limit may be set to."""
MAX_NAMES = 64
"""Entries ``deny_tools`` or ``deny_names`` may list."""
_KEYS = frozenset({"enabled", "propose", "deny_tools", "deny_names", "calls_per_minute",
                   "proposals_per_hour", "max_waiting"})
_LIMITS = ("calls_per_minute", "proposals_per_hour", "max_waiting")


class AgentRules(BaseModel):
    """What agents may do, and how much (the defaults hold where a file says nothing)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    enabled: bool = True
    """False: every agent call is refused (``POLICY_DENIED``)."""
    propose: bool = True
    """False: agents may look and run read-only checks, never propose a plan or ask for
    an undo."""
    deny_tools: tuple[str, ...] = ()
    """Tools refused to every agent (names from :data:`TOOLS`)."""
    deny_names: tuple[str, ...] = ()
    """Agents refused by the name their MCP client gives (globs: ``"goose*"``)."""
    calls_per_minute: int = 60
    """Calls one agent (one name, one user) may make in any 60 seconds."""
    proposals_per_hour: int = 20
    """Plans and undo requests one agent may propose in any hour."""
    max_waiting: int = 10
    """Plans and undo requests of one agent that may wait for a person at once."""

    def refusal(self, tool: str, agent: str) -> str | None:
        """Why these rules refuse ``tool`` to ``agent`` (None: they allow it)."""
        if not self.enabled:
            return "the policy turns agents off ([agents] enabled = false)"
        for pattern in self.deny_names:
            if flat_match(pattern, agent):
                return f"the policy refuses agent {agent!r} ([agents] deny_names {pattern!r})"
        if tool in self.deny_tools:
            return f"the policy refuses {tool} to agents ([agents] deny_tools)"
        if tool in PROPOSING and not self.propose:
            return "the policy lets agents look, not propose ([agents] propose = false)"
        return None


def parse_agents(table: object, fail: Any) -> AgentRules:
    """The ``[agents]`` table as rules; ``fail(key, message)`` makes the error to raise."""
    if not isinstance(table, dict):
        raise fail("agents", "agents must be a table ([agents])")
    for key in table:
        if key not in _KEYS:
            raise fail(key, f"unknown key {key!r} in [agents] (known: {', '.join(sorted(_KEYS))})")
    fields: dict[str, Any] = {}
    for key in ("enabled", "propose"):
        if key in table:
            if not isinstance(table[key], bool):
                raise fail(key, f"{key} must be true or false")
            fields[key] = table[key]
    for key in _LIMITS:
        if key in table:
            value = table[key]
            if isinstance(value, bool) or not isinstance(value, int) or \
                    not 0 <= value <= MAX_LIMIT:
                raise fail(key, f"{key} must be a whole number from 0 to {MAX_LIMIT}")
            fields[key] = value
    for key in ("deny_tools", "deny_names"):
        if key in table:
            fields[key] = _names(table[key], key, fail)
    unknown = [t for t in fields.get("deny_tools", ()) if t not in TOOLS]
    if unknown:
        raise fail("deny_tools", f"no tool {unknown[0]!r} (tools: {', '.join(TOOLS)})")
    return AgentRules(**fields)


def _names(value: object, key: str, fail: Any) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or len(items) > MAX_NAMES or not all(
            isinstance(v, str) and v.strip() for v in items):
        raise fail(key, f"{key} must be a non-empty string or a list of at most {MAX_NAMES}")
    for pattern in items:
        problem = size_problem(pattern)
        if problem is not None:
            raise fail(key, f"bad {key} entry {pattern[:80]!r}: {problem}")
    return tuple(items)


def restricted(admin: AgentRules | None, user: AgentRules | None) -> AgentRules | None:
    """The administrator's rules with what the user's file sets on top (only ever less)."""
    if user is None:
        return admin
    base = admin or AgentRules()
    said = user.model_fields_set
    update: dict[str, Any] = {
        "enabled": base.enabled and user.enabled,
        "propose": base.propose and user.propose,
        "deny_tools": tuple(dict.fromkeys(base.deny_tools + user.deny_tools)),
        "deny_names": tuple(dict.fromkeys(base.deny_names + user.deny_names)),
    }
    for key in _LIMITS:
        if key in said:
            update[key] = min(getattr(base, key), getattr(user, key))
    return base.model_copy(update=update)
