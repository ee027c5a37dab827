"""Routes: the policy in force and what it decides for a command."""

from __future__ import annotations

from anna_common.protocol.models import Route
from anna_common.protocol.policy import PolicyCheckRequest, PolicyCheckResponse, PolicyView
from annad.api.routing import Call, Endpoint


def policy_show(call: Call) -> PolicyView:
    """The administrator's rules, then the caller's own, in evaluation order."""
    return call.service.policy_view(call.peer)


def policy_check(call: Call) -> PolicyCheckResponse:
    """The decision, matched rule and tier for one command as a plan step."""
    return call.service.policy_check(call.peer, call.required_body(PolicyCheckRequest))


ENDPOINTS = (
    Endpoint("GET", Route.POLICY, policy_show),
    Endpoint("POST", Route.POLICY_CHECK, policy_check, body=PolicyCheckRequest,
             body_required=True),
)
"""This module's routes."""
