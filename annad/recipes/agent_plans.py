"""An agent's proposals: stored like any plan, then waiting for a person.

``anna_propose`` goes through :meth:`PlanService.submit` (validated, classified, judged by
the policy and previewed with the daemon's own context, like a model's plan; a banned or
denied plan is refused with its code). Then nothing of it runs on the agent's word: the plan
waits in the approval queue with the agent's name (``annactl queue``, the TUI's queue, a
desktop notification) until a person approves it (``annactl apply ID``) or dismisses it. The
one exception is a plan the daemon itself rates INFO that needs no confirmation at all: it
runs at once, as a person's INFO plan would. ``anna_rollback`` never rolls back either: it
queues the request, and the person's approval (``annactl queue approve ID`` or ``annactl
rollback ID``) runs the undo with the confirmation its tier needs.

A disconnected agent leaves nothing half done: each request is one step the daemon finishes
on its own (a submit, a queue entry, an INFO run), whether or not anyone reads the answer.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import RiskLevel
from anna_common.protocol.agent import MAX_REQUEST, AgentPlanState, AgentProposal
from anna_common.protocol.models import ExecuteRequest, PlanStatus, SessionEnv
from anna_common.protocol.queue import QueueEntry
from anna_common.risk import tiers
from annad.recipes import notify
from annad.recipes.agents import PROPOSED
from annad.recipes.run import ROLLBACKABLE

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan
    from anna_common.protocol.agent import AgentInfo
    from anna_common.protocol.models import PlanRecord
    from annad.peer import Peer
    from annad.recipes.agents import AgentService

_KEYS = frozenset({"plan", "request", "session"})


def runs_at_once(annotated: AnnotatedPlan) -> bool:
    """An agent's plan runs without a person only when the daemon rates every step and
    rollback command INFO and nothing (no policy ``ask``, no step's own flag) asks for a
    confirmation. A policy ``allow`` that waives a LOW plan's question is a person's
    convenience, not an agent's: such a plan waits."""
    items = [*annotated.steps, *annotated.rollback]
    return bool(annotated.steps) and not annotated.banned \
        and tiers.plan_risk(annotated) == RiskLevel.INFO \
        and all(s.final_risk == RiskLevel.INFO for s in items) \
        and tiers.confirmations_needed(annotated) == 0


def approve_how(plan_id: str, needed: int, *, rollback: bool = False) -> list[str]:
    """What a person types to approve (shown to the agent, which passes it on)."""
    if rollback:
        return [f"annactl queue approve {plan_id}", f"annactl rollback {plan_id}",
                "annactl tui (the approval queue)"]
    high = " (HIGH: it also asks for a typed word)" if needed >= 2 else ""
    return [f"annactl apply {plan_id}{high}", f"annactl queue approve {plan_id}",
            "annactl tui (the approval queue)"]


class AgentProposals:
    """``anna_propose``, ``anna_result`` and ``anna_rollback`` for one daemon."""

    def __init__(self, agents: AgentService) -> None:
        self.agents = agents
        self.plans = agents.plans
        self.journal = agents.journal

    def propose(self, peer: Peer | None, agent: AgentInfo, body: Any) -> AgentProposal:
        """``POST /v1/agent/plans``: store; run at once only if INFO; else queue."""
        if not isinstance(body, dict) or "plan" not in body or set(body) - _KEYS:
            raise AnnaError("expected {plan[, request][, session]}", code=ErrorCode.BAD_REQUEST)
        request = body.get("request", "")
        if not isinstance(request, str) or len(request) > MAX_REQUEST:
            raise AnnaError(f"request must be text of at most {MAX_REQUEST} characters",
                            code=ErrorCode.BAD_REQUEST)
        try:
            session = SessionEnv.model_validate(body.get("session") or {})
        except ValueError:
            raise AnnaError("session must be SessionEnv", code=ErrorCode.BAD_REQUEST) from None
        return self.agents.call(peer, agent, "anna_propose",
                                lambda p: self._propose(p, agent, body["plan"], request, session))

    def _propose(self, peer: Peer, agent: AgentInfo, plan: Any, request: str,
                 session: SessionEnv) -> AgentProposal:
        submitted = self.plans.submit(peer, {"plan": plan, "request": request, "source": "mcp"})
        annotated, plan_id = submitted.annotated, submitted.plan_id
        risk = tiers.plan_risk(annotated)
        needed = tiers.confirmations_needed(annotated)
        outcome = "answered" if not annotated.steps else \
            "ran" if runs_at_once(annotated) else "queued"
        self.journal.event(PROPOSED, plan_id, agent=agent.name, version=agent.version,
                           risk=str(risk), outcome=outcome)
        record = None
        approve: list[str] = []
        if outcome == "ran":
            execute = ExecuteRequest(digest=submitted.digest, confirmed=False, session=session)
            for _line in self.plans.execute(peer, plan_id, execute):
                pass  # the run journals its own events; the record below has the output
            record = self.plans.get(peer, plan_id)
        elif outcome == "queued":
            self._queue(agent, annotated, plan_id, risk, needed, kind="plan")
            approve = approve_how(plan_id, needed)
        return AgentProposal(plan_id=plan_id, digest=submitted.digest,
                             status=record.status if record else submitted.status, risk=risk,
                             outcome=outcome, confirmations=needed, approve=approve,
                             annotated=annotated, warnings=submitted.warnings,
                             preview=submitted.preview, record=record)

    def _queue(self, agent: AgentInfo, annotated: AnnotatedPlan, plan_id: str,
               risk: RiskLevel, needed: int, *, kind: str) -> None:
        """The queue entry (agent named) and the desktop's notification. The notification
        names only the agent (made printable by ``agent_name``) and the tier."""
        goal = annotated.plan.goals[0] if annotated.plan.goals else "a plan"
        what = "undo of a plan" if kind == "rollback" else "plan"
        reasons = [f"agent {agent.name} asks for this {what}",
                   f"{risk}: needs {max(needed, 1)} confirmation"
                   + ("s" if needed >= 2 else "") + " from a person"]
        entry = QueueEntry(plan_id=plan_id, recipe="", agent=agent.name,
                           goal=f"undo: {goal}" if kind == "rollback" else goal, risk=risk,
                           reasons=reasons, queued_at=time.time(),
                           kind="rollback" if kind == "rollback" else "plan")
        self.agents.queue.put(entry)
        notify.notify(self.plans.settings, user_mode=self.plans.user_mode,
                      summary="Anna: an agent's request waits for you",
                      body=f"Agent {agent.name} asks for a {risk} {what}: annactl queue")

    # ------------------------------------------------------------------ result and undo

    def state(self, peer: Peer | None, agent: AgentInfo, plan_id: str) -> AgentPlanState:
        """``GET /v1/agent/plans/{id}``."""
        return self.agents.call(peer, agent, "anna_result",
                                lambda p: self._state(self.plans.get(p, plan_id)),
                                plan_id=plan_id)

    def _state(self, record: PlanRecord) -> AgentPlanState:
        who = self.agents.proposer(record.plan_id)
        entry = self.agents.queue.get(record.plan_id)
        status, pid = record.status, record.plan_id
        if entry is not None and entry.kind == "rollback" and status in ROLLBACKABLE:
            if entry.state == "dismissed":
                return AgentPlanState(record=record, agent=who, queue=entry,
                                      state="rollback_dismissed",
                                      next="The person dismissed the undo; the plan stays.")
            return AgentPlanState(record=record, agent=who, queue=entry, state="rollback_waiting",
                                  next=f"The undo waits for a person: annactl queue approve "
                                       f"{pid}. Nothing was undone yet.")
        if status in (PlanStatus.SUBMITTED, PlanStatus.DRY_RUN):
            if entry is not None and entry.state == "dismissed":
                return AgentPlanState(record=record, agent=who, queue=entry, state="dismissed",
                                      next="The person dismissed it; it will not run.")
            return AgentPlanState(record=record, agent=who, queue=entry, state="waiting",
                                  next=f"It waits for a person: annactl apply {pid}. "
                                       "Nothing has run.")
        if status is PlanStatus.ANSWERED:
            return AgentPlanState(record=record, agent=who, queue=entry, state="answered",
                                  next="No steps: nothing to run.")
        if status in (PlanStatus.RUNNING, PlanStatus.ROLLING_BACK):
            return AgentPlanState(record=record, agent=who, queue=entry, state="running",
                                  next=f"It is {status}; ask again for the outcome.")
        after = "anna_rollback asks a person to undo it." if status in ROLLBACKABLE else \
            "Nothing more to do." if status is not PlanStatus.REFUSED else \
            "It never ran (another plan was running); propose it again."
        return AgentPlanState(record=record, agent=who, queue=entry, state="done",
                              next=f"It is {status}. {after}")

    def request_rollback(self, peer: Peer | None, agent: AgentInfo, plan_id: str
                         ) -> AgentPlanState:
        """``POST /v1/agent/plans/{id}/rollback``: queue the undo for a person."""

        def serve(caller: Peer) -> AgentPlanState:
            record = self.plans.get(caller, plan_id)
            self.agents.proposer(record.plan_id)
            if record.status not in ROLLBACKABLE:
                raise AnnaError(f"plan {record.plan_id} is {record.status}: there is nothing "
                                "to undo", code=ErrorCode.PLAN_STATE,
                                detail={"status": str(record.status)})
            annotated = record.annotated
            risk = RiskLevel.max_of(RiskLevel.LOW, *(s.final_risk for s in annotated.rollback))
            needed = 2 if tiers.rollback_word(annotated) else 1
            self._queue(agent, annotated, record.plan_id, risk, needed, kind="rollback")
            self.journal.event("agent_rollback_requested", record.plan_id, agent=agent.name,
                               risk=str(risk))
            return self._state(self.plans.get(caller, record.plan_id))

        return self.agents.call(peer, agent, "anna_rollback", serve, plan_id=plan_id)
