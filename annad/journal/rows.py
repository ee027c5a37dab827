"""The journal's rows as typed values (what :mod:`annad.journal.store` returns).

Its own module so the journal's seal (:mod:`annad.journal.integrity`) can name a row without
importing the journal that imports it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from anna_common.protocol.models import PlanStatus, StepStatus


@dataclass(frozen=True, slots=True)
class PlanRow:
    """A stored plan."""

    plan_id: str
    digest: str
    status: PlanStatus
    created_at: float
    updated_at: float
    caller_uid: int
    source: str
    request: str
    home: str
    plan_json: str
    annotated_json: str
    error: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """A stored plan as a list shows it (:meth:`annad.journal.read.JournalReads.list_summaries`)."""

    plan_id: str
    status: str
    created_at: float
    updated_at: float
    caller_uid: int
    shown: str | None
    """``[first goal, notes for the user, final risk, steps]`` as JSON text (SQLite's JSON
    functions read it from the stored annotation), None when that is not JSON."""


@dataclass(frozen=True, slots=True)
class StepRow:
    """A stored step."""

    idx: int
    step_id: str
    status: StepStatus
    exit_code: int | None
    output: str
    started_at: float | None
    finished_at: float | None


@dataclass(frozen=True, slots=True)
class UndoRow:
    """A stored undo action outcome."""

    step_id: str
    action: str
    target: str
    ok: bool
    message: str
