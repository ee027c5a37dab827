"""Routes: submit, judge, list, show, checks, preview, execute (NDJSON stream), cancel, rollback,
confirm."""

from __future__ import annotations

from typing import Annotated

import anyio.to_thread
from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from anna_common.protocol.models import (
    ChecksRequest,
    ChecksResponse,
    ExecuteRequest,
    GcRequest,
    GcResponse,
    JudgeResponse,
    PlanList,
    PlanRecord,
    RollbackRequest,
    RollbackResponse,
    Route,
    SubmitResponse,
)
from anna_common.protocol.preview import PlanPreview
from annad.api.deps import ConnectionDep, JsonDep, PeerDep, ServiceDep

router = APIRouter()

MAX_LIMIT = 1_000_000
"""Largest page of ``GET /v1/plans`` (0 asks for all): more than SQLite's integers hold is a
coded 400, not an OverflowError."""
MAX_ID = 256
"""Longest plan id accepted in a query (ids are 22 characters; a short id is a suffix)."""
NDJSON = "application/x-ndjson"
"""Media type of the execution stream."""
ANALYSIS_THREADS = 2
"""Submissions analysed at once. Analysis is CPU work: more threads than this only share
the same cores, and a flood of submits must not take every worker thread the other routes
(health, plan status, execute) run in."""


def _analysis_limiter(request: Request) -> anyio.CapacityLimiter:
    """The app's own limiter for plan analysis, made on first use (inside the loop)."""
    limiter = getattr(request.app.state, "analysis_limiter", None)
    if not isinstance(limiter, anyio.CapacityLimiter):
        limiter = anyio.CapacityLimiter(ANALYSIS_THREADS)
        request.app.state.analysis_limiter = limiter
    return limiter


@router.post(Route.PLANS)
async def submit(request: Request, service: ServiceDep, peer: PeerDep,
                 body: JsonDep) -> SubmitResponse:
    """Validate and classify a plan with the daemon's own context; store it.

    The analysis runs in worker threads of its own (at most :data:`ANALYSIS_THREADS`),
    never on the event loop and never in the shared pool the sync routes use: while a
    large submission is analysed, ``/v1/health`` and plan status keep answering.
    """
    return await anyio.to_thread.run_sync(service.submit, peer, body,
                                          limiter=_analysis_limiter(request))


@router.post(Route.JUDGE)
async def judge(request: Request, service: ServiceDep, peer: PeerDep,
                body: JsonDep) -> JudgeResponse:
    """What this daemon decides for a plan and its approved digest; nothing is stored or
    run (a fleet host under ``--check``). Analysed like a submit, in the same threads."""
    return await anyio.to_thread.run_sync(service.judge, peer, body,
                                          limiter=_analysis_limiter(request))


@router.get(Route.PLANS)
def list_plans(service: ServiceDep, peer: PeerDep,
               limit: Annotated[int, Query(ge=0, le=MAX_LIMIT)] = 200,
               before: Annotated[str | None, Query(max_length=MAX_ID)] = None) -> PlanList:
    """The caller's plans, newest first: ``limit`` of them (0: all) older than ``before``."""
    return service.list(peer, limit=limit, before=before)


@router.get(Route.PLAN)
def get_plan(service: ServiceDep, peer: PeerDep, plan_id: str) -> PlanRecord:
    """One plan with its steps and undo results."""
    return service.get(peer, plan_id)


@router.post(Route.CHECKS)
def checks(service: ServiceDep, peer: PeerDep, plan_id: str,
           body: ChecksRequest | None = None) -> ChecksResponse:
    """Run the plan's necessary checks that the daemon itself rates read-only."""
    return service.checks(peer, plan_id, body or ChecksRequest())


@router.get(Route.PREVIEW)
def preview(service: ServiceDep, peer: PeerDep, plan_id: str) -> PlanPreview:
    """What each step will do: diffs, packages, unit states, validator verdicts."""
    return service.preview(peer, plan_id)


@router.post(Route.EXECUTE)
def execute(service: ServiceDep, peer: PeerDep, plan_id: str,
            body: ExecuteRequest) -> StreamingResponse:
    """Run an approved plan; events stream as NDJSON until ``plan_finished``."""
    return StreamingResponse(service.execute(peer, plan_id, body), media_type=NDJSON)


@router.post(Route.CANCEL)
def cancel(service: ServiceDep, peer: PeerDep, plan_id: str) -> PlanRecord:
    """Stop the running plan and undo it."""
    return service.cancel(peer, plan_id)


@router.post(Route.ROLLBACK)
def rollback(service: ServiceDep, peer: PeerDep, plan_id: str,
             body: RollbackRequest | None = None) -> RollbackResponse:
    """Undo a succeeded or interrupted plan."""
    return service.rollback(peer, plan_id, body or RollbackRequest())


@router.post(Route.DRY_RUN)
def dry_run(service: ServiceDep, peer: PeerDep, plan_id: str) -> PlanRecord:
    """Record a submitted plan as a dry run: shown, checks run, nothing executed."""
    return service.mark_dry_run(peer, plan_id)


@router.post(Route.CONFIRM)
def confirm(service: ServiceDep, peer: PeerDep, connection: ConnectionDep,
            plan_id: str) -> PlanRecord:
    """Keep a plan the lock-out guard armed (only from a connection made after it ended)."""
    return service.confirm(peer, plan_id, connection)


@router.post(Route.GC)
def gc(service: ServiceDep, peer: PeerDep, body: GcRequest | None = None) -> GcResponse:
    """Remove backups the retention policy (or the person, for named plans) allows."""
    return service.gc(peer, body or GcRequest())
