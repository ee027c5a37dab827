"""What annad reports back over its socket: errors, plan and step states, events, records.

Part of the protocol (:mod:`anna_common.protocol.models` re-exports every name here; import
them from there). Wire values are append-only; every model is strict (``extra="forbid"``).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from anna_common.findings import AnnotatedPlan
from anna_common.plan import RiskLevel

# Field docstrings stay documentation only: no use_attribute_docstrings, whose source
# parsing at import cost every annactl command ~1/5 of its start-up (bench/startup.py).
# Only the model-facing ActionPlan schema carries them (anna_common/plan.py).
_MODEL = ConfigDict(extra="forbid", defer_build=True)


class ErrorBody(BaseModel):
    """Every non-2xx response body."""

    model_config = _MODEL

    code: str
    """An :class:`~anna_common.errors.ErrorCode` value."""
    message: str
    """One human sentence."""
    detail: dict[str, object] = Field(default_factory=dict)
    """Specifics: ``findings``, ``step_id``, ``undo`` results."""
    hint: str | None = None
    """What to do about it, when known."""


class PlanStatus(StrEnum):
    """Plan states in the journal."""

    SUBMITTED = "submitted"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ROLLING_BACK = "rolling_back"
    ROLLED_BACK = "rolled_back"
    ROLLBACK_FAILED = "rollback_failed"
    INTERRUPTED = "interrupted"
    REFUSED = "refused"
    """Never run: execution was refused because another plan was running (plan again)."""
    ANSWERED = "answered"
    """An answer with no steps: nothing to run, nothing changed."""
    DRY_RUN = "dry_run"
    """Shown and its read-only checks run, not executed (``ask --dry-run``); it can still be
    applied (``annactl apply ID``)."""
    ROLLBACK_INCOMPLETE = "rollback_incomplete"
    """Undone, but the comparison after the undo found touched paths that are not as they
    were before the plan (listed in ``error.detail.paths``); never ``rolled_back``. Journals
    written before this state say ``rollback_failed`` for it."""
    ROLLBACK_UNVERIFIED = "rollback_unverified"
    """Every undo action ran and reported success, but a step acted on the running system
    through a program Anna records no state of (``ip``, ``nmcli``, ``hyprctl``, ``docker``…):
    its undo was the plan's rollback command, which exited 0, and nobody checked what it left
    (each such step is an undo result ``unverified``, listed in ``error.detail.unverified``).
    Never ``rolled_back`` on a command's exit status alone."""


UNCHANGED_STATES = frozenset({PlanStatus.SUBMITTED, PlanStatus.ANSWERED, PlanStatus.DRY_RUN,
                              PlanStatus.REFUSED})
"""States in which the plan changed nothing on the machine: no rollback to offer."""


class StepStatus(StrEnum):
    """Step states in the journal."""

    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"
    UNDONE = "undone"
    UNDO_FAILED = "undo_failed"
    VERIFY_FAILED = "verify_failed"
    """It exited 0, but the state it should have left was not found afterwards
    (:mod:`annad.execution.verify`)."""


class ExecEventType(StrEnum):
    """Kinds of execution events."""

    PLAN_STARTED = "plan_started"
    STEP_STARTED = "step_started"
    STEP_OUTPUT = "step_output"
    STEP_FINISHED = "step_finished"
    UNDO_STARTED = "undo_started"
    UNDO_FINISHED = "undo_finished"
    PLAN_FINISHED = "plan_finished"
    ERROR = "error"
    VERIFIED = "verified"
    """A postcondition or a plan's own verify command was checked (``status``: ``passed``,
    ``failed`` or ``not_checked``; ``message`` says what was expected and found)."""


class ExecEvent(BaseModel):
    """One line of the execution stream."""

    model_config = _MODEL

    type: ExecEventType
    """What happened."""
    plan_id: str
    """The plan."""
    step_id: str | None = None
    """The step, for step and undo events."""
    index: int | None = None
    """1-based step number."""
    total: int | None = None
    """Number of steps."""
    status: str | None = None
    """A :class:`StepStatus` or :class:`PlanStatus` value."""
    exit_code: int | None = None
    """For step_finished."""
    output: str = ""
    """Output tail (untrusted text)."""
    message: str = ""
    """Human summary."""
    code: str | None = None
    """An error code, for error events and failures."""
    ts: float = 0.0
    """Unix time."""


class StepRecord(BaseModel):
    """A step as the journal knows it."""

    model_config = _MODEL

    step_id: str
    """The step's id."""
    index: int
    """0-based position."""
    status: StepStatus
    """Current state."""
    exit_code: int | None = None
    """Exit status, when it ran."""
    output: str = ""
    """Output tail (untrusted text)."""
    started_at: float | None = None
    """Unix time."""
    finished_at: float | None = None
    """Unix time."""


class UndoResult(BaseModel):
    """One undo action's outcome."""

    model_config = _MODEL

    step_id: str
    """The step being undone."""
    action: str
    """``restore``, ``delete``, ``rollback_command``, ``reinstall_packages``,
    ``remove_packages``, ``unit_state``, ``conflict`` (changed since the plan ran: left as it
    is), ``uncaptured`` (writes Anna could not back up), ``verify`` (after the undo, the path
    is not as it was before the plan: the plan ends ``rollback_incomplete``), ``unverified``
    (a live program's effect, undone by the plan's rollback command that Anna cannot check:
    the plan ends ``rollback_unverified`` when it is ``ok``), ``live_state`` (a recorded
    value of the running system, a sysctl key or a desktop setting, put back and read again;
    or the network configuration, read again and compared, never written back),
    ``packages_checked`` (the package database, read again after the package undo, differs
    from before the step)."""
    target: str = ""
    """File, package or unit."""
    ok: bool
    """Whether it worked."""
    message: str = ""
    """Detail."""


UNVERIFIED_ACTIONS = frozenset({"unverified", "uncaptured"})
"""Undo actions that can succeed only on a rollback command's exit status, with nothing Anna
could compare afterwards: an ``ok`` one makes a rollback ``rollback_unverified``."""


class VerifyResult(BaseModel):
    """One postcondition or plan verify command, checked after a step or after the plan."""

    model_config = _MODEL

    step_id: str
    """The step it belongs to, or the plan's verify command id."""
    kind: str
    """``package_installed``, ``package_removed``, ``unit_enabled``, ``unit_disabled``,
    ``unit_active``, ``unit_inactive``, ``unit_masked``, ``file_hash`` or ``command``."""
    target: str = ""
    """Package, unit, file or command."""
    status: str
    """``passed``, ``failed`` or ``not_checked`` (the query itself could not run)."""
    expected: str = ""
    """What should be found."""
    found: str = ""
    """What was found (untrusted text for commands)."""


class GuardState(BaseModel):
    """The lock-out guard of a plan that can cut the person off (sshd, network, PAM...)."""

    model_config = _MODEL

    state: str
    """``armed`` (waiting for ``annactl confirm``), ``confirmed``, ``expired`` (rolled back
    by the daemon) or ``failed`` (the automatic rollback did not fully work); added later:
    ``disarmed`` (the person rolled the plan back by hand before the deadline)."""
    deadline: float | None = None
    """Unix time the plan is rolled back at, while armed."""
    reasons: list[str] = Field(default_factory=list)
    """Why the plan can cut the person off, per step."""
    message: str = ""
    """What happened, in one sentence."""


class SnapshotRecord(BaseModel):
    """A machine-level snapshot taken around a plan (snapper, etckeeper)."""

    model_config = _MODEL

    tool: str
    """``snapper`` or ``etckeeper``."""
    config: str = ""
    """The snapper config, or the etckeeper directory."""
    pre: str = ""
    """Snapshot number or commit before the plan."""
    post: str = ""
    """Snapshot number or commit after it."""
    ok: bool = True
    """Whether both were taken."""
    message: str = ""
    """Detail (why one is missing)."""
    undo: str = ""
    """The command that undoes the plan with this snapshot (``snapper undochange``)."""


class PlanSummary(BaseModel):
    """A plan in the list."""

    model_config = _MODEL

    plan_id: str
    status: PlanStatus
    created_at: float
    updated_at: float
    caller_uid: int
    title: str
    """The first goal (untrusted text)."""
    final_risk: RiskLevel
    steps: int


class PlanList(BaseModel):
    """``GET /v1/plans?limit=N&before=ID`` (``limit=0``: all)."""

    model_config = _MODEL

    plans: list[PlanSummary]
    """Newest first."""
    more: bool = False
    """Older plans exist beyond this page (ask again with ``before`` = the last id)."""


class PlanRecord(BaseModel):
    """``GET /v1/plans/{id}``."""

    model_config = _MODEL

    plan_id: str
    digest: str
    status: PlanStatus
    created_at: float
    updated_at: float
    caller_uid: int
    source: str
    request: str
    annotated: AnnotatedPlan
    steps: list[StepRecord]
    undo: list[UndoResult] = Field(default_factory=list)
    error: ErrorBody | None = None
    verify: list[VerifyResult] = Field(default_factory=list)
    """Postconditions and verify commands, in the order checked."""
    guard: GuardState | None = None
    """The lock-out guard, for a plan that can cut the person off."""
    snapshots: list[SnapshotRecord] = Field(default_factory=list)
    """snapper and etckeeper snapshots taken around the plan."""


class AuditReport(BaseModel):
    """``GET /v1/audit/verify``."""

    model_config = _MODEL

    ok: bool
    """The hash chain verifies."""
    rows: int
    """Event rows checked."""
    first_bad_row: int | None = None
    """Id of the first row whose hash does not match."""
    message: str = ""
    """Detail."""
