"""``anna_propose`` with a request and no plan: Anna's own planner makes the plan.

The agent's words are a request like a person's (untrusted text in the model's user message,
never in the system prompt), planned as ``annactl plan TEXT`` plans it: the model (or an
offline template) proposes, the daemon judges. The planner stores its copy as it always
does; that copy is recorded as a dry run (shown to no one, never run) and the same plan is
then proposed through the agent route, so what waits for the person carries the agent's
name, its limits and its journal entries like any agent's plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from annactl.mcp.daemon import AgentClient


def plan_for(client: AgentClient, request: str) -> dict[str, Any]:
    """The ActionPlan (as JSON) Anna's planner makes for ``request``."""
    from annactl.commands.flow import Flow
    from annactl.core.config import load_settings
    from annactl.core.daemon_client import DaemonClient

    settings = load_settings()
    flow = Flow(settings, DaemonClient(client.socket_path))
    prepared = flow.plan_text(request, mode="one-shot", use_templates=settings.templates)
    if prepared.plan_id and prepared.source != "rejected":
        flow.daemon.mark_dry_run(prepared.plan_id)
    plan: dict[str, Any] = prepared.annotated.plan.model_dump(mode="json")
    plan.pop("memory_patch", None)  # the client's business, never the daemon's
    return plan
