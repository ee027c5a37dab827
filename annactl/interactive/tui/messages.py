"""Every message the TUI's workers and screens send, in one place.

Workers run in threads (daemon and model calls block); they report back only
by posting these messages (``post_message`` is thread-safe), so widgets are
touched only on the app's own thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from anna_common.protocol.models import CheckResult, ExecEvent, PlanRecord, RollbackResponse
    from anna_common.protocol.queue import QueueList
    from annactl.commands.prepared import Prepared
    from annactl.interactive.tui.screens.edit_steps import StepChanges
    from annactl.planning.evaluate import EvaluationOutcome
    from annactl.planning.outcome import Progress


@dataclass
class PlanningProgress(Message):
    """The planner moved on (stage, elapsed time, tokens received)."""

    progress: Progress


@dataclass
class PlanReady(Message):
    """A plan is stored in the daemon and annotated: show the approval box."""

    prepared: Prepared
    again: bool = False
    """The plan was shown before (its changes failed): no memory question a second time."""


@dataclass
class StepsChanged(Message):
    """The person changed the plan's steps in the approval box: submit them as a new plan."""

    prepared: Prepared
    """The plan they changed."""
    changes: StepChanges
    """Steps left out and commands edited."""


@dataclass
class OfflineAnswer(Message):
    """Anna's offline answer (a weakly matching template), stored in the daemon, while the
    model is still working on the same request (issue 24.1)."""

    prepared: Prepared


@dataclass
class ChecksDone(Message):
    """A plan's read-only checks ran."""

    prepared: Prepared
    """The plan they ran for (not always the one on screen by now)."""
    results: list[CheckResult]


@dataclass
class ExecEventArrived(Message):
    """One line of the daemon's execution stream."""

    event: ExecEvent


@dataclass
class ExecutionDone(Message):
    """The plan finished (in whatever state); the journal's record of it."""

    record: PlanRecord


@dataclass
class EvaluationDone(Message):
    """The finished plan's evaluation (the model's, or Anna's own)."""

    evaluation: EvaluationOutcome
    record: PlanRecord


@dataclass
class RollbackDone(Message):
    """A rollback the person asked for finished; the journal's record after it."""

    response: RollbackResponse
    record: PlanRecord


@dataclass
class WorkFailed(Message):
    """A worker failed; ``code`` is an ErrorCode value, ``message`` untrusted text."""

    stage: str
    code: str
    message: str
    exit_status: int


@dataclass
class QueueReady(Message):
    """The approval queue was fetched (it may be empty)."""

    queue: QueueList
