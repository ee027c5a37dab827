"""Routes: health, telemetry, audit verification."""

from __future__ import annotations

from pydantic import BaseModel

from anna_common.protocol.models import (
    SESSION_HEADER,
    AuditReport,
    Health,
    Route,
    TelemetryResponse,
)
from annad.api.deps import session
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


def audit_verify(call: Call) -> AuditReport:
    """Recompute the journal's hash chain."""
    return call.service.audit_verify(call.peer)


ENDPOINTS = (
    Endpoint("GET", Route.HEALTH, health),
    Endpoint("GET", Route.TELEMETRY, telemetry, query=TelemetryQuery,
             headers=(SESSION_HEADER,)),
    Endpoint("GET", Route.AUDIT_VERIFY, audit_verify),
)
"""This module's routes."""
