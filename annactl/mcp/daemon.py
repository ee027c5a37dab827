"""The MCP server's connection to annad: the daemon's agent routes, with the agent named.

:class:`AgentClient` is a :class:`~annactl.core.daemon_client.DaemonClient` on the socket
:func:`~annactl.core.daemon_client.connect` chose, whose calls all carry the
``X-Anna-Agent`` header. It has only the agent routes: the daemon refuses any other route
to a request naming an agent, so even a bug here cannot execute, roll back or dismiss.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from anna_common.protocol.routes import AGENT_HEADER, Route
from annactl.core.daemon_admin import LONG_TIMEOUT
from annactl.core.daemon_client import SUBMIT_TIMEOUT, DaemonClient
from annactl.core.daemon_http import plan_path

if TYPE_CHECKING:
    from anna_common.protocol.agent import (
        AgentChecksResponse,
        AgentHistory,
        AgentInfo,
        AgentPlanState,
        AgentProposal,
        AgentStatus,
    )
    from anna_common.protocol.policy import PolicyCheckResponse


class AgentClient(DaemonClient):
    """The agent routes of one daemon, for one agent."""

    def __init__(self, socket_path: Path, agent: AgentInfo) -> None:
        super().__init__(Path(socket_path))
        self.agent = agent

    def _agent_call(self, method: str, path: str, body: Any = None, *,
                    timeout: float | None = None) -> Any:
        headers = {AGENT_HEADER: self.agent.header()}
        if timeout is None:
            return self._call(method, path, body, headers=headers)
        return self._call(method, path, body, headers=headers, timeout=timeout)

    def status(self) -> AgentStatus:
        """``GET /v1/agent/status``."""
        from anna_common.protocol.agent import AgentStatus

        return AgentStatus.model_validate(self._agent_call("GET", Route.AGENT_STATUS))

    def explain(self, command: str) -> PolicyCheckResponse:
        """``POST /v1/agent/explain``."""
        from anna_common.protocol.policy import PolicyCheckResponse

        return PolicyCheckResponse.model_validate(
            self._agent_call("POST", Route.AGENT_EXPLAIN, {"command": command}))

    def checks(self, commands: list[str]) -> AgentChecksResponse:
        """``POST /v1/agent/checks`` (with this process's session environment)."""
        from anna_common.protocol.agent import AgentChecksResponse
        from annactl.core.daemon_http import session_body

        body = {"commands": commands, "session": session_body(self.session())}
        return AgentChecksResponse.model_validate(
            self._agent_call("POST", Route.AGENT_CHECKS, body, timeout=LONG_TIMEOUT))

    def propose(self, plan: dict[str, Any], request: str) -> AgentProposal:
        """``POST /v1/agent/plans``: stored; queued for a person unless INFO."""
        from anna_common.protocol.agent import AgentProposal
        from annactl.core.daemon_http import session_body

        body = {"plan": plan, "request": request, "session": session_body(self.session())}
        # an INFO plan runs at once, inside this call: as long as a check may take
        timeout = max(SUBMIT_TIMEOUT, LONG_TIMEOUT)
        return AgentProposal.model_validate(
            self._agent_call("POST", Route.AGENT_PLANS, body, timeout=timeout))

    def plan_state(self, plan_id: str) -> AgentPlanState:
        """``GET /v1/agent/plans/{id}``."""
        from anna_common.protocol.agent import AgentPlanState

        return AgentPlanState.model_validate(
            self._agent_call("GET", plan_path(Route.AGENT_PLAN, plan_id)))

    def agent_history(self, limit: int) -> AgentHistory:
        """``GET /v1/agent/plans?limit=N``."""
        from anna_common.protocol.agent import AgentHistory

        return AgentHistory.model_validate(
            self._agent_call("GET", f"{Route.AGENT_PLANS}?limit={int(limit)}"))

    def request_rollback(self, plan_id: str) -> AgentPlanState:
        """``POST /v1/agent/plans/{id}/rollback``: queued for a person."""
        from anna_common.protocol.agent import AgentPlanState

        return AgentPlanState.model_validate(
            self._agent_call("POST", plan_path(Route.AGENT_ROLLBACK, plan_id)))
