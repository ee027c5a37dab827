"""The MCP resources of ``annactl mcp`` (plan records) and the tools' input schemas.

A plan an agent proposed is the resource ``anna://plans/{plan_id}``: its
:class:`~anna_common.protocol.agent.AgentPlanState` as JSON (state, steps, output, undo),
read through the daemon's agent route like ``anna_result``. The list is this user's
twenty newest plans agents proposed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import mcp_types as types

if TYPE_CHECKING:
    from anna_common.protocol.agent import AgentHistory
    from annactl.mcp.tools import ToolSpec

URI_PREFIX = "anna://plans/"
"""Where plan records live."""
TEMPLATE = types.ResourceTemplate(
    name="plan", title="A plan an agent proposed", uri_template=URI_PREFIX + "{plan_id}",
    description="Its state (waiting for a person, dismissed, ran), steps, output and undo.",
    mime_type="application/json")
"""The plan records' URI template."""
_ID = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{6}")


def plan_id_of(uri: str) -> str | None:
    """The plan id a resource URI names (None: not a plan record)."""
    if not uri.startswith(URI_PREFIX):
        return None
    rest = uri[len(URI_PREFIX):]
    return rest if _ID.fullmatch(rest) else None


def listed(history: AgentHistory) -> list[types.Resource]:
    """The resources of the plans in ``history`` (titles are untrusted text: data)."""
    return [types.Resource(name=entry.summary.plan_id, uri=URI_PREFIX + entry.summary.plan_id,
                           title=entry.summary.title[:120],
                           description=f"{entry.summary.status}, {entry.summary.final_risk}, "
                                       f"proposed by {entry.agent}",
                           mime_type="application/json") for entry in history.plans]


def input_schema(tool: ToolSpec) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments; ``anna_propose``'s ``plan`` is described by
    the contract's ActionPlan schema (the daemon validates the plan against it itself)."""
    schema: dict[str, Any] = tool.args.model_json_schema()
    schema.pop("title", None)
    schema.pop("description", None)  # the tool's own description says it
    if tool.name == "anna_propose":
        from anna_common.plan import ActionPlan

        plan = ActionPlan.model_json_schema()
        defs = plan.pop("$defs", {})
        schema.setdefault("$defs", {}).update(defs)
        plan["description"] = schema["properties"]["plan"].get("description", "")
        schema["properties"]["plan"] = plan
    return schema
