"""One audit record per planning run (seed 003's ``AgentRunAudit``), traced or not.

Traces are opt-in (``ANNA_TRACE=1``); the audit is not. Every run of the
planner — answered by the model, by a template, or failed — leaves one row in
the ``audit`` table of the client's history database
(``state_dir/history.sqlite3``, 0600): which prompt files (their set's sha256),
which reply schema (sha256), which parser, which model, how many loops and
model calls, how many steps the plan had, the tokens the server reported, the
error code if it failed, and when it started and completed. No request text or
reply is stored here, so the audit needs no redaction of its own.

Writing is best-effort: a full disk or a locked database is logged, never a
reason for planning to fail.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anna_common import __version__ as _common_version
from anna_common.plan import LLM_VERSION
from annactl.planning.history import AuditStore
from annactl.planning.schemahash import schema_sha256

if TYPE_CHECKING:
    from anna_common.errors import AnnaError
    from anna_common.plan import ActionPlan
    from annactl.planning.outcome import PlanOutcome

log = logging.getLogger(__name__)

PARSER_VERSION = f"anna_common.validate/{_common_version}/{LLM_VERSION}"
"""Identifies the reply parser and contract a run was judged with."""

@dataclass(frozen=True)
class AuditRecord:
    """One planning run."""

    trace_id: str
    """The request (also names its trace file when tracing is on)."""
    run_id: str
    """The session (planner) the request belonged to."""
    mode: str
    """``one-shot``, ``repl`` or ``tui``."""
    prompt_version: str
    """The prompt registry's version."""
    prompt_sha256: str
    """sha256 over the prompt files' hashes."""
    schema_sha256: str
    """sha256 of the ActionPlan schema sent to the model."""
    parser_version: str
    """:data:`PARSER_VERSION`."""
    provider: str
    """``ollama``, ``openai``, ``replay``, ``template`` (or empty before a provider was built)."""
    model: str
    """The model name (empty for templates)."""
    loops: int
    """Planning iterations: 1 plus each checks → refined-plan round."""
    steps: int
    """Steps of the final plan (0 for answers and failures)."""
    model_calls: int
    """Calls to the model, repairs and refinements included."""
    repairs: int
    """Repair calls."""
    tokens_in: int
    """Prompt tokens the server reported."""
    tokens_out: int
    """Generated tokens."""
    template: str | None
    """The offline template that answered, if one did."""
    error_code: str | None
    """The error code when the run failed, else None."""
    started_at: str
    """ISO-8601 UTC."""
    completed_at: str
    """ISO-8601 UTC."""


class AuditLog:
    """The ``audit`` table (stored by :class:`annactl.planning.history.AuditStore`)."""

    def __init__(self, state_dir: Path) -> None:
        self._store = AuditStore(state_dir)
        self.path = self._store.path
        """The SQLite file (shared with the history)."""

    def write(self, record: AuditRecord) -> bool:
        """Store one record; False (and a warning) when the database refused."""
        return self._store.insert(asdict(record))

    def records(self, limit: int = 50) -> list[AuditRecord]:
        """The newest records first."""
        names = [f.name for f in fields(AuditRecord)]
        return [AuditRecord(**dict(zip(names, r, strict=True)))
                for r in self._store.rows(names, limit)]


def as_dict(record: AuditRecord) -> dict[str, Any]:
    """JSON-ready form."""
    return asdict(record)


def run_record(*, trace_id: str, run_id: str, mode: str, stats: PlanOutcome,
               plan: ActionPlan | None, error: AnnaError | None,
               started_at: str) -> AuditRecord:
    """The record of one planning run from its outcome (or its partial stats on failure)."""
    from annactl.planning.packet import now_iso
    from annactl.planning.prompt import prompts

    loaded = prompts()
    return AuditRecord(
        trace_id=trace_id, run_id=run_id, mode=mode, prompt_version=loaded.version,
        prompt_sha256=loaded.sha256, schema_sha256=schema_sha256(),
        parser_version=PARSER_VERSION, provider=stats.provider, model=stats.model,
        loops=1 + stats.rounds, steps=len(plan.command_plan) if plan is not None else 0,
        model_calls=stats.model_calls, repairs=stats.repairs, tokens_in=stats.tokens_in,
        tokens_out=stats.tokens_out, template=stats.template,
        error_code=str(error.code) if error is not None else None,
        started_at=started_at, completed_at=now_iso())
