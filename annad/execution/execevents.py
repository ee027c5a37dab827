"""The executor's events and the words for a step that did not succeed."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from anna_common.errors import ErrorCode
from anna_common.protocol.models import ExecEvent, ExecEventType

if TYPE_CHECKING:
    from annad.confine.runner import RunResult


def why_failed(result: RunResult) -> tuple[ErrorCode, str]:
    """The code and words for a step that did not succeed."""
    if result.refused:  # the confinement could not be built: nothing ran
        return ErrorCode.CONFINEMENT_REFUSED, result.error or "the confinement was refused"
    if result.error:
        return ErrorCode.EXECUTION_FAILED, result.error
    if result.timed_out:
        return ErrorCode.STEP_TIMEOUT, "the step ran past its timeout and was killed"
    if result.cancelled:
        return ErrorCode.CANCELLED, "cancelled"
    return ErrorCode.EXECUTION_FAILED, f"exited with status {result.exit_code}"


def event(kind: ExecEventType, plan_id: str, step_id: str | None = None,
          index: int | None = None, total: int | None = None, **fields: object) -> ExecEvent:
    """One execution event, stamped now."""
    return ExecEvent(type=kind, plan_id=plan_id, step_id=step_id, index=index, total=total,
                     ts=time.time(), **fields)
