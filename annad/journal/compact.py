"""Answers kept compactly: an ``answered`` plan's row without its second copy of the plan.

A plan row holds the plan twice: ``plan_json`` (its canonical JSON) and ``annotated_json``
(the daemon's annotation, whose ``plan`` is that same plan). For a plan that runs, both are
kept as they are: execute and rollback check one against the other
(:func:`annad.journal.records.bound_row`). An answer (no steps: nothing ran, nothing can
run) is only ever shown, listed, exported and verified, and it is what most requests end as
("is ssh running?", "how is my system?"); its row keeps ``plan_json`` empty and the plan is
read back from the annotation (:func:`loaded`), byte for byte the text the seal hashed at
submit, which is checked before the copy is dropped (:func:`stored`). The row is a third
smaller; nothing else changes: the seal in the event chain is over the full plan, so an
edit of the annotation shows as a broken seal of both the plan and the annotation.

Schema version 3: a daemon that knows only version 2 would read the empty text as a plan
that does not parse, so it refuses the file instead. Rows written before stay as they are
(both forms are read).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from anna_common.levels import canonical_json
from anna_common.protocol.models import PlanStatus

if TYPE_CHECKING:
    from annad.journal.rows import PlanRow

SCHEMA_VERSION = 3
"""The journal version from which an answer's ``plan_json`` may be empty."""


def plan_of(annotated_json: str) -> str:
    """The canonical JSON of the plan an annotation holds; ``""`` when there is none (an
    edited row: its seal then fails, as for any other edit)."""
    try:
        return canonical_json(json.loads(annotated_json)["plan"]).decode("utf-8")
    except (ValueError, TypeError, KeyError):
        return ""


def stored(row: PlanRow) -> str:
    """What the plans table keeps as ``plan_json``: ``""`` for an answer whose annotation
    holds exactly this plan, the plan's JSON otherwise."""
    if row.status == PlanStatus.ANSWERED and plan_of(row.annotated_json) == row.plan_json:
        return ""
    return row.plan_json


def loaded(plan_json: str, annotated_json: str) -> str:
    """A row's plan as it was submitted, whichever form the row keeps."""
    return plan_json or plan_of(annotated_json)
