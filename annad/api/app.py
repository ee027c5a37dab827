"""The ASGI application (Starlette, annad.api.routing): routes, error translation, a body
limit, activity tracking.

Built by :func:`create_app` around one :class:`~annad.service.PlanService`; the
lifespan starts the service (crash recovery, telemetry) before the socket
accepts connections and stops it (a running plan may finish) on shutdown.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware

from anna_common.errors import AnnaError, ErrorCode
from anna_common.protocol.routes import Route
from annad.api import agents, errors, plans, policy, recipes, system
from annad.api.routing import Endpoint, route
from annad.peer import PEER_KEY, Peer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from annad.service import PlanService

MAX_BODY = 1024 * 1024
"""Largest request body accepted (a plan is at most 64 KiB of JSON)."""
MAX_REQUESTS_PER_UID = 16
"""Requests other than submits one uid may have in flight at once (each may hold one of the
shared worker threads); more are refused with a coded 503 at once, so one user's flood
cannot hold every worker the others need. Health is never refused: it is how a client
learns the daemon is alive."""
BODY_TIMEOUT_S = 30.0
"""Each part of a request body must arrive within this long of the one before (or of the
head): a client that stops sending mid-body is cut off (a coded 400), never kept waiting."""
MAX_SUBMITS_PER_UID = 64
"""Submits one uid may have queued or in analysis at once. They wait for the analysis
threads (two) without holding a worker, so more may queue; past this they are refused."""


ENDPOINTS: tuple[Endpoint, ...] = (*system.ENDPOINTS, *plans.ENDPOINTS, *policy.ENDPOINTS,
                                   *recipes.ENDPOINTS, *agents.ENDPOINTS)
"""Every route the daemon serves (annad.api.openapi describes them for the tests)."""


class Activity:
    """Requests in flight and the time of the last one (for the idle exit)."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.last = time.monotonic()
        self.per_uid: dict[tuple[int | None, bool], int] = {}
        """Requests in flight per (caller uid or None, whether it is a submit)."""

    def idle_for(self) -> float:
        """Seconds without a request in flight."""
        return 0.0 if self.in_flight else time.monotonic() - self.last


class _Guard:
    """ASGI middleware: count requests, refuse bodies over :data:`MAX_BODY`."""

    def __init__(self, app: ASGIApp, activity: Activity) -> None:
        self.app = app
        self.activity = activity

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or ()).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > MAX_BODY:
            response = errors.error_response(AnnaError(
                f"the request body is larger than {MAX_BODY} bytes", code=ErrorCode.BAD_REQUEST))
            response.status_code = 413
            await response(scope, receive, send)
            return
        peer = (scope.get("state") or {}).get(PEER_KEY)
        submit = scope.get("method") == "POST" and scope.get("path") == Route.PLANS
        uid = (peer.uid if isinstance(peer, Peer) else None, submit)
        busy = self.activity.per_uid.get(uid, 0)
        limit = MAX_SUBMITS_PER_UID if submit else MAX_REQUESTS_PER_UID
        if busy >= limit and scope.get("path") != Route.HEALTH:
            what = "submits" if submit else "requests"
            await errors.error_response(AnnaError(
                f"{busy} {what} of uid {uid[0]} are already in flight; try again when they "
                "have been answered", code=ErrorCode.DAEMON_UNAVAILABLE,
                detail={"in_flight": busy, "limit": limit}))(scope, receive, send)
            return
        seen = 0
        body_done = False

        async def limited() -> Message:
            nonlocal seen, body_done
            if body_done:  # later receives wait for a disconnect (a stream): unbounded
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), BODY_TIMEOUT_S)
            except TimeoutError:
                return {"type": "http.disconnect"}
            body_done = message["type"] != "http.request" or not message.get("more_body")
            seen += len(message.get("body", b""))
            if seen > MAX_BODY:  # chunked bodies have no content-length to check up front
                return {"type": "http.disconnect"}
            return message

        self.activity.in_flight += 1
        self.activity.per_uid[uid] = busy + 1
        try:
            await self.app(scope, limited, send)
        finally:
            self.activity.in_flight -= 1
            self.activity.per_uid[uid] -= 1
            if not self.activity.per_uid[uid]:
                del self.activity.per_uid[uid]
            self.activity.last = time.monotonic()


def create_app(service: PlanService, activity: Activity | None = None, *,
               started: bool = False) -> Starlette:
    """The daemon's ASGI application around ``service``; its lifespan starts the service
    unless it is ``started`` already (:func:`annad.main.serve` starts it before uvicorn, so a
    damaged journal found by start-up recovery is one line and its own exit status)."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if not started:
            await run_in_threadpool(service.start)
        try:
            yield
        finally:
            await run_in_threadpool(service.stop)

    app = Starlette(routes=[route(endpoint) for endpoint in ENDPOINTS],
                    middleware=[Middleware(_Guard, activity=activity or Activity())],
                    exception_handlers=errors.HANDLERS, lifespan=lifespan)
    app.state.service = service
    return app
