"""Agents (``annactl mcp``): every call admitted by the policy and the limits, journalled
with the agent's name, and served by the one :class:`~annad.service.PlanService`.

An agent is one more untrusted planner that runs as the user who started ``annactl mcp``:
the kernel says who the caller is, the header only says which agent it is (its MCP
client's name). Before anything else each call asks the policy's ``[agents]`` rules
(:class:`~anna_common.policy.agents.AgentRules`: an administrator may turn agents off,
deny tools or names, or let them look and never propose) and the agent's limits
(:mod:`annad.recipes.agent_limits`); refusals are journalled too. The reads (status,
explain, result, history) and read-only checks are served here; what would change the
machine is proposed (:mod:`annad.recipes.agent_plans`) and waits for a person.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import RiskLevel
from anna_common.policy.agents import PROPOSING, AgentRules
from anna_common.protocol.agent import (
    MAX_AGENT_HEADER,
    AgentChecksRequest,
    AgentChecksResponse,
    AgentHistory,
    AgentHistoryEntry,
    AgentInfo,
    AgentStatus,
)
from anna_common.protocol.models import CheckResult
from anna_common.protocol.policy import PolicyCheckRequest, PolicyCheckResponse
from anna_common.redact import redact
from anna_common.risk.assess import assess
from anna_common.validate import validate
from annad.execution.checks import run_checks
from annad.journal.records import home_of, plan_summary
from annad.policy_load import asked_checks, judge
from annad.recipes.agent_limits import Limits

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from annad.peer import Peer
    from annad.recipes.run import RecipeService

    T = TypeVar("T")

log = logging.getLogger(__name__)
PROPOSED = "agent_proposed"
"""The journal event that records which agent proposed a plan (its body: ``agent``)."""
ANY_AGENT = "*"
"""The limit key shared by every name one user's agents give."""
ANY_AGENT_FACTOR = 4
"""One user's agents together may make this many times one agent's calls and proposals."""
REFUSALS_JOURNALLED = 10
"""Calls refused by the limits that are journalled per user and minute (the rest are not)."""


def parse_header(value: str | None) -> AgentInfo:
    """The agent named by the request header (BAD_REQUEST when it is missing or bad)."""
    if not value or len(value) > MAX_AGENT_HEADER:
        raise AnnaError("an agent route needs the X-Anna-Agent header (annactl mcp sends it)",
                        code=ErrorCode.BAD_REQUEST)
    try:
        data = json.loads(value)
    except ValueError:
        data = None
    if not isinstance(data, dict) or set(data) - {"name", "version"}:
        raise AnnaError("X-Anna-Agent must be {name, version} as JSON",
                        code=ErrorCode.BAD_REQUEST)
    return AgentInfo.of(data.get("name"), data.get("version", ""))


class AgentService:
    """The agent routes, on top of the daemon's recipes (queue, notifications) and plans."""

    def __init__(self, recipes: RecipeService) -> None:
        self.recipes = recipes
        self.plans = recipes.plans
        self.queue = recipes.queue
        self.journal = recipes.plans.journal
        self.limits = Limits()

    # ------------------------------------------------------------------ admission

    def rules(self, uid: int) -> AgentRules:
        """The ``[agents]`` rules in force for ``uid`` (the administrator's, the user's)."""
        home = home_of(uid, self.plans.settings.home_override)
        return self.plans.policy.for_owner(uid, home).agents or AgentRules()

    def call(self, peer: Peer | None, agent: AgentInfo, tool: str, serve: Callable[[Peer], T],
             *, plan_id: str | None = None, read_only: bool = False) -> T:
        """Admit the call, serve it, journal it (``agent_call``: agent, tool, outcome).

        ``read_only``: the reads any local user may make of the daemon (status, explain);
        everything else needs a caller who may change things (root, group anna, or the
        owner of a per-user daemon), as for any client."""
        peer = self.plans.access.served(peer) if read_only else self.plans.authorise(peer)
        outcome = "ok"
        try:
            self._admit(peer, agent, tool)
            return serve(peer)
        except AnnaError as exc:
            outcome = str(exc.code)
            raise
        except Exception:
            outcome = str(ErrorCode.INTERNAL_ERROR)
            raise
        finally:
            if self._journalled(peer, outcome):
                # the plan named by the call goes in the body: it may not exist
                self.journal.event("agent_call", None, agent=agent.name,
                                   version=agent.version, tool=tool, uid=peer.uid,
                                   outcome=outcome,
                                   **({"plan": plan_id[:64]} if plan_id else {}))

    def _journalled(self, peer: Peer, outcome: str) -> bool:
        """Whether to journal this call: always, except a flood of calls the limits refused
        (the first few in a minute are kept, so the journal shows the flood, not each of its
        calls: a refused call costs the daemon no journal row beyond that)."""
        if outcome != ErrorCode.RATE_LIMITED:
            return True
        try:
            self.limits.take((peer.uid, ANY_AGENT, "refusals"), REFUSALS_JOURNALLED, 60.0,
                             "refusals")
        except AnnaError:
            return False
        return True

    def _admit(self, peer: Peer, agent: AgentInfo, tool: str) -> None:
        rules = self.rules(peer.uid)
        refusal = rules.refusal(tool, agent.name)
        if refusal is not None:
            raise AnnaError(refusal, code=ErrorCode.POLICY_DENIED,
                            detail={"tool": tool, "agent": agent.name},
                            hint="an administrator sets this in the policy's [agents] table")
        for who, factor in ((agent.name, 1), (ANY_AGENT, ANY_AGENT_FACTOR)):
            self.limits.take((peer.uid, who, "calls"), rules.calls_per_minute * factor, 60.0,
                             "calls")
        if tool in PROPOSING:
            for who, factor in ((agent.name, 1), (ANY_AGENT, ANY_AGENT_FACTOR)):
                self.limits.take((peer.uid, who, "proposals"),
                                 rules.proposals_per_hour * factor, 3600.0, "proposals")
            waiting = [e for e in self.recipes.waiting(peer).entries if e.agent == agent.name]
            if len(waiting) >= rules.max_waiting:
                raise AnnaError(f"{len(waiting)} plans of this agent already wait for a person "
                                f"(at most {rules.max_waiting})", code=ErrorCode.RATE_LIMITED,
                                detail={"limit": "waiting", "max": rules.max_waiting},
                                hint="wait until the person has approved or dismissed them")

    def proposer(self, plan_id: str) -> str:
        """The agent that proposed ``plan_id``; PLAN_NOT_FOUND for a plan no agent
        proposed (an agent sees and undoes only what agents proposed)."""
        body = self.journal.last_body(plan_id, PROPOSED)
        if body is None or not isinstance(body.get("agent"), str):
            raise AnnaError(f"no plan {plan_id!r} proposed by an agent",
                            code=ErrorCode.PLAN_NOT_FOUND,
                            hint="anna_history lists the plans agents proposed")
        return str(body["agent"])

    # ------------------------------------------------------------------ reads

    def status(self, peer: Peer | None, agent: AgentInfo) -> AgentStatus:
        """``GET /v1/agent/status``."""
        return self.call(peer, agent, "anna_status", lambda p: AgentStatus(
            health=self.plans.health(p), telemetry=self.plans.telemetry(p, None, fresh=False)),
            read_only=True)

    def explain(self, peer: Peer | None, agent: AgentInfo, command: str
                ) -> PolicyCheckResponse:
        """``POST /v1/agent/explain``: the daemon's tier, ban and policy for one command."""
        return self.call(peer, agent, "anna_explain", lambda p: self.plans.policy_check(
            p, PolicyCheckRequest(command=command)), read_only=True)

    def history(self, peer: Peer | None, agent: AgentInfo, limit: int) -> AgentHistory:
        """``GET /v1/agent/plans``: the caller's plans agents proposed, newest first."""

        def serve(caller: Peer) -> AgentHistory:
            found: list[AgentHistoryEntry] = []
            seen: set[str] = set()
            for plan_id, _kind, _step, body in reversed(self.journal.events_of(None, PROPOSED)):
                if len(found) >= limit or plan_id in seen:
                    continue
                seen.add(plan_id)
                row = self.journal.get_plan(plan_id)
                if row is None or caller.uid not in (0, row.caller_uid):
                    continue
                found.append(AgentHistoryEntry(summary=plan_summary(row),
                                               agent=str(body.get("agent", ""))))
            return AgentHistory(plans=found)

        return self.call(peer, agent, "anna_history", serve)

    # ------------------------------------------------------------------ checks

    def checks(self, peer: Peer | None, agent: AgentInfo, request: AgentChecksRequest
               ) -> AgentChecksResponse:
        """``POST /v1/agent/checks``: what the daemon rates INFO runs confined, as a plan's
        necessary checks do; the rest is refused with its reason. Output is redacted."""
        return self.call(peer, agent, "anna_check", lambda p: self._checks(p, agent, request))

    def _checks(self, peer: Peer, agent: AgentInfo, request: AgentChecksRequest
                ) -> AgentChecksResponse:
        home = home_of(peer.uid, self.plans.settings.home_override)
        ctx = self.plans.context(home)
        verdicts = [assess(command, ctx) for command in request.commands]
        runnable = [(f"c{i + 1}", c) for i, (c, v) in enumerate(zip(request.commands, verdicts,
                                                                     strict=True))
                    if v.risk == RiskLevel.INFO and v.read_only and not v.banned]
        ran: dict[str, CheckResult] = {}
        if runnable:
            result = validate(_checks_plan(runnable), ctx)
            if result.plan is None or not result.ok:
                raise AnnaError("the checks do not form a valid plan",
                                code=ErrorCode.PLAN_INVALID,
                                detail={"findings": [f.model_dump(mode="json")
                                                     for f in result.errors]})
            annotated = judge(self.plans.policy, self.journal, result.plan,
                              owner=(peer.uid, home), ctx=ctx, plan_id=None,
                              phase="agent_checks")
            unasked, merge = asked_checks(annotated)
            results = merge(run_checks(unasked, ctx, owner=peer.uid, home=home,
                                       session=request.session, settings=self.plans.settings,
                                       user_mode=self.plans.user_mode))
            ran = {r.id: r for r in results}
        out = []
        for i, (command, verdict) in enumerate(zip(request.commands, verdicts, strict=True)):
            found = ran.get(f"c{i + 1}")
            if found is None:
                why = verdict.reasons[0] if verdict.reasons else "not proven read-only"
                banned = "hard-banned; " if verdict.banned else ""
                found = CheckResult(id=f"c{i + 1}", command=command, ran=False,
                                    reason=f"{banned}not read-only by Anna's own assessment "
                                    f"({verdict.risk}): {why}")
            out.append(found.model_copy(update={"output": redact(found.output)}))
        self.journal.event("agent_checks", None, agent=agent.name,
                           commands=[c[:200] for c in request.commands],
                           ran=sum(r.ran for r in out), refused=sum(not r.ran for r in out))
        return AgentChecksResponse(results=out)


def _checks_plan(checks: list[tuple[str, str]]) -> dict[str, object]:
    """A plan holding only ``checks`` (id, command): how the daemon validates, judges and
    runs necessary checks, so an agent's get exactly the same treatment."""
    return {
        "analysis": "read-only checks an agent asked for",
        "goals": ["read-only checks for an agent"],
        "necessary_checks": [{"id": cid, "description": "an agent's check", "command": command,
                              "risk_level": "INFO", "required": False}
                             for cid, command in checks],
        "command_plan": [], "rollback_plan": [], "notes_for_user": "",
        "meta": {"detection_results": {}, "template_used": None,
                 "llm_version": "anna_runtime_v3"},
    }
