"""A list of plans, as ``GET /v1/plans`` answers it, from SQLite's reading of each stored
annotation (:meth:`annad.journal.read.JournalReads.list_summaries`), a page at a time.

A long list (``history --all``) is written as one JSON document, :data:`LIST_PAGE` plans
at a time, so neither the daemon nor the reply holds the whole history: before this,
``history --all`` at 100,000 plans took 45 s and drove the daemon to 1.37 GB.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from anna_common.plan import RiskLevel
from anna_common.protocol.models import PlanStatus, PlanSummary
from annad.journal.records import ALTERED

if TYPE_CHECKING:
    from collections.abc import Iterator

    from annad.journal.read import JournalReads
    from annad.journal.rows import SummaryRow

LIST_PAGE = 500
"""Plans a list reply holds in memory at once (longer lists are streamed page by page)."""


def summary_of(row: SummaryRow) -> PlanSummary:
    """A list entry from SQLite's reading of the annotation (:class:`SummaryRow`): the
    same title, risk and step count as :func:`plan_summary`, without parsing the plan.
    What does not read as those (not JSON, a risk that is no risk level) is listed as
    altered and HIGH, as there; ``show`` and execute validate the whole annotation."""
    try:
        goal, notes, risk, steps = json.loads(row.shown or "null")
        title = goal if goal is not None else notes
        if not isinstance(title, str) or not isinstance(steps, int):
            raise TypeError(title)
        return PlanSummary(plan_id=row.plan_id, status=PlanStatus(row.status),
                           created_at=row.created_at, updated_at=row.updated_at,
                           caller_uid=row.caller_uid, title=title[:200],
                           final_risk=RiskLevel(risk), steps=steps)
    except (TypeError, ValueError):
        return PlanSummary(plan_id=row.plan_id, status=PlanStatus(row.status),
                           created_at=row.created_at, updated_at=row.updated_at,
                           caller_uid=row.caller_uid, title=ALTERED,
                           final_risk=RiskLevel.HIGH, steps=0)


def stream(journal: JournalReads, *, limit: int, before: str | None, uid: int | None
           ) -> Iterator[bytes]:
    """The :class:`~anna_common.protocol.models.PlanList` document of ``limit`` plans (0:
    all) older than ``before``, caller ``uid``'s (None: everyone's), in pieces: each page
    read (under the journal's lock) only when the previous one was sent."""
    left, after, first = limit or None, before, True
    yield b'{"plans":['
    while left is None or left > 0:
        size = LIST_PAGE if left is None else min(LIST_PAGE, left)
        rows = journal.list_summaries(size + 1, before=after, uid=uid)
        page = rows[:size]
        if page:
            yield (b"" if first else b",") + b",".join(
                summary_of(r).model_dump_json().encode() for r in page)
            first, after = False, page[-1].plan_id
        if len(rows) <= size:
            yield b'],"more":false}'
            return
        if left is not None:
            left -= size
    yield b'],"more":true}'
