"""Routes of the agents ``annactl mcp`` serves (``/v1/agent/...``): thin, as every route.

Each handler names the agent from the request header and calls one method of the
:class:`~annad.recipes.agents.AgentService` (made on first use, as the recipes' service is),
which admits, serves and journals the call.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from anna_common.protocol.agent import (
    MAX_HISTORY,
    AgentChecksRequest,
    AgentChecksResponse,
    AgentExplainRequest,
    AgentHistory,
    AgentInfo,
    AgentPlanState,
    AgentProposal,
    AgentProposeRequest,
    AgentStatus,
)
from anna_common.protocol.policy import PolicyCheckResponse
from anna_common.protocol.routes import AGENT_HEADER, Route
from annad.api.recipes import get_recipes
from annad.api.routing import Call, Endpoint

if TYPE_CHECKING:
    from annad.recipes.agent_plans import AgentProposals
    from annad.recipes.agents import AgentService

_making = threading.Lock()


class AgentHistoryQuery(BaseModel):
    """``GET /v1/agent/plans?limit=N``."""

    limit: int = Field(20, ge=1, le=MAX_HISTORY)
    """How many plans, newest first."""


def _services(call: Call) -> tuple[AgentService, AgentProposals]:
    """The app's one AgentService and its proposals, made on the first agent request."""
    state = call.request.app.state
    recipes = get_recipes(call)
    with _making:
        made: tuple[AgentService, AgentProposals] | None = getattr(state, "agents", None)
        if made is None:
            from annad.recipes.agent_plans import AgentProposals
            from annad.recipes.agents import AgentService

            service = AgentService(recipes)
            made = (service, AgentProposals(service))
            state.agents = made
    return made


def _agent(call: Call) -> AgentInfo:
    from annad.recipes.agents import parse_header

    return parse_header(call.request.headers.get(AGENT_HEADER))


def status(call: Call) -> AgentStatus:
    """The daemon's health and the machine's telemetry."""
    return _services(call)[0].status(call.peer, _agent(call))


def explain(call: Call) -> PolicyCheckResponse:
    """The daemon's tier, ban and policy decision for one command; nothing runs."""
    return _services(call)[0].explain(call.peer, _agent(call),
                                      call.required_body(AgentExplainRequest).command)


def checks(call: Call) -> AgentChecksResponse:
    """Run the read-only commands (INFO by the daemon's analysis) confined."""
    return _services(call)[0].checks(call.peer, _agent(call),
                                     call.required_body(AgentChecksRequest))


def propose(call: Call) -> AgentProposal:
    """Store the agent's plan; it waits for a person (an INFO plan may run at once)."""
    return _services(call)[1].propose(call.peer, _agent(call), call.body)


def history(call: Call) -> AgentHistory:
    """The caller's plans that agents proposed."""
    return _services(call)[0].history(call.peer, _agent(call),
                                      call.query_as(AgentHistoryQuery).limit)


def plan_state(call: Call) -> AgentPlanState:
    """A proposal as it is now: waiting, dismissed, ran, its outcome and undo."""
    return _services(call)[1].state(call.peer, _agent(call), call.param("plan_id"))


def rollback(call: Call) -> AgentPlanState:
    """Queue the undo of an agent's plan for a person (never run here)."""
    return _services(call)[1].request_rollback(call.peer, _agent(call), call.param("plan_id"))


_HEADERS = (AGENT_HEADER,)
ENDPOINTS = (
    Endpoint("GET", Route.AGENT_STATUS, status, headers=_HEADERS, agent=True),
    Endpoint("POST", Route.AGENT_EXPLAIN, explain, body=AgentExplainRequest, body_required=True,
             headers=_HEADERS, agent=True),
    Endpoint("POST", Route.AGENT_CHECKS, checks, body=AgentChecksRequest, body_required=True,
             headers=_HEADERS, agent=True),
    Endpoint("POST", Route.AGENT_PLANS, propose, body="json", body_required=True,
             documented=AgentProposeRequest, headers=_HEADERS, agent=True),
    Endpoint("GET", Route.AGENT_PLANS, history, query=AgentHistoryQuery, headers=_HEADERS,
             agent=True),
    Endpoint("GET", Route.AGENT_PLAN, plan_state, headers=_HEADERS, agent=True),
    Endpoint("POST", Route.AGENT_ROLLBACK, rollback, headers=_HEADERS, agent=True),
)
"""This module's routes."""
