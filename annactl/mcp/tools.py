"""The tools ``annactl mcp`` offers: their arguments (strict, bounded), descriptions and work.

Each tool is a :class:`ToolSpec`: a pydantic model of its arguments (``extra="forbid"``,
every string and list bounded; the JSON Schema the agent sees is generated from it), what it
does in a sentence an agent's model reads, whether it only reads, and a function that does
the work with an :class:`~annactl.mcp.daemon.AgentClient` and returns JSON-ready data. The
daemon decides everything that matters (risk, bans, policy, limits); nothing here trusts
the agent's words, labels or risk levels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from anna_common.protocol.agent import MAX_CHECKS, MAX_COMMAND, MAX_HISTORY, MAX_REQUEST

if TYPE_CHECKING:
    from annactl.mcp.daemon import AgentClient

PLAN_ID = r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$"
"""A plan id as the daemon makes them (``anna_propose`` returns it)."""
MAX_PLAN_JSON = 512 * 1024
"""Largest plan (as JSON) an agent may propose (the daemon takes bodies of 1 MiB)."""
_ARGS = ConfigDict(extra="forbid", strict=True)  # no coercion: "5" is not a number


class NoArgs(BaseModel):
    """No arguments."""

    model_config = _ARGS


class ExplainArgs(BaseModel):
    """``anna_explain``."""

    model_config = _ARGS

    command: str = Field(min_length=1, max_length=MAX_COMMAND,
                         description="One shell command (bash) to explain. Nothing runs.")


class CheckArgs(BaseModel):
    """``anna_check``."""

    model_config = _ARGS

    commands: list[Annotated[str, Field(min_length=1, max_length=MAX_COMMAND)]] = Field(
        min_length=1, max_length=MAX_CHECKS,
        description="Read-only shell commands to run (each must be INFO by Anna's own "
                    "analysis, else it is refused with the reason).")


class ProposeArgs(BaseModel):
    """``anna_propose``."""

    model_config = _ARGS

    plan: dict[str, Any] | None = Field(
        default=None, description="An ActionPlan (Anna's plan contract): goals, "
        "necessary_checks, command_plan with rollback_id, rollback_plan. Anna validates and "
        "rates it itself; your risk labels can only raise Anna's.")
    request: str = Field(
        default="", max_length=MAX_REQUEST,
        description="What the plan is for, in plain words. Without a plan, Anna's own "
                    "planner makes one from it.")


class PlanArgs(BaseModel):
    """``anna_result``, ``anna_rollback``."""

    model_config = _ARGS

    plan_id: str = Field(pattern=PLAN_ID, description="The id anna_propose returned.")


class HistoryArgs(BaseModel):
    """``anna_history``."""

    model_config = _ARGS

    limit: int = Field(default=20, ge=1, le=MAX_HISTORY, strict=True,
                       description="How many plans, newest first.")


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, words, arguments and work."""

    name: str
    title: str
    description: str
    args: type[BaseModel]
    run: Callable[[AgentClient, Any], Any]
    """The work: (client, validated arguments) → JSON-ready data."""
    read_only: bool = True
    """Whether the tool only reads (the MCP ``readOnlyHint``)."""
    output: Callable[[], dict[str, Any]] | None = None
    """The output's JSON Schema (None: not declared)."""


def _schema_of(model_path: str) -> Callable[[], dict[str, Any]]:
    def schema() -> dict[str, Any]:
        module, _, name = model_path.rpartition(".")
        import importlib

        model = getattr(importlib.import_module(module), name)
        result: dict[str, Any] = model.model_json_schema(mode="serialization")
        return result

    return schema


def _status(client: AgentClient, _args: NoArgs) -> dict[str, Any]:
    from anna_common.redact import redact_value
    from annactl.planning.telemetry_trim import trim

    status = client.status()
    health = status.health
    machine = redact_value(trim(status.telemetry.telemetry, "status processes services disk"))
    return {"daemon": {"mode": str(health.mode), "version": health.daemon_version,
                       "may_change_things": health.caller_authorised,
                       "running_plan": health.running_plan,
                       "problems": [p for p in (health.state_problem, health.capture_problem,
                                                health.network_problem) if p]},
            "machine": machine, "age_s": status.telemetry.age_s}


def _explain(client: AgentClient, args: ExplainArgs) -> dict[str, Any]:
    from annactl.commands.explain import explanation

    daemon = client.explain(args.command)
    analysis = explanation(args.command)
    for key in ("risk", "banned", "scope", "reasons"):  # the daemon's verdict stands alone
        analysis.pop(key, None)
    return {"command": args.command, "risk": str(daemon.tier), "banned": daemon.banned,
            "scope": str(daemon.scope), "confirmations": daemon.confirmations,
            "reasons": daemon.reasons,
            "policy": daemon.decision.model_dump(mode="json", exclude={"rule": {"source"}}),
            "analysis": analysis,
            "can_agent_run_it": "no: propose it; a person approves anything above INFO"
            if not daemon.banned else "no: it is banned and no approval can run it"}


def _check(client: AgentClient, args: CheckArgs) -> dict[str, Any]:
    return client.checks(list(args.commands)).model_dump(mode="json")


def _propose(client: AgentClient, args: ProposeArgs) -> dict[str, Any]:
    import json

    from anna_common.errors import AnnaError, ErrorCode

    plan = args.plan
    if plan is None:
        if not args.request.strip():
            raise AnnaError("give a plan, or a request for Anna's planner",
                            code=ErrorCode.BAD_REQUEST)
        from annactl.mcp.planning import plan_for

        plan = plan_for(client, args.request)
    elif len(json.dumps(plan)) > MAX_PLAN_JSON:
        raise AnnaError(f"the plan is larger than {MAX_PLAN_JSON} bytes as JSON",
                        code=ErrorCode.BAD_REQUEST)
    return client.propose(plan, args.request).model_dump(mode="json")


def _result(client: AgentClient, args: PlanArgs) -> dict[str, Any]:
    return client.plan_state(args.plan_id).model_dump(mode="json")


def _history(client: AgentClient, args: HistoryArgs) -> dict[str, Any]:
    return client.agent_history(args.limit).model_dump(mode="json")


def _rollback(client: AgentClient, args: PlanArgs) -> dict[str, Any]:
    return client.request_rollback(args.plan_id).model_dump(mode="json")


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("anna_status", "The machine at a glance",
             "Anna's view of this machine: system, memory, disks, failed units, load, the "
             "daemon (whether it may change things, a plan running). No model, nothing runs.",
             NoArgs, _status),
    ToolSpec("anna_explain", "What a command does and its risk",
             "What one shell command does by Anna's own parse: programs, reads, writes, its "
             "risk tier (INFO, LOW, MEDIUM, HIGH), scope, whether it is banned (never "
             "approvable), and what the administrator's policy says. Nothing runs.",
             ExplainArgs, _explain),
    ToolSpec("anna_check", "Run read-only commands",
             "Run up to 8 read-only commands in Anna's confinement (the machine's real view; "
             "nothing can be changed) and return their output, secrets withheld. A command "
             "Anna does not rate INFO is refused with its reason: propose it instead.",
             CheckArgs, _check, output=_schema_of(
                 "anna_common.protocol.agent.AgentChecksResponse")),
    ToolSpec("anna_propose", "Propose a plan for a person to approve",
             "Submit a plan (an ActionPlan) or a request for Anna's planner. Anna validates "
             "it, rates every command herself, previews its effect (diffs, packages, units) "
             "and stores it. Nothing that changes the machine runs on your call: the plan "
             "waits for a person (annactl apply ID, the approval queue, the TUI), who sees "
             "your name. Only a plan Anna rates INFO (read-only) runs at once. Returns the "
             "plan id, risk, preview and how a person approves it; follow it with "
             "anna_result.", ProposeArgs, _propose, read_only=False,
             output=_schema_of("anna_common.protocol.agent.AgentProposal")),
    ToolSpec("anna_result", "A proposed plan's state",
             "Whether a person approved, dismissed or has not yet decided on a plan you "
             "proposed; its steps' output, what it changed, its undo.",
             PlanArgs, _result,
             output=_schema_of("anna_common.protocol.agent.AgentPlanState")),
    ToolSpec("anna_history", "Plans agents proposed",
             "This user's plans that agents proposed through Anna, newest first, with their "
             "state and which agent proposed each.", HistoryArgs, _history,
             output=_schema_of("anna_common.protocol.agent.AgentHistory")),
    ToolSpec("anna_rollback", "Ask a person to undo a plan",
             "Ask for the undo of a plan an agent proposed that ran. The undo waits for a "
             "person's approval (annactl queue approve ID) like any change; then Anna "
             "restores what the plan changed and checks it. Follow it with anna_result.",
             PlanArgs, _rollback, read_only=False,
             output=_schema_of("anna_common.protocol.agent.AgentPlanState")),
)
"""Every tool, in the order listed to the agent."""
BY_NAME = {tool.name: tool for tool in TOOLS}
"""The tools by name."""
