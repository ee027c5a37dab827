"""The daemon's housekeeping calls: backups (gc), the policy, the journal's audit, recipes and
the approval queue — the part of :class:`~annactl.core.daemon_client.DaemonClient` that plans
and their runs do not use, in a module of its own (each method maps to one API route)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from anna_common.protocol.routes import Route
from annactl.core.daemon_http import audit_lines, plan_path

if TYPE_CHECKING:
    import http.client
    from collections.abc import Callable
    from pathlib import Path

    from anna_common.protocol.models import AuditReport, GcResponse
    from anna_common.protocol.policy import PolicyCheckResponse, PolicyView
    from anna_common.protocol.queue import QueueEntry, QueueList, RecipeRunResponse
    from annactl.core.daemon_http import UnixConnection

LONG_TIMEOUT = 3600.0
"""Seconds to wait for checks, rollbacks, a gc or a recipe run (package removals can be
slow)."""


class AdminCalls:
    """Housekeeping routes over :meth:`_call` / :meth:`_send` (the daemon client's)."""

    socket_path: Path
    _call: Callable[..., Any]
    """``DaemonClient._call``: one request, its JSON answer."""
    _send: Callable[..., tuple[UnixConnection, http.client.HTTPResponse]]
    """``DaemonClient._send``: one request, the connection and response to read."""

    def gc(self, *, dry_run: bool = False, include_rollbackable: bool = False,
           plan_ids: list[str] | None = None) -> GcResponse:
        """``POST /v1/gc``: remove backups the policy (or, for named plans, the person)
        allows; ``include_rollbackable`` only once the person has confirmed."""
        from anna_common.protocol.models import GcResponse

        body = {"dry_run": dry_run, "include_rollbackable": include_rollbackable,
                "plan_ids": list(plan_ids or [])}
        return GcResponse.model_validate(self._call("POST", Route.GC, body,
                                                    timeout=LONG_TIMEOUT))

    def policy_view(self) -> PolicyView:
        """``GET /v1/policy``: the rules in force for this caller."""
        from anna_common.protocol.policy import PolicyView

        return PolicyView.model_validate(self._call("GET", Route.POLICY))

    def policy_check(self, command: str) -> PolicyCheckResponse:
        """``POST /v1/policy/check``: what the policy decides for one command."""
        from anna_common.protocol.policy import PolicyCheckResponse

        return PolicyCheckResponse.model_validate(
            self._call("POST", Route.POLICY_CHECK, {"command": command}))

    def audit_verify(self, progress: Callable[[int], None] | None = None) -> AuditReport:
        """``GET /v1/audit/verify?progress=1``: the report, with ``progress`` told the event
        rows checked so far as the daemon streams them (each line resets the read timeout, so
        a journal of any size is never "not answering")."""
        from anna_common.protocol.models import AuditReport

        conn, response = self._send("GET", Route.AUDIT_VERIFY + "?progress=1")
        return AuditReport.model_validate(
            audit_lines(conn, response, self.socket_path, progress))

    def run_recipe(self, name: str, *, params: dict[str, str] | None = None,
                   trigger: str = "manual") -> RecipeRunResponse:
        """``POST /v1/recipes/{name}/run``: runs (or queues) and answers when done."""
        from anna_common.protocol.queue import RecipeRunResponse

        path = Route.RECIPE_RUN.replace("{name}", quote(name, safe=""))
        body = {"params": dict(params or {}), "trigger": trigger}
        return RecipeRunResponse.model_validate(self._call("POST", path, body,
                                                           timeout=LONG_TIMEOUT))

    def queue(self) -> QueueList:
        """``GET /v1/queue``: plans waiting for approval."""
        from anna_common.protocol.queue import QueueList

        return QueueList.model_validate(self._call("GET", Route.QUEUE))

    def dismiss(self, plan_id: str) -> QueueEntry:
        """``POST /v1/queue/{id}/dismiss``."""
        from anna_common.protocol.queue import QueueEntry

        return QueueEntry.model_validate(
            self._call("POST", plan_path(Route.QUEUE_DISMISS, plan_id)))
