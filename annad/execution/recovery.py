"""Start-up recovery: what a daemon that died mid-plan left behind is dealt with first.

At start the step processes a dead daemon left running are killed before anything else,
even before there is room to journal anything: they must not go on changing the machine.
Then the plans it left ``running`` or ``rolling_back`` are marked ``interrupted`` (their
rollback is offered). When the state disk is too full to record that, the daemon still
starts and serves reads; a thread retries until there is room, and health reports the
problem meanwhile (``state_problem``).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from anna_common.protocol.models import PlanStatus, StepStatus
from annad.journal.fullwrites import StateFull

if TYPE_CHECKING:
    from annad.execution.executor import Executor
    from annad.journal.store import Journal

log = logging.getLogger(__name__)

RECOVERY_RETRY_S = 1.0
"""How often start-up recovery is retried while the state disk is full."""


class StartupRecovery:
    """Recovery of one daemon's journal at start, retried in the background on a full disk."""

    def __init__(self, journal: Journal, executor: Executor) -> None:
        self.journal = journal
        self.executor = executor
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._retry, name="recovery", daemon=True)
        self._committed: dict[str, list[int]] = {}
        """Plan → steps whose commit this start finished (shown ``succeeded``, not failed)."""

    def begin(self) -> None:
        """Stop the orphaned step processes, then mark the unfinished plans interrupted
        (now, or from the retry thread once the state disk has room)."""
        for plan_id in self.journal.unfinished():
            # the step processes a dead daemon left go first, even before there is room
            # to journal anything: they must not go on changing the machine
            self._committed[plan_id] = self.executor.stop_orphans(plan_id)
        if not self._recover():
            self._thread.start()

    def report_interrupted(self) -> None:
        """Log every interrupted plan with the command that undoes what it left."""
        for plan_id in self.journal.plans_in(PlanStatus.INTERRUPTED):
            log.warning("plan %s is interrupted: `annactl rollback %s` undoes what is left",
                        plan_id, plan_id)

    def _recover(self) -> bool:
        """Mark plans a dead daemon left running ``interrupted``; False when the state
        disk has no room for that yet (they stay as they are, reads still work)."""
        try:
            recovered = self.journal.recover()
        except StateFull as exc:
            log.error("cannot mark plans %s interrupted yet: %s; annad serves reads and "
                      "marks them as soon as there is room", self.journal.unfinished(),
                      exc.message)
            return False
        for plan_id in recovered:
            log.warning("plan %s was running when the daemon stopped: now interrupted", plan_id)
            self._mark_committed(plan_id, self._committed.get(plan_id, []))
        return True

    def _mark_committed(self, plan_id: str, indexes: list[int]) -> None:
        """A step whose commit this start finished ran to its end and landed whole: it is
        ``succeeded`` in ``show`` (the plan stays interrupted, its rollback offered)."""
        steps = {s.idx: s for s in self.journal.steps(plan_id)}
        for index in indexes:
            step = steps.get(index)
            if step is None or step.status is not StepStatus.FAILED:
                continue
            try:
                self.journal.step_finished(
                    plan_id, index, step.step_id, StepStatus.SUCCEEDED, 0, step.output,
                    reason="the daemon stopped while this step's changes were landing; "
                           "start-up recovery finished landing them")
            except StateFull:
                log.warning("plan %s: cannot record that step %s was committed by recovery",
                            plan_id, step.step_id)

    def problem(self) -> str | None:
        """What the state disk lacks (health and ``annactl doctor`` show it), or None."""
        if self._thread.is_alive():
            return ("plans left running by the previous daemon are not yet marked "
                    "interrupted: " + (self.journal.reserve.problem() or "the state disk is "
                                       "full"))
        if self.journal.reserve.ensure():
            return None
        return self.journal.reserve.problem()

    def _retry(self) -> None:
        """Retry start-up recovery until the state disk has room (or the daemon stops)."""
        while not self._stopping.wait(RECOVERY_RETRY_S):
            if self.journal.reserve.problem() is None and self._recover():
                self.journal.reserve.ensure()
                log.info("the state disk has room again: start-up recovery is done")
                return

    def stop(self) -> None:
        """End the retry thread, if it runs (the daemon is stopping)."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()
