"""Following a plan to its end through a daemon that stops answering.

The daemon finishes a running plan on its own, whoever listens: a stopped
``annad`` lets it end within ``stop_grace_s`` (or cancels and undoes it), a killed
one leaves it ``interrupted`` for the next start. So when the event stream breaks,
the plan's outcome is still to come: :func:`follow` waits for the daemon to answer
again (bounded by ``reconnect_wait_s``, with a progress event now and then), polls
``GET /v1/plans/{id}`` until the plan is in a final state, and ends the stream with
that outcome. If the daemon never comes back it says so, with the plan's id.

A stream that reached ``plan_finished`` already carries the outcome; if the daemon
stopped right after it (a stop waits for the plan, then exits), the record is waited
for only briefly (:data:`AFTER_END_WAIT_S`) and then built from the stream's events.

Progress while waiting travels as ``error`` events with code ``DAEMON_UNAVAILABLE``
(what the front ends already show), so every front end reports it without change.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, DaemonError, ErrorCode

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from anna_common.protocol.models import ExecEvent, PlanRecord, RollbackResponse
    from annactl.commands.prepared import Prepared
    from annactl.core.daemon_client import DaemonClient

POLL_S = 0.25
"""Seconds between two attempts to reach the daemon again."""
NOTICE_EVERY_S = 10.0
"""Seconds between two progress events while waiting."""
AFTER_END_WAIT_S = 10.0
"""After a whole stream: how long to wait for a daemon that stopped to answer again."""
FINAL = frozenset({"succeeded", "failed", "rolled_back", "rollback_failed",
                   "rollback_incomplete", "rollback_unverified", "interrupted", "refused"})
"""Plan states that do not change without a new request."""


class Follower:
    """Reads one plan's event stream and then its record, across a daemon restart."""

    def __init__(self, daemon: DaemonClient, prepared: Prepared, *, wait_s: float,
                 clock: Callable[[], float] = time.monotonic,
                 pause: Callable[[float], None] = time.sleep) -> None:
        self.daemon = daemon
        self.prepared = prepared
        self.plan_id = prepared.plan_id
        self.wait_s = wait_s
        self.clock = clock
        self.pause = pause
        self.record: PlanRecord | None = None
        """The plan's final record, once read."""
        self.finished: ExecEvent | None = None
        """The stream's ``plan_finished`` event, if it arrived."""
        self.seen: list[ExecEvent] = []
        """Step and undo outcomes from the stream (for a record built from it)."""
        self.at: ExecEvent | None = None
        """The newest event that named a step (where the plan was when the stream ended)."""

    def events(self, stream: Iterator[ExecEvent]) -> Iterator[ExecEvent]:
        """The stream's events, then (if it broke) progress events until the outcome."""
        cut: str | None = None
        try:
            for event in stream:
                if event.index is not None and event.type != "plan_finished":
                    self.at = event
                if event.type == "plan_finished":
                    self.finished = event
                elif event.type in ("step_finished", "undo_finished"):
                    self.seen.append(event)
                yield event
        except DaemonError as exc:
            cut = exc.message
        if cut is None or self.finished is not None:
            return  # the outcome arrived: final_record() reads the record (or falls back)
        yield from self._wait(f"the event stream stopped {self._where()} ({cut})")
        if self.finished is None and self.record is not None:
            yield self._outcome(self.record)

    def _wait(self, why: str, bound: float | None = None) -> Iterator[ExecEvent]:
        """Poll until the plan's record is final; raise DAEMON_UNAVAILABLE past the bound."""
        started = self.clock()
        bound = self.wait_s if bound is None else bound
        goes_on = "" if self.finished is not None else \
            f"; plan {self.plan_id} goes on in the daemon"
        yield self._notice(f"{why}{goes_on}: waiting up to {bound:.0f} s for annad to "
                           "answer again…")
        last_notice = started
        last_seen: str | None = None
        while True:
            try:
                record = self.daemon.get_plan(self.plan_id)
            except DaemonError:
                record = None
            if record is not None:
                last_seen = str(record.status)
                if last_seen in FINAL:
                    self.record = record
                    return
            now = self.clock()
            if now - started >= bound:
                raise self._gave_up(last_seen, bound)
            if now - last_notice >= NOTICE_EVERY_S:
                last_notice = now
                state = f"plan is {last_seen}" if last_seen else "annad is not answering"
                yield self._notice(f"still waiting for plan {self.plan_id} ({state}, "
                                   f"{now - started:.0f} s of {bound:.0f} s)…")
            self.pause(POLL_S)

    def final_record(self) -> Iterator[ExecEvent]:
        """Read the record after a whole stream; wait for the daemon if it stopped since."""
        if self.record is not None:
            return
        try:
            self.record = self.daemon.get_plan(self.plan_id)
            return
        except DaemonError as exc:
            why = f"annad stopped answering {self._where()} ({exc.message})"
        if self.finished is None:
            yield from self._wait(why)
            return
        try:
            yield from self._wait(why, min(self.wait_s, AFTER_END_WAIT_S))
        except DaemonError:
            self.record = self._from_stream(self.finished)

    def _where(self) -> str:
        """Where the plan was when the daemon stopped answering, from its own events."""
        if self.finished is not None:
            return "after the plan's end"
        at = self.at
        if at is None or at.index is None:
            return "before the plan's first step"
        total = at.total or len(self.prepared.annotated.steps)
        doing = "undoing" if at.type.startswith("undo") else "in"
        return f"{doing} step {at.index} of {total}" + (
            f" ({at.step_id})" if at.step_id else "")

    def _from_stream(self, finished: ExecEvent) -> PlanRecord:
        """The plan's record as its own events told it (the daemon is gone)."""
        import os

        from anna_common.findings import AnnotatedPlan
        from anna_common.protocol.models import ErrorBody, PlanRecord, StepRecord

        steps = [StepRecord(step_id=s.id, index=i, status="pending")
                 for i, s in enumerate(self.prepared.annotated.steps)]
        for event in self.seen:
            if event.index is not None and 0 < event.index <= len(steps) and event.status:
                old = steps[event.index - 1]
                steps[event.index - 1] = old.model_copy(update={
                    "status": event.status, "exit_code": event.exit_code
                    if event.type == "step_finished" else old.exit_code,
                    "output": event.output if event.type == "step_finished" else old.output})
        note = "annad stopped before its journal could be read; this is the plan's own " \
            f"event stream (annactl show {self.plan_id} once annad runs again)"
        error = ErrorBody(code=finished.code or str(ErrorCode.DAEMON_UNAVAILABLE),
                          message=(finished.message + "; " if finished.code else "") + note)
        # the plan as shown may be a view of the daemon's JSON (apply ID): the model reads
        # its JSON, as it read the daemon's
        annotated: Any = self.prepared.annotated
        if not isinstance(annotated, AnnotatedPlan):
            annotated = annotated.model_dump(mode="json")
        return PlanRecord(plan_id=self.plan_id, digest=self.prepared.digest,
                          status=finished.status, created_at=finished.ts,
                          updated_at=finished.ts, caller_uid=os.getuid(),
                          source=self.prepared.source, request=self.prepared.request,
                          annotated=annotated, steps=steps, error=error)

    def _gave_up(self, last_seen: str | None, bound: float) -> AnnaError:
        known = (f"its last event said {self.finished.status}" if self.finished is not None
                 else f"it was last seen {last_seen}" if last_seen else
                 "its outcome is not known yet")
        return DaemonError(
            f"annad did not answer again within {bound:.0f} s; plan {self.plan_id} "
            f"was running when it stopped answering ({known})",
            code=ErrorCode.DAEMON_UNAVAILABLE,
            hint=f"start annad (systemctl start annad), then: annactl show {self.plan_id}")

    def _notice(self, message: str) -> ExecEvent:
        from anna_common.protocol.models import ExecEvent, ExecEventType

        return ExecEvent(type=ExecEventType.ERROR, plan_id=self.plan_id, message=message,
                         code=str(ErrorCode.DAEMON_UNAVAILABLE), ts=time.time())

    def _outcome(self, record: PlanRecord) -> ExecEvent:
        from anna_common.protocol.models import ExecEvent, ExecEventType

        error = record.error
        return ExecEvent(type=ExecEventType.PLAN_FINISHED, plan_id=self.plan_id,
                         total=len(record.steps), status=str(record.status),
                         code=error.code if error is not None else None,
                         message=(error.message if error is not None else "")
                         + " (read from the journal once annad answered again)", ts=time.time())



def after_rollback(daemon: DaemonClient, before: PlanRecord, response: RollbackResponse
                   ) -> PlanRecord:
    """The plan's record right after a rollback; if annad stopped just after answering, the
    record read before the rollback with the rollback's answer (status, undo results)."""
    from anna_common.protocol.models import ErrorBody

    try:
        return daemon.get_plan(before.plan_id)
    except DaemonError:
        pass
    left = "; it stopped the rollback between two steps: run `annactl rollback " \
        f"{before.plan_id}` again to undo the rest" if response.status == "interrupted" else ""
    note = ErrorBody(code=str(ErrorCode.DAEMON_UNAVAILABLE), message=(
        f"annad stopped right after answering{left} (this is its answer to the rollback; "
        f"annactl show {before.plan_id} once annad runs again)"))
    return before.model_copy(update={"status": response.status, "undo": response.undo,
                                     "error": note})
