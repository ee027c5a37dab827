"""A plan's revision: the refined plan of the same request replaces the stored one.

The planner submits a plan, runs its checks, and asks the model again with what they
printed; the refined plan is the one the person is shown and approves. Stored as a plan of
its own, every request with checks left two or three plans in history, the first ones never
shown. So the refined plan is submitted with ``revises``: it is validated, judged and
previewed like any submit, then takes the stored plan's place under the same id. The checks'
rounds stay events of that plan, before the ``plan_revised`` event that seals the new
content (:mod:`annad.journal.integrity`).

What the approval covers: the digest returned by the revising submit, the exact commands of
the refined plan. The earlier digest no longer matches the row and is refused at execute
(``DIGEST_MISMATCH``), so approving a plan shown before a revision never runs the revision.
Only the caller's own plan, by its full id, and only before anything of it ran
(``submitted`` or ``answered``) may be revised; the state is checked again with runs paused,
so a plan being claimed for execution is never revised under it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from anna_common.errors import ErrorCode, PlanError
from anna_common.protocol.models import PlanStatus
from annad.journal.integrity import PREVIEWED_KIND
from annad.journal.records import bound_row

if TYPE_CHECKING:
    from anna_common.protocol.preview import PlanPreview
    from annad.execution.runs import RunManager
    from annad.journal.rows import PlanRow
    from annad.journal.store import Journal

REVISABLE = (PlanStatus.SUBMITTED, PlanStatus.ANSWERED)
"""States of a plan nothing of which has run, nor been recorded as shown and declined."""


def revisable(journal: Journal, uid: int, plan_id: str) -> PlanRow:
    """The caller's plan ``plan_id`` (its full id), as the chain recorded it, if it may be
    revised; PLAN_NOT_FOUND or PLAN_STATE otherwise (AUDIT_CHAIN_BROKEN for an altered row)."""
    row = journal.get_plan(plan_id)
    # another user's plan is missing, as everywhere (root's included: a revision is judged
    # with the caller's home, so it must be the owner's own)
    if row is None or row.caller_uid != uid:
        raise PlanError(f"no plan {plan_id!r} to revise", code=ErrorCode.PLAN_NOT_FOUND)
    row, _ = bound_row(journal, row)
    if row.status not in REVISABLE:
        raise PlanError(f"plan {row.plan_id} is {row.status}; only a plan nothing of which has "
                        "run can be revised", code=ErrorCode.PLAN_STATE,
                        detail={"status": str(row.status)})
    return row


def store(journal: Journal, runs: RunManager, new: PlanRow, step_ids: list[str], *,
          revises: str, preview: PlanPreview | None) -> PlanRow:
    """Put ``new`` (a freshly analysed row) in the place of plan ``revises``; the stored row."""
    with runs.paused():  # no execution may claim the plan while its content changes
        old = revisable(journal, new.caller_uid, revises)
        row = dataclasses.replace(new, plan_id=old.plan_id, created_at=old.created_at,
                                  request=old.request)
        journal.revise_plan(row, step_ids, from_digest=old.digest)
        # the earlier revision's preview must not stand for this one (an observed change is
        # judged against the last preview): with previews off, an empty one replaces it
        journal.event(PREVIEWED_KIND, row.plan_id,
                      preview=preview.model_dump(mode="json") if preview is not None else None)
    return row
