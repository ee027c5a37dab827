"""Request dependencies: the service, the kernel-reported caller, the session header, raw JSON."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import Depends, Header, Request
from pydantic import ValidationError
from starlette.requests import ClientDisconnect

from anna_common.errors import AnnaError, ErrorCode
from anna_common.protocol.models import SESSION_HEADER, SessionEnv
from annad.peer import CONNECTION_KEY, PEER_KEY, Peer
from annad.service import PlanService

MAX_SESSION_HEADER = 8192
"""Longest X-Anna-Session header accepted."""


def get_service(request: Request) -> PlanService:
    """The daemon's one PlanService."""
    service: PlanService = request.app.state.service
    return service


def get_peer(request: Request) -> Peer | None:
    """The caller as ``SO_PEERCRED`` reported it when the connection was made."""
    peer = getattr(request.state, PEER_KEY, None)
    return peer if isinstance(peer, Peer) else None


def get_connection(request: Request) -> int | None:
    """The number of the connection this request came on (None when unknown)."""
    number = getattr(request.state, CONNECTION_KEY, None)
    return number if isinstance(number, int) else None


def get_session(
    raw: Annotated[str | None, Header(alias=SESSION_HEADER)] = None,
) -> SessionEnv | None:
    """The caller's session environment from the ``X-Anna-Session`` header (JSON)."""
    if raw is None or not raw.strip():
        return None
    if len(raw) > MAX_SESSION_HEADER:
        raise AnnaError(f"{SESSION_HEADER} is too long", code=ErrorCode.BAD_REQUEST)
    try:
        return SessionEnv.model_validate_json(raw)
    except ValidationError as exc:
        raise AnnaError(f"{SESSION_HEADER} is not a session object", code=ErrorCode.BAD_REQUEST,
                        detail={"errors": [str(e.get("msg", ""))[:200]
                                           for e in exc.errors()[:10]]}) from None


async def get_json(request: Request) -> Any:
    """The request body parsed as JSON (the service validates its shape)."""
    try:
        body = await request.body()
    except ClientDisconnect:  # also what a body too large or too slow turns into (app.py)
        raise AnnaError("the request body was cut off, too large or too slow",
                        code=ErrorCode.BAD_REQUEST) from None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise AnnaError("the request body is not JSON", code=ErrorCode.BAD_REQUEST) from None


ServiceDep = Annotated[PlanService, Depends(get_service)]
"""The PlanService."""
PeerDep = Annotated[Peer | None, Depends(get_peer)]
"""The kernel-reported caller."""
ConnectionDep = Annotated[int | None, Depends(get_connection)]
"""The number of the request's connection (see :data:`annad.peer.CONNECTION_KEY`)."""
SessionDep = Annotated[SessionEnv | None, Depends(get_session)]
"""The caller's session environment, if sent."""
JsonDep = Annotated[Any, Depends(get_json)]
"""The raw JSON body."""
