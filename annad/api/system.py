"""Routes: health, telemetry, audit verification."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from anna_common.protocol.models import AuditReport, Health, Route, TelemetryResponse
from annad.api.deps import PeerDep, ServiceDep, SessionDep

router = APIRouter()


@router.get(Route.HEALTH)
def health(service: ServiceDep, peer: PeerDep) -> Health:
    """API version, daemon version, mode and the caller as the kernel sees it."""
    return service.health(peer)


@router.get(Route.TELEMETRY)
def telemetry(service: ServiceDep, peer: PeerDep, session: SessionDep,
              fresh: Annotated[bool, Query()] = False) -> TelemetryResponse:
    """Cached telemetry (``?fresh=1`` recollects), desktop part from the caller's session."""
    return service.telemetry(peer, session, fresh=fresh)


@router.get(Route.AUDIT_VERIFY)
def audit_verify(service: ServiceDep, peer: PeerDep) -> AuditReport:
    """Recompute the journal's hash chain."""
    return service.audit_verify(peer)
