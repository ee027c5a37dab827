"""Routes: the policy in force and what it decides for a command."""

from __future__ import annotations

from fastapi import APIRouter

from anna_common.protocol.models import Route
from anna_common.protocol.policy import PolicyCheckRequest, PolicyCheckResponse, PolicyView
from annad.api.deps import PeerDep, ServiceDep

router = APIRouter()


@router.get(Route.POLICY)
def policy_show(service: ServiceDep, peer: PeerDep) -> PolicyView:
    """The administrator's rules, then the caller's own, in evaluation order."""
    return service.policy_view(peer)


@router.post(Route.POLICY_CHECK)
def policy_check(service: ServiceDep, peer: PeerDep,
                 request: PolicyCheckRequest) -> PolicyCheckResponse:
    """The decision, matched rule and tier for one command as a plan step."""
    return service.policy_check(peer, request)
