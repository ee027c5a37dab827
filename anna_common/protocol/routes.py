"""The annad protocol's version, routes and constants, without its pydantic models.

:mod:`anna_common.protocol.models` re-exports every name here (the same objects) with the models.
They live apart so the client can reach the daemon without building those models
(``annactl apply ID`` within 15x a bare interpreter, ``bench/startup.py``).
"""

from __future__ import annotations

from enum import StrEnum

API_VERSION = 1
"""Protocol version. The client refuses a daemon whose ``api_version`` differs."""
API_PREFIX = "/v1"
"""Prefix of every route."""

SESSION_HEADER = "X-Anna-Session"
"""Request header carrying :class:`SessionEnv` as compact JSON (telemetry requests)."""

AGENT_HEADER = "X-Anna-Agent"
"""Request header naming the agent behind ``annactl mcp`` (compact JSON ``{"name",
"version"}`` from its MCP client info): required on the ``/v1/agent`` routes, refused on
every other route (an agent's connection may not execute, roll back or dismiss)."""

SYSTEM_SOCKET = "/run/anna/annad.sock"
"""The system daemon's socket (0660 root:anna)."""
SYSTEM_STATE_DIR = "/var/lib/anna"
"""The system daemon's state directory."""
GROUP = "anna"
"""Members of this group (and root) may submit, execute and roll back."""


class Route(StrEnum):
    """Every route the daemon serves (paths relative to the socket)."""

    HEALTH = "/v1/health"
    """GET: :class:`Health`."""
    TELEMETRY = "/v1/telemetry"
    """GET ``?fresh=1``: :class:`~anna_common.telemetry.Telemetry`."""
    PLANS = "/v1/plans"
    """POST :class:`SubmitRequest` → :class:`SubmitResponse`; GET → :class:`PlanList`."""
    PLAN = "/v1/plans/{plan_id}"
    """GET: :class:`PlanRecord`."""
    CHECKS = "/v1/plans/{plan_id}/checks"
    """POST :class:`ChecksRequest` → :class:`ChecksResponse`."""
    EXECUTE = "/v1/plans/{plan_id}/execute"
    """POST :class:`ExecuteRequest` → NDJSON stream of :class:`ExecEvent`."""
    CANCEL = "/v1/plans/{plan_id}/cancel"
    """POST: stop the running plan and roll it back → :class:`PlanRecord`."""
    ROLLBACK = "/v1/plans/{plan_id}/rollback"
    """POST :class:`RollbackRequest` → :class:`RollbackResponse`."""
    AUDIT_VERIFY = "/v1/audit/verify"
    """GET: :class:`AuditReport`."""
    PREVIEW = "/v1/plans/{plan_id}/preview"
    """GET: :class:`~anna_common.protocol.preview.PlanPreview`, the effect of each step as
    computed at submit (computed now when the plan has none)."""
    GC = "/v1/gc"
    """POST :class:`GcRequest` → :class:`GcResponse`: remove backups (retention)."""
    DRY_RUN = "/v1/plans/{plan_id}/dry-run"
    """POST: record a submitted plan as shown and not run → :class:`PlanRecord`."""
    POLICY = "/v1/policy"
    """GET: :class:`~anna_common.protocol.policy.PolicyView` (the caller's rules in force)."""
    POLICY_CHECK = "/v1/policy/check"
    """POST :class:`~anna_common.protocol.policy.PolicyCheckRequest` →
    :class:`~anna_common.protocol.policy.PolicyCheckResponse`."""
    RECIPE_RUN = "/v1/recipes/{name}/run"
    """POST :class:`~anna_common.protocol.queue.RecipeRunRequest` →
    :class:`~anna_common.protocol.queue.RecipeRunResponse`: run a recipe unattended (what
    is not INFO/LOW is queued)."""
    QUEUE = "/v1/queue"
    """GET: :class:`~anna_common.protocol.queue.QueueList`, the plans waiting for approval."""
    QUEUE_DISMISS = "/v1/queue/{plan_id}/dismiss"
    """POST: drop a waiting plan from the queue →
    :class:`~anna_common.protocol.queue.QueueEntry`."""
    JUDGE = "/v1/judge"
    """POST :class:`JudgeRequest` → :class:`JudgeResponse`: what this daemon decides for a
    plan (validation, the approved digest, the policy), storing and running nothing (the
    host's side of ``ansible-playbook --check``)."""
    CONFIRM = "/v1/plans/{plan_id}/confirm"
    """POST: keep a plan the lock-out guard armed; only from a connection opened after the
    plan finished → :class:`PlanRecord`."""
    AGENT_STATUS = "/v1/agent/status"
    """GET (with :data:`AGENT_HEADER`): :class:`~anna_common.protocol.agent.AgentStatus`,
    the machine at a glance for an agent (``anna_status``)."""
    AGENT_EXPLAIN = "/v1/agent/explain"
    """POST :class:`~anna_common.protocol.agent.AgentExplainRequest` →
    :class:`~anna_common.protocol.policy.PolicyCheckResponse` (``anna_explain``)."""
    AGENT_CHECKS = "/v1/agent/checks"
    """POST :class:`~anna_common.protocol.agent.AgentChecksRequest` →
    :class:`~anna_common.protocol.agent.AgentChecksResponse`: read-only commands run in the
    checks' confinement, anything not INFO refused (``anna_check``)."""
    AGENT_PLANS = "/v1/agent/plans"
    """POST an agent's proposal (``{plan, request}``) →
    :class:`~anna_common.protocol.agent.AgentProposal` (``anna_propose``); GET
    ``?limit=N`` → :class:`~anna_common.protocol.agent.AgentHistory` (``anna_history``)."""
    AGENT_PLAN = "/v1/agent/plans/{plan_id}"
    """GET: :class:`~anna_common.protocol.agent.AgentPlanState` of a plan an agent proposed
    (``anna_result``)."""
    AGENT_ROLLBACK = "/v1/agent/plans/{plan_id}/rollback"
    """POST: ask a person to undo a plan an agent proposed (queued, never run here) →
    :class:`~anna_common.protocol.agent.AgentPlanState` (``anna_rollback``)."""


SESSION_KEYS = ("XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "DISPLAY", "DBUS_SESSION_BUS_ADDRESS",
                "LANG", "XDG_CURRENT_DESKTOP", "XDG_SESSION_TYPE", "DESKTOP_SESSION",
                "HYPRLAND_INSTANCE_SIGNATURE", "SWAYSOCK")
"""The fields of :class:`~anna_common.protocol.models.SessionEnv`, in order (a test checks)."""
SESSION_VALUE_CHARS = 512
"""A session variable's value is cut to this many characters."""


FAILED_IN_PREVIEW = "the step failed in the preview"
"""How a step preview's ``reason`` starts when the step exited non-zero in its preview run
(a wire value: clients ask for more than a plain yes before running such a step). Here,
beside the routes, so the light client path reads it without the pydantic models."""
