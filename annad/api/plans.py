"""Routes: submit, judge, list, show, checks, preview, execute (NDJSON stream), cancel, rollback,
confirm."""

from __future__ import annotations

import anyio.to_thread
from pydantic import BaseModel, Field
from starlette.responses import StreamingResponse

from anna_common.protocol.models import (
    MAX_PLAN_REF,
    ChecksRequest,
    ChecksResponse,
    ExecuteRequest,
    GcRequest,
    GcResponse,
    JudgeRequest,
    JudgeResponse,
    PlanList,
    PlanRecord,
    RollbackRequest,
    RollbackResponse,
    Route,
    SubmitRequest,
    SubmitResponse,
)
from anna_common.protocol.preview import PlanPreview
from annad.api.routing import Call, Endpoint

MAX_LIMIT = 1_000_000
"""Largest page of ``GET /v1/plans`` (0 asks for all): more than SQLite's integers hold is a
coded 400, not an OverflowError."""
MAX_ID = MAX_PLAN_REF
"""Longest plan id accepted in a query (ids are 22 characters; a short id is a suffix)."""
NDJSON = "application/x-ndjson"
"""Media type of the execution stream."""
ANALYSIS_THREADS = 2
"""Submissions analysed at once. Analysis is CPU work: more threads than this only share
the same cores, and a flood of submits must not take every worker thread the other routes
(health, plan status, execute) run in."""


class PlanListQuery(BaseModel):
    """``GET /v1/plans?limit=N&before=ID``: one page of the caller's plans."""

    limit: int = Field(200, ge=0, le=MAX_LIMIT)
    """How many (0: all)."""
    before: str | None = Field(None, max_length=MAX_ID)
    """Only plans older than this one."""


class SubmitQuery(BaseModel):
    """``POST /v1/plans?preview=false``: the plan is stored only to run its checks (the
    planner's rounds before the refined plan, which revises it and is the one shown): no
    preview is made, and this content never executes — only a submit that revises it with
    its preview does (``PLAN_STATE`` otherwise)."""

    preview: bool = True
    """Make the preview (the default)."""


def _analysis_limiter(call: Call) -> anyio.CapacityLimiter:
    """The app's own limiter for plan analysis, made on first use (inside the loop)."""
    state = call.request.app.state
    limiter = getattr(state, "analysis_limiter", None)
    if not isinstance(limiter, anyio.CapacityLimiter):
        limiter = anyio.CapacityLimiter(ANALYSIS_THREADS)
        state.analysis_limiter = limiter
    return limiter


async def submit(call: Call) -> SubmitResponse:
    """Validate and classify a plan with the daemon's own context; store it.

    The analysis runs in worker threads of its own (at most :data:`ANALYSIS_THREADS`),
    never on the event loop and never in the shared pool the sync routes use: while a
    large submission is analysed, ``/v1/health`` and plan status keep answering.
    """
    previewed = call.query_as(SubmitQuery).preview
    return await anyio.to_thread.run_sync(
        lambda: call.service.submit(call.peer, call.body, previewed=previewed),
        limiter=_analysis_limiter(call))


async def judge(call: Call) -> JudgeResponse:
    """What this daemon decides for a plan and its approved digest; nothing is stored or
    run (a fleet host under ``--check``). Analysed like a submit, in the same threads."""
    return await anyio.to_thread.run_sync(call.service.judge, call.peer, call.body,
                                          limiter=_analysis_limiter(call))


def list_plans(call: Call) -> PlanList | StreamingResponse:
    """The caller's plans, newest first: ``limit`` of them (0: all) older than ``before``;
    a long list is streamed a page at a time (the same document)."""
    query = call.query_as(PlanListQuery)
    reply = call.service.list(call.peer, limit=query.limit, before=query.before)
    if isinstance(reply, PlanList):
        return reply
    return StreamingResponse(reply, media_type="application/json")


def get_plan(call: Call) -> PlanRecord:
    """One plan with its steps and undo results."""
    return call.service.get(call.peer, call.param("plan_id"))


def checks(call: Call) -> ChecksResponse:
    """Run the plan's necessary checks that the daemon itself rates read-only."""
    return call.service.checks(call.peer, call.param("plan_id"),
                               call.body_as(ChecksRequest) or ChecksRequest())


def preview(call: Call) -> PlanPreview:
    """What each step will do: diffs, packages, unit states, validator verdicts."""
    return call.service.preview(call.peer, call.param("plan_id"))


def execute(call: Call) -> StreamingResponse:
    """Run an approved plan; events stream as NDJSON until ``plan_finished``."""
    return StreamingResponse(call.service.execute(call.peer, call.param("plan_id"),
                                                  call.required_body(ExecuteRequest)),
                             media_type=NDJSON)


def cancel(call: Call) -> PlanRecord:
    """Stop the running plan and undo it."""
    return call.service.cancel(call.peer, call.param("plan_id"))


def rollback(call: Call) -> RollbackResponse:
    """Undo a succeeded or interrupted plan."""
    return call.service.rollback(call.peer, call.param("plan_id"),
                                 call.body_as(RollbackRequest) or RollbackRequest())


def dry_run(call: Call) -> PlanRecord:
    """Record a submitted plan as a dry run: shown, checks run, nothing executed."""
    return call.service.mark_dry_run(call.peer, call.param("plan_id"))


def confirm(call: Call) -> PlanRecord:
    """Keep a plan the lock-out guard armed (only from a connection made after it ended)."""
    return call.service.confirm(call.peer, call.param("plan_id"), call.connection)


def gc(call: Call) -> GcResponse:
    """Remove backups the retention policy (or the person, for named plans) allows."""
    return call.service.gc(call.peer, call.body_as(GcRequest) or GcRequest())


ENDPOINTS = (
    Endpoint("POST", Route.PLANS, submit, body="json", body_required=True,
             query=SubmitQuery, documented=SubmitRequest),
    Endpoint("POST", Route.JUDGE, judge, body="json", body_required=True,
             documented=JudgeRequest),
    Endpoint("GET", Route.PLANS, list_plans, query=PlanListQuery),
    Endpoint("GET", Route.PLAN, get_plan),
    Endpoint("POST", Route.CHECKS, checks, body=ChecksRequest),
    Endpoint("GET", Route.PREVIEW, preview),
    Endpoint("POST", Route.EXECUTE, execute, body=ExecuteRequest, body_required=True),
    Endpoint("POST", Route.CANCEL, cancel),
    Endpoint("POST", Route.ROLLBACK, rollback, body=RollbackRequest),
    Endpoint("POST", Route.DRY_RUN, dry_run),
    Endpoint("POST", Route.CONFIRM, confirm),
    Endpoint("POST", Route.GC, gc, body=GcRequest),
)
"""This module's routes."""
