"""The approved digest, verified before anything of a fleet host's plan runs.

``annactl export`` records the digest the person approved in the playbook; on each host,
``annactl fleet run`` sends it with the plan it received (``approved_digest``). The
daemon computes the digest of the plan it parsed itself (the sha256 of its canonical
JSON: the exact commands that would run) and refuses a different one with
``DIGEST_MISMATCH``: an edited playbook, or a plan changed on the way, is refused before
it is previewed, stored, checked or executed. Nothing of it has run when this raises.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING

from anna_common.errors import ErrorCode, PlanError

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan


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
