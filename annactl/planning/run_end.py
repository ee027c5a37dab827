"""The end of a planning run: its trace, its audit record and its history packets (split
from :mod:`annactl.planning.planner_run`, which plans; this only writes down what it did)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError
from annactl.planning.audit import AuditLog, run_record

if TYPE_CHECKING:
    from annactl.planning.outcome import PlanOutcome
    from annactl.planning.run_calls import ModelCalls

log = logging.getLogger(__name__)


def finish(run: ModelCalls, outcome: PlanOutcome | None, error: AnnaError | None, *,
           mode: str, started_at: str, preferences: dict[str, str] | None,
           packet: dict[str, Any] | None) -> None:
    """Write ``run``'s trace and audit record, and its exchange in the history (a history
    that cannot be written never breaks planning); the keywords are the run's own."""
    summary: dict[str, Any] = outcome.summary() if outcome is not None else {
        "error": error.to_dict() if error is not None else None,
        "model_calls": run.stats.model_calls, "repairs": run.stats.repairs}
    summary.pop("plan", None)
    run.tracer.set("outcome", summary)
    run.tracer.write()
    AuditLog(run.settings.state_dir).write(run_record(
        trace_id=run.tracer.trace_id, run_id=run.planner.run_id, mode=mode,
        stats=outcome if outcome is not None else run.stats,
        plan=outcome.plan if outcome is not None else None, error=error,
        started_at=started_at))
    history = run.planner.history
    if history is None:
        return
    try:
        history.record_exchange(run.request, mode=mode, telemetry=run.telemetry,
                                preferences=preferences, outcome=outcome, error=error,
                                trace_id=run.tracer.trace_id, packet=packet)
    except (OSError, AnnaError) as exc:  # history must never break planning
        log.warning("could not store history: %s", exc)
