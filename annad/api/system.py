"""Routes: health, telemetry, audit verification."""

from __future__ import annotations

import json

from pydantic import BaseModel
from starlette.responses import StreamingResponse

from anna_common.protocol.models import (
    SESSION_HEADER,
    AuditReport,
    Health,
    Route,
    TelemetryResponse,
)
from annad.api.deps import session
from annad.api.plans import NDJSON
from annad.api.routing import Call, Endpoint


class TelemetryQuery(BaseModel):
    """``GET /v1/telemetry?fresh=1``: recollect instead of answering from the cache."""

    fresh: bool = False


def health(call: Call) -> Health:
    """API version, daemon version, mode and the caller as the kernel sees it."""
    return call.service.health(call.peer)


def telemetry(call: Call) -> TelemetryResponse:
    """Cached telemetry (``?fresh=1`` recollects), desktop part from the caller's session."""
    return call.service.telemetry(call.peer, session(call),
                                  fresh=call.query_as(TelemetryQuery).fresh)


class AuditQuery(BaseModel):
    """``GET /v1/audit/verify?progress=1``: stream the progress as NDJSON."""

    progress: bool = False


def audit_verify(call: Call) -> AuditReport | StreamingResponse:
    """Recompute the journal's hash chain and check the plan rows against it: the report, or
    with ``progress`` NDJSON lines ``{"checked": N}`` as the check goes (a journal of 100,000
    plans takes tens of seconds) and a last line ``{"report": {...}}``."""
    steps = call.service.audit_verify(call.peer)
    if not call.query_as(AuditQuery).progress:
        *_, report = steps
        assert isinstance(report, AuditReport)
        return report
    return StreamingResponse((_progress_line(step) for step in steps), media_type=NDJSON)


def _progress_line(step: int | AuditReport) -> bytes:
    body = ({"checked": step} if isinstance(step, int)
            else {"report": step.model_dump(mode="json")})
    return json.dumps(body).encode() + b"\n"


ENDPOINTS = (
    Endpoint("GET", Route.HEALTH, health),
    Endpoint("GET", Route.TELEMETRY, telemetry, query=TelemetryQuery,
             headers=(SESSION_HEADER,)),
    Endpoint("GET", Route.AUDIT_VERIFY, audit_verify, query=AuditQuery),
)
"""This module's routes."""
