"""Wire models of the agent routes (``/v1/agent/...``): what ``annactl mcp`` asks for
another agent, and what the daemon answers.

Every request carries :data:`~anna_common.protocol.routes.AGENT_HEADER` (the agent's name
and version from its MCP client info, :func:`agent_name` makes the name safe to show). The
daemon asks the policy's ``[agents]`` rules and the agent's limits first, journals every
call with the agent's name, and never runs anything on an agent's word that changes the
machine: a proposal is stored and waits for a person (``annactl apply ID``, the queue, the
TUI), except a plan the daemon itself rates INFO, which may run at once.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from anna_common.findings import AnnotatedPlan, Finding
from anna_common.plan import ActionPlan, RiskLevel
from anna_common.protocol.models import (
    CheckResult,
    Health,
    PlanRecord,
    PlanStatus,
    PlanSummary,
    SessionEnv,
    TelemetryResponse,
)
from anna_common.protocol.preview import PlanPreview
from anna_common.protocol.queue import QueueEntry

_MODEL = ConfigDict(extra="forbid", defer_build=True)

MAX_AGENT_NAME = 64
"""Characters of an agent's name kept."""
MAX_AGENT_HEADER = 1024
"""Longest :data:`~anna_common.protocol.routes.AGENT_HEADER` value accepted."""
MAX_COMMAND = 4096
"""Longest command an agent may have explained or checked."""
MAX_CHECKS = 8
"""Commands one ``anna_check`` call may run."""
MAX_REQUEST = 2000
"""Characters of an agent's request text (what the plan is for) kept."""
MAX_HISTORY = 100
"""Plans one ``anna_history`` call lists at most."""
UNNAMED = "unnamed-agent"
"""The name of an agent whose client gave none (or nothing printable)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9 ._:/@+-]+")


def agent_name(raw: object) -> str:
    """The name an agent is shown, journalled and limited by: its MCP client's name cut to
    letters, digits, space and ``._:/@+-`` (no markup, no escapes: it is shown in the queue
    and in desktop notifications), at most :data:`MAX_AGENT_NAME` characters."""
    text = _UNSAFE.sub("-", raw if isinstance(raw, str) else "").strip(" -")
    return " ".join(text.split())[:MAX_AGENT_NAME].strip() or UNNAMED


class AgentInfo(BaseModel):
    """Who the agent says it is (from its MCP client info; untrusted, made printable)."""

    model_config = _MODEL

    name: str = Field(max_length=MAX_AGENT_NAME)
    """The client's name (``claude-code``, ``goose``)."""
    version: str = Field(default="", max_length=MAX_AGENT_NAME)
    """The client's version."""

    def header(self) -> str:
        """The :data:`~anna_common.protocol.routes.AGENT_HEADER` value."""
        return json.dumps({"name": self.name, "version": self.version}, separators=(",", ":"))

    @classmethod
    def of(cls, name: object, version: object = "") -> AgentInfo:
        """From a client's (untrusted) name and version."""
        cleaned = agent_name(version) if isinstance(version, str) and version else ""
        return cls(name=agent_name(name), version="" if cleaned == UNNAMED else cleaned)


class AgentStatus(BaseModel):
    """``GET /v1/agent/status``: the daemon's health and the machine's telemetry."""

    model_config = _MODEL

    health: Health
    """The daemon (mode, whether this user may change things, a running plan)."""
    telemetry: TelemetryResponse
    """The machine at a glance (other users' command lines only for root)."""


class AgentExplainRequest(BaseModel):
    """``POST /v1/agent/explain``."""

    model_config = _MODEL

    command: str = Field(min_length=1, max_length=MAX_COMMAND)
    """The shell command to judge (nothing runs)."""


class AgentChecksRequest(BaseModel):
    """``POST /v1/agent/checks``: read-only commands to run in the checks' confinement."""

    model_config = _MODEL

    commands: list[str] = Field(min_length=1, max_length=MAX_CHECKS)
    """Each must be INFO by the daemon's own analysis, or it is refused with the reason."""
    session: SessionEnv = Field(default_factory=SessionEnv)
    """The caller's session environment (for ``systemctl --user`` and the like)."""


class AgentChecksResponse(BaseModel):
    """What each command printed (secrets withheld as for a model), in order."""

    model_config = _MODEL

    results: list[CheckResult]
    """One per command: ``ran`` false with a ``reason`` when refused."""


class AgentProposeRequest(BaseModel):
    """``POST /v1/agent/plans`` (documents the body: the daemon validates the plan itself,
    as a submit's)."""

    model_config = _MODEL

    plan: ActionPlan
    """The contract's ActionPlan."""
    request: str = Field(default="", max_length=MAX_REQUEST)
    """What the plan is for, in the agent's words (history; untrusted)."""


class AgentProposal(BaseModel):
    """A stored proposal: what it is, what it needs, and how a person approves it."""

    model_config = _MODEL

    plan_id: str
    """The stored plan (``anna_result`` follows it)."""
    digest: str
    """The sha256 of what would run (what a person approves)."""
    status: PlanStatus
    """``submitted`` while it waits; the outcome when an INFO plan ran at once."""
    risk: RiskLevel
    """The daemon's own tier for the plan (the agent's labels can only raise it)."""
    outcome: Literal["queued", "ran", "answered"]
    """``queued``: waits for a person; ``ran``: INFO, ran at once; ``answered``: no steps."""
    confirmations: int
    """What a person must give: 0 (INFO), 1 (LOW, MEDIUM), 2 (HIGH: also a typed word)."""
    approve: list[str] = Field(default_factory=list)
    """How a person approves it (commands to type; empty when nothing waits)."""
    annotated: AnnotatedPlan
    """The daemon's assessment of every command."""
    warnings: list[Finding] = Field(default_factory=list)
    """Validation warnings (a risk raised, a confirmation added)."""
    preview: PlanPreview | None = None
    """What each step would change (diffs, packages, units), None when previews are off."""
    record: PlanRecord | None = None
    """For ``ran``: the plan's record (steps, output)."""


class AgentPlanState(BaseModel):
    """``GET /v1/agent/plans/{id}``: a proposal as it is now."""

    model_config = _MODEL

    record: PlanRecord
    """The plan, its steps' states and output, its undo."""
    agent: str
    """The agent that proposed it."""
    state: Literal["waiting", "dismissed", "running", "done", "rollback_waiting",
                   "rollback_dismissed", "answered"]
    """Where the person's decision stands: ``waiting`` for approval, ``dismissed`` by the
    person, ``running``, ``done`` (see ``record.status``), ``rollback_waiting`` (an undo
    the agent asked for waits for approval), ``rollback_dismissed``, ``answered``."""
    next: str
    """One sentence: what happens next, and who does it."""
    queue: QueueEntry | None = None
    """Its entry in the approval queue, if it has one."""


class AgentHistoryEntry(BaseModel):
    """A plan an agent proposed."""

    model_config = _MODEL

    summary: PlanSummary
    """Id, state, risk, title."""
    agent: str
    """Who proposed it."""


class AgentHistory(BaseModel):
    """``GET /v1/agent/plans``: this user's plans that agents proposed, newest first."""

    model_config = _MODEL

    plans: list[AgentHistoryEntry]
    """At most the ``limit`` asked for."""
