"""How an undo ends, from its results: the plan's state and what the error lists.

``rolled_back`` is claimed only when every undo action succeeded and each was checked: a
path compared with its recorded pre-state, a package or unit state read again. An action
that succeeded only on a rollback command's exit status (a live program's effect Anna
records no state of, writes Anna could not back up) makes it ``rollback_unverified``; a path
not as it was after the undo, ``rollback_incomplete``; any other failure, ``rollback_failed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from anna_common.errors import ErrorCode
from anna_common.protocol.models import UNVERIFIED_ACTIONS, PlanStatus

if TYPE_CHECKING:
    from anna_common.protocol.models import UndoResult


def undone_status(results: list[UndoResult]) -> tuple[PlanStatus, ErrorCode, list[str]]:
    """How an undo that did not fully succeed ends: ``rollback_incomplete`` when the
    comparison afterwards found paths not as they were (listed), else ``rollback_failed``."""
    paths = [r.target for r in results if r.action == "verify" and not r.ok]
    if paths:
        return PlanStatus.ROLLBACK_INCOMPLETE, ErrorCode.ROLLBACK_INCOMPLETE, paths
    return PlanStatus.ROLLBACK_FAILED, ErrorCode.ROLLBACK_FAILED, []


UNVERIFIED = UNVERIFIED_ACTIONS
"""Undo actions that can succeed only on a rollback command's word: a live program's effect
(``unverified``) and writes Anna could not back up (``uncaptured``)."""


def unverified(results: list[UndoResult]) -> list[str]:
    """The steps whose undo succeeded only on a rollback command's word (nobody checked)."""
    return list(dict.fromkeys(r.step_id for r in results if r.ok and r.action in UNVERIFIED))


def rollback_status(results: list[UndoResult]
                    ) -> tuple[PlanStatus, ErrorCode | None, list[str]]:
    """How a rollback ends: ``rolled_back`` only when every action succeeded and each was
    checked; ``rollback_unverified`` (the steps listed) when one succeeded on a command's
    word alone; otherwise as :func:`undone_status` says."""
    if not all(r.ok for r in results):
        return undone_status(results)
    steps = unverified(results)
    if steps:
        return PlanStatus.ROLLBACK_UNVERIFIED, ErrorCode.ROLLBACK_UNVERIFIED, steps
    return PlanStatus.ROLLED_BACK, None, []


@dataclass(frozen=True)
class AfterFailure:
    """How a plan whose step failed ends once what ran was undone."""

    status: PlanStatus
    code: ErrorCode
    detail: dict[str, object]
    """``undo_ok``, and ``paths`` / ``unverified`` when there are any."""
    words: str
    """What the undo came to, appended to the failure's message."""


def after_failure(results: list[UndoResult], cause: ErrorCode) -> AfterFailure:
    """The end of a plan that failed with ``cause`` and was undone with ``results``: ``failed``
    (``rolled_back`` when cancelled, ``rollback_unverified`` when that undo relied on a
    rollback command's word), or the undo's own failure."""
    undo_ok = all(r.ok for r in results)
    status, code, paths = undone_status(results)
    steps = unverified(results)
    if undo_ok:
        code = cause
        status = PlanStatus.ROLLED_BACK if cause is ErrorCode.CANCELLED else PlanStatus.FAILED
        if status is PlanStatus.ROLLED_BACK and steps:
            status = PlanStatus.ROLLBACK_UNVERIFIED
    detail: dict[str, object] = {"undo_ok": undo_ok, **({"paths": paths} if paths else {}),
                                 **({"unverified": steps} if steps else {})}
    words = "; undoing it failed in part" if not undo_ok else "; the plan was undone" + (
        f", but not verified for {', '.join(steps)}: a live program's rollback command Anna "
        "cannot check" if steps else "")
    return AfterFailure(status, code, detail, words)
