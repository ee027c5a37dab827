"""The one plan that runs (or rolls back) at a time, in a thread of its own.

Execution happens in a worker thread that does not depend on the HTTP request:
a client that disconnects mid-plan does not stop it half-way; the plan runs to
its end (or is undone) and the journal has the outcome. Events go through a
queue to whoever streams them. A second execute or rollback while one is under
way is refused with ``PLAN_RUNNING``; a submitted plan refused that way is marked
``refused`` (it was approved for a system the running plan is changing: plan it
again). Reads and telemetry are unaffected.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import queue
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anna_common.errors import AnnaError, ErrorCode, PlanError
from anna_common.protocol.models import (
    ExecEvent,
    ExecEventType,
    PlanStatus,
    RollbackResponse,
    SessionEnv,
    StepStatus,
    UndoResult,
)
from annad.execution.undostatus import UNVERIFIED, rollback_status
from annad.journal.records import step_specs, who_of
from annad.logs import in_plan

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from anna_common.findings import AnnotatedPlan
    from annad.execution.executor import Executor
    from annad.execution.verifying import RunOptions
    from annad.journal.rows import PlanRow
    from annad.journal.store import Journal
    from annad.stepspec import StepSpec, Who

log = logging.getLogger(__name__)

MAX_QUEUED_OUTPUT = 2000
"""Output events queued for a slow or absent reader before further output is dropped
(the step's output tail is still kept in the journal)."""
SYSTEM_DAEMON_HINT = "set up the system daemon: annactl setup"
"""What to do when a per-user daemon is asked for a system-scope step."""


EXECUTE = "execute"
"""A run that applies a plan."""
ROLLBACK = "rollback"
"""A run that undoes a plan."""
RUNNABLE = (PlanStatus.SUBMITTED, PlanStatus.DRY_RUN)
"""States a plan can be executed from: stored and never run (a dry run only showed it)."""


@dataclass(frozen=True)
class Around:
    """Work around one plan's execution, in its thread: ``before`` the first step,
    ``after`` the plan ended (with its final status and the event stream)."""

    before: Callable[[], None]
    after: Callable[[PlanStatus, Callable[[ExecEvent], None]], None]


@dataclass
class _Run:
    plan_id: str
    kind: str = EXECUTE
    cancel: threading.Event = field(default_factory=threading.Event)
    events: queue.SimpleQueue[ExecEvent | None] = field(default_factory=queue.SimpleQueue)
    thread: threading.Thread | None = None
    outcome: RollbackResponse | None = None
    """A rollback's result, once its thread has ended (None if it was aborted)."""

    def emit(self, event: ExecEvent) -> None:
        """Queue an event for the stream (output is dropped when nobody keeps up)."""
        if event.type is ExecEventType.STEP_OUTPUT and self.events.qsize() > MAX_QUEUED_OUTPUT:
            return
        self.events.put(event)


class RunManager:
    """Starts, cancels and waits for the single running plan."""

    def __init__(self, *, journal: Journal, executor: Executor, user_mode: bool) -> None:
        self.journal = journal
        self.executor = executor
        self.user_mode = user_mode
        self._lock = threading.Lock()
        self._run: _Run | None = None
        self._closing = False
        self.after_run: Callable[[], None] | None = None
        """Called after each run ends (the retention policy), outside the lock."""
        self.backups_gone: Callable[[str], str | None] = lambda _plan_id: None
        """Why a plan's backups are gone (gc removed them), checked as a rollback claims."""

    def current(self) -> str | None:
        """Id of the plan running or rolling back now."""
        run = self._run
        return run.plan_id if run is not None else None

    def _claim(self, plan_id: str, allowed: tuple[PlanStatus, ...],
               work: Callable[[_Run], None], *, kind: str = EXECUTE) -> _Run:
        """Become the running plan and start ``work`` in its thread, or raise PLAN_RUNNING /
        PLAN_STATE. All under the lock, so a stop never sees a run without its thread."""
        with self._lock:
            if self._closing:
                raise AnnaError("the daemon is stopping", code=ErrorCode.DAEMON_UNAVAILABLE,
                                hint="try again once annad has restarted")
            row = self.journal.get_plan(plan_id)
            if self._run is not None:
                running = self._run.plan_id
                if kind == EXECUTE and row is not None and row.status in RUNNABLE:
                    self._refuse(plan_id, running)
                raise PlanError(f"plan {running} is running; one plan runs at a time, and plan "
                                f"{plan_id} was not run", code=ErrorCode.PLAN_RUNNING,
                                hint=f"wait for it (annactl show {running}), then ask again",
                                detail={"running_plan": running})
            if row is None or row.status not in allowed:
                status = row.status if row is not None else "unknown"
                raise PlanError(f"plan {plan_id} is {status}; this needs "
                                + " or ".join(str(a) for a in allowed),
                                code=ErrorCode.PLAN_STATE, detail={"status": str(status)})
            gone = self.backups_gone(plan_id) if kind == ROLLBACK else None
            if gone is not None:  # checked under the lock: gc holds it while it removes
                raise PlanError(f"plan {plan_id} cannot be rolled back: {gone}",
                                code=ErrorCode.PLAN_STATE,
                                detail={"status": str(row.status), "backups_removed": True})
            run = _Run(plan_id, kind)
            # everything logged by the run carries its PLAN_ID to journald (annad.logs)
            run.thread = threading.Thread(target=in_plan(plan_id, work), args=(run,),
                                          name=f"{kind}-{plan_id}")
            self._run = run
            try:
                run.thread.start()
            except BaseException:
                self._run = None
                raise
            return run

    def _refuse(self, plan_id: str, running: str) -> None:
        """Mark a submitted plan ``refused`` because another plan runs (caller holds the lock).

        Approval was given for the system as it was; the running plan is changing it, so
        the refused plan is not kept as runnable: the person plans again.
        """
        self.journal.set_plan_status(plan_id, PlanStatus.REFUSED, error={
            "code": str(ErrorCode.PLAN_RUNNING),
            "message": f"plan {running} was running; this plan was not run",
            "detail": {"running_plan": running}}, kind="plan_refused")

    def _release(self, run: _Run) -> None:
        """Free the run's slot, end its event stream (the held-back plan_finished goes out
        now), then apply the retention policy."""
        with self._lock:
            if self._run is run:
                self._run = None
        run.events.put(None)
        if self.after_run is not None:
            try:
                self.after_run()
            except Exception:  # retention must never break a run's ending
                log.exception("backup retention after plan %s failed", run.plan_id)

    @contextlib.contextmanager
    def paused(self) -> Iterator[str | None]:
        """No run may start inside this block; yields the plan running now (or None)."""
        with self._lock:
            yield self.current()

    def execute(self, row: PlanRow, annotated: AnnotatedPlan, session: SessionEnv,
                options: RunOptions | None = None, around: Around | None = None
                ) -> Iterator[bytes]:
        """Start the plan in a worker thread; return its NDJSON event stream.

        ``around``: what runs before the first step and after the plan ended, in the same
        thread (snapshots, the lock-out guard)."""
        specs = step_specs(annotated)
        if self.user_mode:
            _refuse_system_steps(specs)
        who = who_of(row.caller_uid, row.home, session)
        run = self._claim(row.plan_id, RUNNABLE,
                          lambda r: self._work(r, specs, who, options, around))
        return _stream(run)

    def _work(self, run: _Run, specs: list[StepSpec], who: Who, options: RunOptions | None,
              around: Around | None) -> None:
        emit = run.emit
        if around is not None:
            def emit(event: ExecEvent) -> None:
                # the post snapshot and the guard come before plan_finished reaches the
                # client: the record it reads at the end already shows them
                if event.type is ExecEventType.PLAN_FINISHED:
                    try:
                        around.after(PlanStatus(event.status or "failed"), run.emit)
                    except Exception:  # the plan's end must still be reported
                        log.exception("plan %s: snapshots or the lock-out guard failed",
                                      run.plan_id)
                run.emit(event)
        try:
            if around is not None:
                around.before()
            self.executor.run(run.plan_id, specs, who, emit, run.cancel, options)
        except Exception as exc:  # the journal may be gone (shutdown); report, never hang
            log.exception("plan %s: execution aborted", run.plan_id)
            run.emit(ExecEvent(type=ExecEventType.ERROR, plan_id=run.plan_id,
                               code=str(ErrorCode.INTERNAL_ERROR), message=str(exc)))
        finally:
            self._release(run)
            release_memory()

    def cancel(self, plan_id: str, *, wait_s: float) -> None:
        """Ask the running plan to stop: an apply's step process group is killed and undo
        follows; a rollback stops after the step it is undoing (``interrupted``)."""
        with self._lock:
            run = self._run
        if run is None or run.plan_id != plan_id or run.thread is None:
            raise PlanError(f"plan {plan_id} is not running", code=ErrorCode.PLAN_STATE)
        log.info("plan %s: cancel asked (%s)", plan_id,
                 "stopping after the step being undone" if run.kind == ROLLBACK else
                 "killing the running step, then undoing")
        run.cancel.set()
        run.thread.join(timeout=wait_s)

    def rollback(self, row: PlanRow, session: SessionEnv) -> RollbackResponse:
        """Undo every step not yet undone, newest first, in a worker thread; wait for it.

        For a succeeded or interrupted plan that is every step that started; after a
        partly failed or unverified undo (``rollback_failed``, ``rollback_incomplete``) it
        retries the steps whose undo failed.
        The rollback is a run like an apply: the daemon's stop waits for it (see
        :meth:`shutdown`), and a rollback stopped between two steps leaves the plan
        ``interrupted`` with what was undone journalled, so it can be rolled back again.
        """
        current = who_of(row.caller_uid, row.home, session).session or None
        run = self._claim(row.plan_id, (PlanStatus.SUCCEEDED, PlanStatus.INTERRUPTED,
                                        PlanStatus.ROLLBACK_FAILED,
                                        PlanStatus.ROLLBACK_INCOMPLETE),
                          lambda r: self._undo_work(r, current), kind=ROLLBACK)
        if run.thread is not None:
            run.thread.join()  # the request waits; a stopping daemon waits too (shutdown)
        if run.outcome is None:
            raise AnnaError(f"the rollback of plan {row.plan_id} was aborted; see the daemon's "
                            "log", code=ErrorCode.INTERNAL_ERROR)
        return run.outcome

    def _undo_work(self, run: _Run, session: dict[str, str] | None) -> None:
        plan_id = run.plan_id
        try:
            # a rollback started before and not finished (killed, stopped): this one resumes it
            started = self.journal.last_event(plan_id, "rollback_started")
            ended = [t for t in (self.journal.last_event(plan_id, "rollback_finished"),
                                 self.journal.last_event(plan_id, "rollback_interrupted"))
                     if t is not None]
            resuming = started is not None and (not ended or started > max(ended))
            # the rollback record, flushed before the first change (the next start or the
            # next rollback finishes what a kill left)
            self.journal.set_plan_status(plan_id, PlanStatus.ROLLING_BACK,
                                         kind="rollback_started")
            indexes = [s.idx for s in reversed(self.journal.steps(plan_id))
                       if s.status is not StepStatus.UNDONE]
            env = self.executor.undo_env(plan_id, session)  # one rollback, one progress
            env.progress.resuming = resuming
            # every step's backups checked before any is undone: none is, if one is broken
            results: list[UndoResult] = self.executor.backup_problems(plan_id, indexes, env,
                                                                      run.emit)
            for position, index in enumerate([] if results else indexes):
                if run.cancel.is_set():  # stopped between two steps: the rest waits
                    self._rollback_interrupted(plan_id, indexes[position:], results)
                    run.outcome = RollbackResponse(plan_id=plan_id,
                                                   status=PlanStatus.INTERRUPTED, undo=results)
                    return
                results.extend(self.executor.undo(plan_id, [index], run.emit, env=env))
            results.extend(self.executor.compared(plan_id, env, results))
            status, code, listed = rollback_status(results)
            error = None if code is None else _rollback_error(status, code, listed, results)
            self.journal.set_plan_status(plan_id, status, error=error, kind="rollback_finished")
            run.outcome = RollbackResponse(plan_id=plan_id, status=status, undo=results)
        except Exception as exc:  # the plan must not stay rolling_back while the daemon lives
            log.exception("plan %s: rollback aborted", plan_id)
            with contextlib.suppress(Exception):
                self.journal.set_plan_status(plan_id, PlanStatus.ROLLBACK_FAILED, error={
                    "code": str(ErrorCode.INTERNAL_ERROR),
                    "message": f"rollback aborted: {exc}"}, kind="rollback_finished")
        finally:
            self._release(run)
            release_memory()

    def _rollback_interrupted(self, plan_id: str, left: list[int],
                              results: list[UndoResult]) -> None:
        """Journal a rollback stopped by the daemon's stop: what was undone, what was not."""
        steps = {s.idx: s.step_id for s in self.journal.steps(plan_id)}
        not_undone = [steps.get(i, f"#{i + 1}") for i in left]
        log.warning("plan %s: rollback stopped with %d step(s) not undone (%s); it is "
                    "interrupted and can be rolled back again", plan_id, len(left),
                    ", ".join(not_undone))
        self.journal.set_plan_status(plan_id, PlanStatus.INTERRUPTED, error={
            "code": str(ErrorCode.CANCELLED),
            "message": f"the rollback was stopped before {len(left)} step(s) were undone "
                       f"({', '.join(not_undone)}); run the rollback again to undo them",
            "detail": {"not_undone": not_undone,
                       "undone_actions": sum(1 for r in results if r.ok)}},
            kind="rollback_interrupted")

    def shutdown(self, grace_s: float) -> None:
        """Refuse new plans; let the running apply or rollback finish for ``grace_s``.

        Past the grace an apply is cancelled (its step's process group is killed) and
        undone; a rollback stops after the step it is undoing and leaves the plan
        ``interrupted``. Either way this returns only once the run's thread has ended,
        so the journal is never closed under it.
        """
        with self._lock:
            self._closing = True
            run = self._run
        if run is None or run.thread is None:
            return
        run.thread.join(timeout=grace_s)
        if run.thread.is_alive():
            if run.kind == ROLLBACK:
                log.warning("plan %s still rolling back after the %.0f s grace: stopping after "
                            "the step being undone", run.plan_id, grace_s)
            else:
                log.warning("plan %s still running after the %.0f s grace: cancelling and "
                            "undoing it", run.plan_id, grace_s)
            run.cancel.set()
            run.thread.join()


def release_memory() -> None:
    """Give freed heap back to the OS after a plan, so an idle daemon stays small.

    A plan allocates in worker threads (each with its own malloc arena); glibc keeps
    the freed pages until asked. ``malloc_trim`` is glibc-only: elsewhere it is skipped.
    """
    gc.collect()
    try:
        libc = ctypes.CDLL(None)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def _refuse_system_steps(specs: list[StepSpec]) -> None:
    needs_root = [s.step_id for s in specs if s.scope == "system" or (
        s.rollback_command is not None and s.rollback_scope == "system")]
    if needs_root:
        raise AnnaError(f"step(s) {', '.join(needs_root)} need root, and this per-user daemon "
                        "runs user-scope steps only; nothing was run",
                        code=ErrorCode.SCOPE_REQUIRES_ROOT, hint=SYSTEM_DAEMON_HINT,
                        detail={"steps": needs_root, "start": "annad.service"})


def _stream(run: _Run) -> Iterator[bytes]:
    # plan_finished (and anything after it) is held back until the run has released its
    # slot: a client that reads plan_finished and at once asks for the rollback must not
    # be told "plan … is running" (seen under load: the executor's thread had not ended)
    held: list[ExecEvent] = []
    while True:
        event = run.events.get()
        if event is None:
            for late in held:
                yield late.model_dump_json(exclude_defaults=False).encode("utf-8") + b"\n"
            return
        if held or event.type is ExecEventType.PLAN_FINISHED:
            held.append(event)
            continue
        yield event.model_dump_json(exclude_defaults=False).encode("utf-8") + b"\n"


def _rollback_error(status: PlanStatus, code: ErrorCode, listed: list[str],
                    results: list[UndoResult]) -> dict[str, object]:
    """The plan's error after a rollback that is not ``rolled_back``: what failed, the paths
    not as they were, or the steps whose undo nobody could check."""
    if status is PlanStatus.ROLLBACK_UNVERIFIED:
        return {"code": str(code), "message": "every undo action ran, but what these steps "
                "changed on the running system was undone by a rollback command Anna cannot "
                "check: " + ", ".join(listed[:20]), "detail": {
                    "unverified": listed,
                    "actions": [r.model_dump() for r in results if r.action in UNVERIFIED]}}
    return {"code": str(code), "message": "some undo actions failed" if not listed else
            "after the undo, these paths are not as they were before the plan: "
            + ", ".join(listed[:20]), "detail": {
                "failed": [r.model_dump() for r in results if not r.ok],
                **({"paths": listed} if listed else {})}}
