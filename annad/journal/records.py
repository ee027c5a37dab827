"""Turning journal rows into protocol records, and plans into executable step lists; the
row a submitted plan is stored as, and a stored row proven against the journal's chain
before anything acts on it."""

from __future__ import annotations

import json
import os
import pwd
import secrets
import time
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode
from anna_common.findings import AnnotatedPlan
from anna_common.plan import RiskLevel, canonical_json, plan_digest
from anna_common.protocol.models import (
    ErrorBody,
    PlanRecord,
    PlanStatus,
    PlanSummary,
    SessionEnv,
    StepRecord,
    SubmitRequest,
    UndoResult,
)
from anna_common.redact import redact
from annad.confine.stepenv import SESSION_KEYS
from annad.journal.rows import PlanRow
from annad.stepspec import StepSpec, Who

if TYPE_CHECKING:
    from pathlib import Path

    from annad.journal.store import Journal


MAX_REQUEST_TEXT = 4000
"""Characters of the person's request kept with a plan."""


def annotated_of(row: PlanRow) -> AnnotatedPlan:
    """The daemon's own annotation stored at submit (for showing; see :func:`bound_annotation`
    for acting on it). A row that no longer parses was edited: ``AUDIT_CHAIN_BROKEN``."""
    try:
        return AnnotatedPlan.model_validate_json(row.annotated_json)
    except ValueError:
        raise AnnaError(f"the stored annotation of plan {row.plan_id} does not parse; the "
                        "journal was altered", code=ErrorCode.AUDIT_CHAIN_BROKEN) from None


def bound_annotation(row: PlanRow) -> AnnotatedPlan:
    """The stored annotation, proven to describe exactly the stored plan, for acting on.

    What runs are the annotation's commands, not ``plan_json``'s: the annotation must
    carry the row's digest, its plan must hash to that digest, and every check, step and
    rollback command (id, text, rollback reference) must be the plan's, byte for byte.
    Anything else means the journal was edited: ``AUDIT_CHAIN_BROKEN``, nothing runs.
    (The seal in the event chain, :meth:`annad.journal.store.Journal.check_plan`, binds the
    rest of the annotation: its tiers and scopes.)
    """
    broken = AnnaError("the stored annotation does not match the stored plan; the journal "
                       "was altered and nothing was run", code=ErrorCode.AUDIT_CHAIN_BROKEN)
    annotated = annotated_of(row)
    plan = annotated.plan
    if annotated.digest != row.digest or plan.digest() != row.digest:
        raise broken
    expected: list[tuple[str, str, str | None]] = [(c.id, c.command, None)
                                                   for c in plan.necessary_checks]
    expected += [(s.id, s.command, s.rollback_id) for s in plan.command_plan]
    expected += [(r.id, r.command, None) for r in plan.rollback_plan]
    got = [(s.id, s.command, s.rollback_id if s.kind == "step" else None)
           for s in (*annotated.checks, *annotated.steps, *annotated.rollback)]
    kinds = ["check"] * len(plan.necessary_checks) + ["step"] * len(plan.command_plan) + \
        ["rollback"] * len(plan.rollback_plan)
    if got != expected or [s.kind for s in (*annotated.checks, *annotated.steps,
                                             *annotated.rollback)] != kinds:
        raise broken
    return annotated


def bound_row(journal: Journal, owned: PlanRow) -> tuple[PlanRow, AnnotatedPlan]:
    """The row as it is now, proven to be what the chain recorded, and its annotation,
    proven to hold exactly the plan's commands (else AUDIT_CHAIN_BROKEN).

    The row is read again inside one read transaction and everything after this uses
    that copy: what is checked is what runs.
    """
    row = journal.check_plan(owned.plan_id)
    if row.caller_uid != owned.caller_uid:
        raise AnnaError("the stored plan changed while it was being read; the journal "
                        "was altered", code=ErrorCode.AUDIT_CHAIN_BROKEN)
    if plan_digest(json.loads(row.plan_json)) != row.digest:
        raise AnnaError("the stored plan does not match its digest; the journal was "
                        "altered", code=ErrorCode.AUDIT_CHAIN_BROKEN)
    return row, bound_annotation(row)


def plan_record(row: PlanRow, journal: Journal) -> PlanRecord:
    """A full record for ``GET /v1/plans/{id}``."""
    steps = [StepRecord(step_id=s.step_id, index=s.idx, status=s.status, exit_code=s.exit_code,
                        output=s.output, started_at=s.started_at, finished_at=s.finished_at)
             for s in journal.steps(row.plan_id)]
    undo = [UndoResult(step_id=u.step_id, action=u.action, target=u.target, ok=u.ok,
                       message=u.message) for u in journal.undo_results(row.plan_id)]
    error = None
    if row.error:
        error = ErrorBody(code=str(row.error.get("code", ErrorCode.INTERNAL_ERROR)),
                          message=str(row.error.get("message", "")),
                          detail=dict(row.error.get("detail") or {}))
    return PlanRecord(plan_id=row.plan_id, digest=row.digest, status=row.status,
                      created_at=row.created_at, updated_at=row.updated_at,
                      caller_uid=row.caller_uid, source=row.source, request=row.request,
                      annotated=annotated_of(row), steps=steps, undo=undo, error=error)


ALTERED = "(the stored plan does not parse: the journal was altered)"
"""The title a list shows for a plan whose annotation does not parse."""


def plan_summary(row: PlanRow) -> PlanSummary:
    """A list entry for ``GET /v1/plans`` (an unreadable row is listed as such, HIGH, so one
    edited row does not hide the history)."""
    try:
        annotated = annotated_of(row)
    except AnnaError:
        return PlanSummary(plan_id=row.plan_id, status=row.status, created_at=row.created_at,
                           updated_at=row.updated_at, caller_uid=row.caller_uid,
                           title=ALTERED,
                           final_risk=RiskLevel.HIGH, steps=0)
    goals = annotated.plan.goals
    return PlanSummary(plan_id=row.plan_id, status=row.status, created_at=row.created_at,
                       updated_at=row.updated_at, caller_uid=row.caller_uid,
                       title=(goals[0] if goals else annotated.plan.notes_for_user)[:200],
                       final_risk=annotated.final_risk, steps=len(annotated.steps))


def step_specs(annotated: AnnotatedPlan) -> list[StepSpec]:
    """The steps to run, each with its scope and rollback command as the daemon assessed them."""
    rollback = {r.id: r for r in annotated.rollback}
    specs = []
    for step in annotated.steps:
        back = rollback.get(step.rollback_id) if step.rollback_id else None
        specs.append(StepSpec(index=step.index, step_id=step.id, command=step.command,
                              scope=str(step.scope),
                              rollback_command=back.command if back is not None else None,
                              rollback_scope=str(back.scope) if back is not None else "user",
                              rollback_tier=str(back.final_risk) if back is not None else "HIGH",
                              confined=step.final_risk == RiskLevel.INFO,
                              tier=str(step.final_risk),
                              uncaptured=any(c.lower() == "uncaptured_write"
                                             for c in step.codes)))
    return specs


def home_of(uid: int, override: Path | None) -> str:
    """The home user-scope steps of ``uid`` use: the override, else the passwd entry."""
    if override is not None:
        return str(override)
    try:
        return pwd.getpwuid(uid).pw_dir
    except KeyError:
        raise AnnaError(f"uid {uid} has no passwd entry; Anna cannot tell its home",
                        code=ErrorCode.PERMISSION_DENIED) from None


def who_of(uid: int, home: str, session: SessionEnv) -> Who:
    """Identity, home and whitelisted session of the plan's owner."""
    try:
        entry = pwd.getpwuid(uid)
        groups = tuple(os.getgrouplist(entry.pw_name, entry.pw_gid))
        name, gid = entry.pw_name, entry.pw_gid
    except KeyError:
        name, gid, groups = str(uid), uid, ()
    values = session.model_dump(exclude_none=True)
    return Who(uid=uid, gid=gid, groups=groups, user=name, home=home,
               session={k: v for k, v in values.items() if k in SESSION_KEYS})


def submitted_row(annotated: AnnotatedPlan, body: dict[str, Any], *, uid: int, home: str
                  ) -> PlanRow:
    """The journal row of a plan just submitted (validated, previewed and judged): a new id,
    the canonical plan, the request redacted and cut to :data:`MAX_REQUEST_TEXT`."""
    # the journal keeps the request for audits: never a password typed into it
    request = redact(str(body.get("request", "")))[:MAX_REQUEST_TEXT]
    meta = SubmitRequest.model_validate({"plan": annotated.plan, "request": request,
                                         "source": body.get("source", "model")})
    now = time.time()
    plan_id = time.strftime("%Y%m%d-%H%M%S", time.localtime(now)) + "-" + \
        secrets.token_hex(3)
    plan_json = canonical_json(annotated.plan.model_dump(mode="json")).decode("utf-8")
    # an answer with no steps has nothing to run: it is recorded as what it is
    status = PlanStatus.SUBMITTED if annotated.steps else PlanStatus.ANSWERED
    return PlanRow(plan_id=plan_id, digest=annotated.digest, status=status,
                   created_at=now, updated_at=now, caller_uid=uid, source=meta.source,
                   request=meta.request, home=home, plan_json=plan_json,
                   annotated_json=annotated.model_dump_json(), error=None)
