"""What the daemon accepts at submit and judge: the envelope, the plan as it validates it,
and the approved digest, verified before anything of a fleet host's plan runs.

``annactl export`` records the digest the person approved in the playbook; on each host,
``annactl fleet run`` sends it with the plan it received (``approved_digest``). The
daemon computes the digest of the plan it parsed itself (the sha256 of its canonical
JSON: the exact commands that would run) and refuses a different one with
``DIGEST_MISMATCH``: an edited playbook, or a plan changed on the way, is refused before
it is previewed, stored, checked or executed. Nothing of it has run when this raises.
"""

from __future__ import annotations

import hmac
import typing
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode, PlanError
from anna_common.protocol.models import SubmitRequest
from anna_common.validate import validate

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan, ValidationResult
    from anna_common.risk.rules.base import AssessContext

_SUBMIT_KEYS = frozenset({"plan", "request", "source", "approved_digest", "revises"})
_JUDGE_KEYS = frozenset({"plan", "approved_digest"})
_SOURCES = typing.get_args(SubmitRequest.model_fields["source"].annotation)


def _unicode(text: str) -> bool:
    """``text`` holds no lone surrogate (valid JSON, not storable or printable as UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def submit_envelope(body: Any) -> None:
    """``POST /v1/plans``'s body shape, checked before the analysis: an envelope error is
    the caller's (BAD_REQUEST), never a 500."""
    if not isinstance(body, dict) or "plan" not in body or set(body) - _SUBMIT_KEYS:
        raise AnnaError("expected {plan, request, source[, approved_digest][, revises]}",
                        code=ErrorCode.BAD_REQUEST)
    revises = body.get("revises")
    if revises is not None and (not isinstance(revises, str) or not 0 < len(revises) <= 256
                                or not _unicode(revises)):
        raise AnnaError("revises must be the id of a stored plan", code=ErrorCode.BAD_REQUEST)
    request = body.get("request", "")
    if not isinstance(request, str) or not _unicode(request) or body.get(
            "source", "model") not in _SOURCES:
        raise AnnaError(f"request must be Unicode text and source one of "
                        f"{', '.join(_SOURCES)}", code=ErrorCode.BAD_REQUEST)


def judge_envelope(body: Any) -> None:
    """``POST /v1/judge``'s body shape (BAD_REQUEST otherwise)."""
    if not isinstance(body, dict) or set(body) != _JUDGE_KEYS:
        raise AnnaError("expected {plan, approved_digest}", code=ErrorCode.BAD_REQUEST)


def accepted(body: dict[str, Any], ctx: AssessContext) -> ValidationResult:
    """The plan validated with the daemon's context, the approved digest (a fleet host's)
    verified first; PLAN_INVALID, DIGEST_MISMATCH or PLAN_BANNED otherwise."""
    result = validate(body["plan"], ctx)
    findings = [f.model_dump(mode="json") for f in result.errors]
    if result.plan is not None:
        verify(result.plan, body.get("approved_digest"))
    if result.plan is not None and result.plan.banned:
        raise PlanError("the plan contains a hard-banned command; it can never run",
                        code=ErrorCode.PLAN_BANNED, detail={"findings": findings})
    if result.plan is None or not result.ok:
        raise PlanError("the plan is not valid", code=ErrorCode.PLAN_INVALID,
                        detail={"findings": findings})
    return result


def verify(annotated: AnnotatedPlan, approved: str | None) -> None:
    """Raise ``DIGEST_MISMATCH`` unless ``approved`` is None or the plan's own digest."""
    if approved is None:
        return
    if not isinstance(approved, str) or not hmac.compare_digest(
            approved.encode("utf-8", "replace"), annotated.digest.encode()):
        shown = approved[:80] if isinstance(approved, str) else repr(type(approved))
        raise PlanError(
            f"this is not the plan that was approved: its digest is {annotated.digest}, the "
            f"approval is for {shown}; nothing of it ran",
            code=ErrorCode.DIGEST_MISMATCH,
            detail={"digest": annotated.digest, "approved_digest": shown},
            hint="the playbook or the plan file was edited after the approval; export it "
                 "again from the approving machine")
