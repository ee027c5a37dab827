"""What happens around an approved plan besides its steps: snapshots, verification, guard.

:class:`Aftercare` is the one place :class:`~annad.service.PlanService` asks for

- the run options of an execution (``--keep-on-verify-fail``, the plan's verify commands
  assessed again with the daemon's context, :mod:`annad.execution.verifying`);
- the work around it (:class:`annad.execution.runs.Around`): machine snapshots before and after
  (:mod:`annad.execution.snapshots`), and arming the lock-out guard when a step can cut the person
  off (:mod:`annad.execution.lockout`, :mod:`annad.execution.guard`);
- the confirmation that keeps a guarded plan, and the record fields it all adds.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from anna_common.protocol.models import PlanStatus, SessionEnv
from annad.execution import snapshots as snaps
from annad.execution.guard import Guard, state_of
from annad.execution.lockout import cut_off_reasons
from annad.execution.runs import Around
from annad.execution.snapshots import Snapshots, SnapshotTools
from annad.execution.verifying import RunOptions, results_of, verify_specs

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.findings import AnnotatedPlan
    from anna_common.protocol.models import ExecEvent, ExecuteRequest, PlanRecord, RollbackResponse
    from anna_common.risk.rules.base import AssessContext
    from annad.config import DaemonSettings
    from annad.execution.prestate import HelperRunner
    from annad.execution.runs import RunManager
    from annad.journal.rows import PlanRow
    from annad.journal.store import Journal

log = logging.getLogger(__name__)


class Aftercare:
    """Snapshots, verification options and the lock-out guard of one daemon."""

    def __init__(self, settings: DaemonSettings, *, journal: Journal, runner: HelperRunner,
                 runs: RunManager, system: bool) -> None:
        self.settings = settings
        self.journal = journal
        self.runs = runs
        self.guard = Guard(journal=journal, revert_s=settings.lockout_revert_s,
                           rollback=self._rollback)
        tools = SnapshotTools(enabled=settings.snapshots and system,
                              etc_root=settings.etc_root, snapper=settings.snapper,
                              etckeeper=settings.etckeeper,
                              etckeeper_conf_dir=settings.etckeeper_conf_dir)
        self.snapshots = Snapshots(tools, runner, journal)

    def start(self) -> None:
        """Take up guards a stopped daemon left armed."""
        self.guard.resume()

    def stop(self) -> None:
        """Stop the guard's timers (the journal keeps them for the next start)."""
        self.guard.stop()

    def _rollback(self, plan_id: str) -> RollbackResponse:
        row = self.journal.get_plan(plan_id)
        if row is None:
            raise LookupError(plan_id)
        return self.runs.rollback(row, SessionEnv())

    def options(self, annotated: AnnotatedPlan, ctx: AssessContext,
                request: ExecuteRequest) -> RunOptions:
        """What the approval says about verification; the verify commands re-assessed."""
        return RunOptions(keep_on_verify_fail=request.keep_on_verify_fail,
                          verify=verify_specs(annotated, ctx))

    def around(self, row: PlanRow, annotated: AnnotatedPlan) -> Around:
        """Snapshots before and after the plan; the guard after it succeeded."""
        reasons = self.cut_off(row, annotated)
        plan_id = row.plan_id

        def before() -> None:
            self.snapshots.before(plan_id, annotated.final_risk)

        def after(status: PlanStatus, _emit: Callable[[ExecEvent], None]) -> None:
            self.snapshots.after(plan_id)
            if status is PlanStatus.SUCCEEDED and reasons:
                # not on the event stream (it ends with plan_finished): the client reads
                # the guard from the plan record after the run
                self.guard.arm(plan_id, reasons)

        return Around(before=before, after=after)

    def cut_off(self, row: PlanRow, annotated: AnnotatedPlan) -> list[str]:
        """Why the plan's steps can cut the person off, one line per reason."""
        reasons = []
        for step in annotated.steps:
            found = cut_off_reasons(step.command, home=row.home,
                                    etc_roots=[str(self.settings.etc_root)], codes=step.codes,
                                    user_scope=str(step.scope) == "user")
            reasons += [f"{step.id}: {why}" for why in found]
        return reasons

    def confirm(self, plan_id: str, connection: int | None, pid: int | None) -> None:
        """Keep a guarded plan (only from a new login, on a connection made after it
        finished)."""
        self.guard.confirm(plan_id, connection, pid)

    def record(self, record: PlanRecord) -> PlanRecord:
        """The record with its verification results, guard and snapshots."""
        plan_id = record.plan_id
        return record.model_copy(update={
            "verify": results_of(self.journal, plan_id),
            "guard": state_of(self.journal, plan_id),
            "snapshots": snaps.records_of(self.journal, plan_id)})
