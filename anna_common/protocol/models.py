"""The annad HTTP protocol over its Unix socket: version, routes and message models.

Wire values are append-only. Every request and response body is one of the
models below (``extra="forbid"``); errors are :class:`ErrorBody`. Execution
streams :class:`ExecEvent` objects as NDJSON (one JSON object per line).
``docs/protocol.md`` shows a ``curl --unix-socket`` example for each route.

The daemon trusts nothing in these messages: a submitted plan is re-parsed,
re-validated and re-classified by the daemon itself; the caller's identity
comes from ``SO_PEERCRED``, never from a field.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from anna_common.findings import AnnotatedPlan, Finding
from anna_common.plan import ActionPlan
from anna_common.protocol.preview import PlanPreview
from anna_common.protocol.records import (
    UNCHANGED_STATES,
    UNVERIFIED_ACTIONS,
    AuditReport,
    ErrorBody,
    ExecEvent,
    ExecEventType,
    GuardState,
    PlanList,
    PlanRecord,
    PlanStatus,
    PlanSummary,
    SnapshotRecord,
    StepRecord,
    StepStatus,
    UndoResult,
    VerifyResult,
)
from anna_common.protocol.routes import (
    AGENT_HEADER,
    API_PREFIX,
    API_VERSION,
    GROUP,
    SESSION_HEADER,
    SESSION_KEYS,
    SESSION_VALUE_CHARS,
    SYSTEM_SOCKET,
    SYSTEM_STATE_DIR,
    Route,
)
from anna_common.telemetry import Telemetry

__all__ = [
    "AGENT_HEADER",
    "API_PREFIX",
    "API_VERSION",
    "GROUP",
    "MAX_PLAN_REF",
    "SESSION_HEADER",
    "SESSION_KEYS",
    "SESSION_VALUE_CHARS",
    "SYSTEM_SOCKET",
    "SYSTEM_STATE_DIR",
    "UNCHANGED_STATES",
    "UNVERIFIED_ACTIONS",
    "AuditReport",
    "CheckResult",
    "ChecksRequest",
    "ChecksResponse",
    "DaemonMode",
    "ErrorBody",
    "ExecEvent",
    "ExecEventType",
    "ExecuteRequest",
    "GcRemoved",
    "GcRequest",
    "GcResponse",
    "GuardState",
    "Health",
    "PlanList",
    "PlanRecord",
    "PlanStatus",
    "PlanSummary",
    "RollbackRequest",
    "RollbackResponse",
    "Route",
    "SessionEnv",
    "SnapshotRecord",
    "StepRecord",
    "StepStatus",
    "SubmitRequest",
    "SubmitResponse",
    "TelemetryResponse",
    "UndoResult",
    "VerifyResult",
]

# Field docstrings stay documentation only: no use_attribute_docstrings, whose source
# parsing at import cost every annactl command ~1/5 of its start-up (bench/startup.py).
# Only the model-facing ActionPlan schema carries them (anna_common/plan.py).
_MODEL = ConfigDict(extra="forbid", defer_build=True)
MAX_PLAN_REF = 256
"""Longest plan id (or end of one) a request may name (ids are 22 characters): the daemon
refuses longer ones before any lookup (annad.access.MAX_PLAN_ID, the same bound)."""


class SessionEnv(BaseModel):
    """The caller's session environment, sent by the client (a short whitelist).

    Used for desktop detection and, for user-scope steps, as their environment.
    ``HOME`` is never taken from here: the daemon uses the caller's passwd entry.
    """

    model_config = _MODEL

    XDG_RUNTIME_DIR: str | None = None
    WAYLAND_DISPLAY: str | None = None
    DISPLAY: str | None = None
    DBUS_SESSION_BUS_ADDRESS: str | None = None
    LANG: str | None = None
    XDG_CURRENT_DESKTOP: str | None = None
    XDG_SESSION_TYPE: str | None = None
    DESKTOP_SESSION: str | None = None
    HYPRLAND_INSTANCE_SIGNATURE: str | None = None
    SWAYSOCK: str | None = None

    @classmethod
    def from_environ(cls, environ: dict[str, str]) -> SessionEnv:
        """Pick the whitelisted variables out of an environment (values capped at 512 chars)."""
        keys = cls.model_fields
        return cls(**{k: environ[k][:SESSION_VALUE_CHARS] for k in keys if environ.get(k)})


class DaemonMode(StrEnum):
    """How the daemon runs."""

    SYSTEM = "system"
    """As root under systemd: runs system- and user-scope steps."""
    USER = "user"
    """Per user, unprivileged: runs user-scope steps only."""


class Health(BaseModel):
    """``GET /v1/health``."""

    model_config = _MODEL

    api_version: int
    """:data:`API_VERSION` of the daemon."""
    daemon_version: str
    """The ``anna`` package version."""
    mode: DaemonMode
    """``system`` or ``user``."""
    caller_uid: int
    """The caller's uid as the kernel reports it."""
    caller_authorised: bool
    """Whether the caller may submit, execute and roll back."""
    pid: int
    """The daemon's process id."""
    uptime_s: float
    """Seconds since the daemon started."""
    running_plan: str | None = None
    """Id of the plan executing now, if any."""
    state_problem: str | None = None
    """What the daemon's state disk lacks (full: plans are refused), or None."""
    capture_problem: str | None = None
    """Why this daemon cannot capture a step's file writes, or None. Then every file step is
    HIGH, "runs live; Anna cannot undo it"."""
    network_problem: str | None = None
    """Why a root daemon's captured steps run with no network at all (the wall that keeps them
    from this machine's own services could not be built), or None."""


class SubmitRequest(BaseModel):
    """``POST /v1/plans``: the plan to store. The daemon validates it itself."""

    model_config = _MODEL

    plan: ActionPlan
    """The plan as shown to the person."""
    request: str = ""
    """The person's request text, for history (untrusted)."""
    source: Literal["model", "template", "file", "mcp"] = "model"
    """Where the plan came from (``mcp``: an agent proposed it through ``annactl mcp``)."""
    approved_digest: str | None = Field(default=None, max_length=128)
    """Set by a fleet host (``annactl fleet run``): the digest the person approved. A plan
    whose own digest differs is refused (``DIGEST_MISMATCH``) before any of it is
    previewed, stored or run."""
    revises: str | None = Field(default=None, max_length=256)
    """The id of the caller's own plan, not run yet, that this plan replaces: the refined
    plan of the same request after its checks ran. The plan keeps its id and its events
    (the checks' rounds among them); the new content gets its own digest, seal and preview,
    and only that digest executes (``DIGEST_MISMATCH`` for the earlier one)."""


class JudgeRequest(BaseModel):
    """``POST /v1/judge``: a plan to judge, and the digest the person approved."""

    model_config = _MODEL

    plan: ActionPlan
    """The plan as the host received it."""
    approved_digest: str = Field(max_length=128)
    """Must equal the plan's own digest."""


class JudgeResponse(BaseModel):
    """What the daemon would do with a plan: nothing was stored or run."""

    model_config = _MODEL

    digest: str
    """The plan's digest, computed here (equal to the approved one)."""
    annotated: AnnotatedPlan
    """The daemon's own assessment, with the policy's marks."""
    warnings: list[Finding] = Field(default_factory=list)
    """Validation warnings."""


class SubmitResponse(BaseModel):
    """A stored plan: execute it by this id and digest."""

    model_config = _MODEL

    plan_id: str
    """Identifier for execute, show and rollback."""
    digest: str
    """sha256 of the canonical plan; execute must send it back."""
    status: PlanStatus
    """``submitted``."""
    annotated: AnnotatedPlan
    """The daemon's own assessment of every command."""
    warnings: list[Finding] = Field(default_factory=list)
    """Validation warnings (risk raised, confirmation added)."""
    preview: PlanPreview | None = None
    """What each step will do (diffs, packages, units, validators); None when previews are
    off on the daemon."""


class ChecksRequest(BaseModel):
    """``POST /v1/plans/{id}/checks``."""

    model_config = _MODEL

    session: SessionEnv = Field(default_factory=SessionEnv)
    """The caller's session environment for the checks."""


class CheckResult(BaseModel):
    """One necessary check's outcome."""

    model_config = _MODEL

    id: str
    """The check's id."""
    command: str
    """The command run (untrusted text)."""
    ran: bool
    """False when the daemon refused to run it (see ``reason``)."""
    exit_code: int | None = None
    """Exit status, when it ran."""
    output: str = ""
    """Combined stdout and stderr, tail kept (untrusted text)."""
    truncated: bool = False
    """Whether output was cut."""
    duration_ms: float = 0.0
    """Wall time."""
    reason: str | None = None
    """Why it did not run."""


class ChecksResponse(BaseModel):
    """Outcomes of a plan's necessary checks."""

    model_config = _MODEL

    plan_id: str
    """The plan."""
    results: list[CheckResult]
    """In plan order."""


class ExecuteRequest(BaseModel):
    """``POST /v1/plans/{id}/execute``: the person's approval."""

    model_config = _MODEL

    digest: str
    """Must equal the digest returned at submit."""
    confirmed: bool = False
    """The person confirmed once (required for LOW and MEDIUM plans)."""
    high_confirmed: bool = False
    """The person typed the confirmation word (required for HIGH plans)."""
    session: SessionEnv = Field(default_factory=SessionEnv)
    """Environment for user-scope steps."""
    confirm_word: str | None = Field(default=None, max_length=4096)
    """For HIGH plans: the word the person typed. The daemon compares it (surrounding
    spaces ignored, case kept, constant time) with the word it computed itself
    (:func:`anna_common.risk.tiers.plan_word`); a missing or different word is
    ``CONFIRMATION_REQUIRED`` and nothing runs. ``--yes --allow-high`` sends the word
    the daemon's submit response named: those flags are the person's approval."""
    keep_on_verify_fail: bool = False
    """Keep a step whose postcondition or a verify command fails instead of rolling the plan
    back (``--keep-on-verify-fail``); the failure is still shown and journalled."""


class RollbackRequest(BaseModel):
    """``POST /v1/plans/{id}/rollback``."""

    model_config = _MODEL

    confirmed: bool = False
    """The person confirmed the rollback."""
    session: SessionEnv = Field(default_factory=SessionEnv)
    """Environment for user-scope undo commands."""
    high_confirmed: bool = False
    """The person typed the word a HIGH rollback command asks for."""
    confirm_word: str | None = Field(default=None, max_length=4096)
    """When a rollback command is HIGH: the word the person typed, compared by the daemon
    with :func:`anna_common.risk.tiers.rollback_word` as at execute."""


class RollbackResponse(BaseModel):
    """Outcome of a rollback."""

    model_config = _MODEL

    plan_id: str
    status: PlanStatus
    """``rolled_back`` or ``rollback_failed``."""
    undo: list[UndoResult]
    """Each undo action, in the order run."""


class TelemetryResponse(BaseModel):
    """``GET /v1/telemetry``: telemetry plus how fresh it is."""

    model_config = _MODEL

    telemetry: Telemetry
    """The snapshot."""
    age_s: float
    """Seconds since it was collected."""


class GcRequest(BaseModel):
    """``POST /v1/gc``: remove backups the policy (or the person) allows."""

    model_config = _MODEL

    dry_run: bool = False
    """Only say what would be removed."""
    include_rollbackable: bool = False
    """The person agreed that plans that can still be rolled back lose their backups (they
    can then no longer be rolled back)."""
    plan_ids: list[Annotated[str, Field(max_length=MAX_PLAN_REF)]] = Field(
        default_factory=list, max_length=1000)
    """Only these plans (their backups go whatever their age), by id or end of id; empty:
    the policy decides."""


class GcRemoved(BaseModel):
    """One plan whose backups were (or would be) removed."""

    model_config = _MODEL

    plan_id: str
    status: PlanStatus
    """The plan's state (it stays in the history)."""
    bytes: int
    """Bytes its backups held."""
    reason: str
    """``age`` (older than the retention), ``size`` (over the total), ``asked`` (named)."""
    finished_at: float
    """When the plan's last state change was journalled (Unix time)."""


class GcResponse(BaseModel):
    """Outcome of ``POST /v1/gc``."""

    model_config = _MODEL

    dry_run: bool
    """Nothing was removed."""
    removed: list[GcRemoved]
    """Plans whose backups were (or would be) removed."""
    bytes_freed: int
    """Sum of their sizes."""
    kept_rollbackable: list[str]
    """Plans with backups that can still be rolled back and were kept (named ones that
    were not allowed, or all of them under the automatic policy)."""
