"""Running an approved plan step by step, and undoing it.

For each step, in order: journal "started" (on disk), save the undo record (file snapshots,
package and unit pre-state, the step's rollback command) as a flushed manifest, run the
command through the runner, journal the outcome. A step that fails, times out, is cancelled
or cannot be backed up stops the plan, and that step plus every step before it are undone in
reverse order. The same undo runs for ``rollback`` after success and after a crash, from the
manifests alone.

The undo record each step saves is taken and completed by :mod:`annad.execution.stepbackup`; the
steps, whose they are and the limits are the values of :mod:`annad.stepspec`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from anna_common.errors import AnnaError, ErrorCode
from anna_common.levels import RiskLevel
from anna_common.protocol.models import ExecEvent, ExecEventType, PlanStatus, StepStatus, UndoResult
from anna_common.risk.rules.base import AssessContext
from annad.backups import manifest as manifests
from annad.backups.backup import BackupRefused, BlobStore
from annad.backups.leftovers import clean_leftovers, remove_empty
from annad.backups.manifest import StepManifest
from annad.backups.trash import Trash
from annad.capture import commit
from annad.capture import step as capturing
from annad.capture.judge import Approval
from annad.capture.validate_content import ContentValidators
from annad.confine.orphans import PROCESS_FILE, kill_orphan_group, record_process
from annad.confine.runner import run_confined
from annad.confine.spec import unasked_identity
from annad.execution import backuprecord, rollback_capture
from annad.execution.execevents import event as _event
from annad.execution.execevents import why_failed as _why
from annad.execution.livekinds import live_kind
from annad.execution.runs_live import not_approved_live
from annad.execution.stepbackup import prepare, record_after, room_refusal, step_dir
from annad.execution.undo import UndoEnv
from annad.execution.undo_actions import identity_of
from annad.execution.undoing import backup_problems, compared, plan_steps, undo_steps
from annad.execution.undoonce import plan_manifests, restored_paths
from annad.execution.undostatus import after_failure
from annad.execution.verify import Checker, describe, no_expectations
from annad.execution.verifying import Owner, RunOptions, after_plan, after_step
from annad.stepspec import Limits, StepSpec, Who

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Mapping

    from anna_common.protocol.preview import FileChange
    from annad.confine.runner import RunResult
    from annad.execution.undo import Runner
    from annad.execution.verify import ExpectationSource

    PolicyHook = Callable[[str, AssessContext, int, str], str | None]
    from annad.journal.store import Journal

log = logging.getLogger(__name__)

@dataclass
class _Failure:
    code: ErrorCode
    message: str
    step_id: str
    exit_code: int | None = None


class Executor:
    """Runs plans and undoes them; one instance per daemon."""

    def __init__(self, *, journal: Journal, backups: Path, runner: Runner, limits: Limits,
                 root_daemon: bool, capture_userns: bool = True) -> None:
        self.journal = journal
        self.backups = backups
        self.runner = runner
        self.limits = limits
        self.root_daemon = root_daemon
        self.trash = Trash(backups.parent / "trash")  # captured layers, removed in background
        self.trash.resume()  # what a daemon that died left there
        self.capture_problem = capturing.availability(
            backups.parent, enabled=capture_userns, python=limits.confine_python)
        """Why this daemon cannot capture (None: it can): :mod:`annad.execution.runs_live`."""
        self.capture = self.capture_problem is None  # file steps run captured (capturing)
        self.context: Callable[[str], AssessContext] = lambda home: AssessContext(home=home)
        """The assessment context for a home (the service sets its telemetry's)."""
        self.policy: PolicyHook | None = None
        """Why the policy denies a command, for the judge of observed changes (None: none)."""
        self.previewed: Callable[[str, int], Mapping[str, FileChange] | None] = \
            lambda _plan, _index: None
        """What the person saw a step change (from the stored preview)."""
        self.validator_path: tuple[str, ...] = ()  # searched first for visudo, sshd…
        self.own_config: tuple[str, ...] = ()  # Anna's config files: never a step's to change
        self.expectations: ExpectationSource = no_expectations
        """The hook a preview fills in: what each step should leave (package versions,
        file hashes), checked after the step (:mod:`annad.execution.verify`)."""

    def captures(self, step: StepSpec) -> bool:
        """Whether ``step`` runs captured: a daemon that can, approved, not a live kind."""
        return self.capture and not step.confined and live_kind(step.command) is None

    def approval(self, plan_id: str, step: StepSpec, who: Who) -> Approval:
        """What the person approved for ``step``, as the judge of its change set needs it."""
        ctx, policy = self.context(who.home), self.policy
        system = step.scope != "user"
        validators = ContentValidators(who.identity(), root_read=system and self.root_daemon,
                                       extra_path=self.validator_path,
                                       python=self.limits.confine_python)
        return Approval(tier=RiskLevel(step.tier), system=system, ctx=ctx,
                        state_dir=str(self.backups.parent), policy=lambda command: policy(
                            command, ctx, who.uid, who.home) if policy is not None else None,
                        previewed=self.previewed(plan_id, step.index), validators=validators,
                        own_config=self.own_config)

    def step_dir(self, plan_id: str, index: int) -> Path:
        """Where a step's manifest lives."""
        return step_dir(self.backups, plan_id, index)

    def undo_env(self, plan_id: str, session: dict[str, str] | None = None) -> UndoEnv:
        """What undo needs for a plan."""
        capture = rollback_capture.RollbackCapture(
            self.backups / plan_id, self.limits, str(self.backups.parent), self.context,
            self.policy, self.capture_problem, self.trash, self.own_config)
        specs = plan_steps(self.journal, plan_id)
        env = UndoEnv(runner=self.runner, blobs=BlobStore(self.backups / plan_id / "blobs"),
                      timeout=self.limits.step_timeout_s, max_output=self.limits.max_output,
                      restrict_user_scope=self.root_daemon, session=session, capture=capture,
                      restored=restored_paths(plan_manifests(self.backups / plan_id)),
                      every_step_captured=bool(specs) and all(
                          self.captures(s) or s.confined for s in specs))
        env.progress.trash = self.trash  # a tree a step made goes at once, removed beside
        return env

    def backup_problems(self, plan_id: str, indexes: list[int], env: UndoEnv,
                        emit: Callable[[ExecEvent], None]) -> list[UndoResult]:
        """What is missing or damaged of these steps' backups, before any is undone."""
        return backup_problems(self.journal, self.backups / plan_id, indexes, emit, env)

    def compared(self, plan_id: str, env: UndoEnv, results: list[UndoResult]
                 ) -> list[UndoResult]:
        """The comparison at the end of an undo, journalled (:mod:`annad.execution.undoing`)."""
        return compared(self.journal, plan_id, env, results)

    # ------------------------------------------------------------------ execute

    def run(self, plan_id: str, steps: list[StepSpec], who: Who, emit: Callable[[ExecEvent], None],
            cancel: threading.Event, options: RunOptions | None = None) -> PlanStatus:
        """Execute ``steps``; on any failure undo what ran. Returns the final status."""
        options = options or RunOptions()
        total = len(steps)
        # an early refusal on the named targets' sizes (a captured step copies them up into
        # its upper layer on the state disk first): cheaper than a run that cannot land
        refusal = room_refusal(steps, who, backups=self.backups, limits=self.limits)
        if refusal is not None:
            return self._refuse(plan_id, refusal, total, emit)
        self.journal.set_plan_status(plan_id, PlanStatus.RUNNING, kind="plan_started")
        emit(_event(ExecEventType.PLAN_STARTED, plan_id, total=total, status="running",
                    message=f"running {total} step(s)"))
        started: list[int] = []
        failure: _Failure | None = None
        try:
            for step in steps:
                if cancel.is_set():
                    failure = _Failure(ErrorCode.CANCELLED, "cancelled before this step",
                                       step.step_id)
                    break
                failure = self._run_step(plan_id, step, total, who, emit, cancel, started,
                                         options)
                if failure is not None:
                    break
            if failure is None and options.verify:
                failure = self._verify_plan(plan_id, who, emit, options)
        except Exception as exc:  # a bug must still leave the machine as it was
            log.exception("executor failed in plan %s", plan_id)
            failure = _Failure(ErrorCode.INTERNAL_ERROR, f"internal error: {exc}", "")
        if failure is None:
            self.journal.set_plan_status(plan_id, PlanStatus.SUCCEEDED)
            emit(_event(ExecEventType.PLAN_FINISHED, plan_id, total=total, status="succeeded",
                        message="all steps succeeded"))
            return PlanStatus.SUCCEEDED
        return self._fail(plan_id, failure, started, total, emit)

    def _refuse(self, plan_id: str, why: str, total: int,
                emit: Callable[[ExecEvent], None]) -> PlanStatus:
        """End a plan whose backups cannot be written, before anything ran."""
        log.warning("plan %s refused: %s", plan_id, why)
        error = {"code": str(ErrorCode.BACKUP_REFUSED), "message": why,
                 "detail": {"step_id": None, "undo_ok": True, "ran": 0}}
        self.journal.set_plan_status(plan_id, PlanStatus.FAILED, error=error,
                                     kind="plan_backup_refused")
        emit(_event(ExecEventType.PLAN_FINISHED, plan_id, total=total, status="failed",
                    code=str(ErrorCode.BACKUP_REFUSED), message=why + "; nothing was run"))
        return PlanStatus.FAILED

    def _fail(self, plan_id: str, failure: _Failure, started: list[int], total: int,
              emit: Callable[[ExecEvent], None]) -> PlanStatus:
        env = self.undo_env(plan_id)
        results = self.undo(plan_id, list(reversed(started)), emit, env=env)
        results += self.compared(plan_id, env, results)
        end = after_failure(results, failure.code)
        error = {"code": str(end.code), "message": failure.message,
                 "detail": {"step_id": failure.step_id, "exit_code": failure.exit_code,
                            "cause": str(failure.code), **end.detail}}
        self.journal.set_plan_status(plan_id, end.status, error=error)
        # a warning for the operator (journalctl -u annad -p warning, with its PLAN_ID)
        log.warning("plan %s %s at step %s: %s", plan_id, end.status, failure.step_id,
                    failure.message)
        emit(_event(ExecEventType.PLAN_FINISHED, plan_id, total=total, status=str(end.status),
                    code=str(end.code), message=failure.message + end.words))
        return end.status

    def _verify_plan(self, plan_id: str, who: Who, emit: Callable[[ExecEvent], None],
                     options: RunOptions) -> _Failure | None:
        """The plan's own verify commands; a failure undoes the plan unless kept."""
        owner = Owner(identity=who.identity(), home=who.home, session=who.session,
                      timeout_s=self.limits.step_timeout_s, python=self.limits.confine_python)
        failures = after_plan(self.journal, plan_id, options.verify, owner, emit)
        if not failures or options.keep_on_verify_fail:
            return None
        first = failures[0]
        return _Failure(ErrorCode.VERIFY_FAILED, f"verify command {first.step_id} failed: "
                        + describe(first), first.step_id)

    def _verify_step(self, plan_id: str, step: StepSpec, total: int, who: Who,
                     emit: Callable[[ExecEvent], None], record: StepManifest,
                     result: RunResult, options: RunOptions) -> _Failure | None:
        """After a step exited 0: its postconditions. Journals the step's end."""
        checker = Checker(runner=self.runner, identity=identity_of(record), env=who.session)
        failures = after_step(self.journal, plan_id, (step.step_id, step.command), checker,
                              self.expectations(plan_id, step.index), emit)
        status = StepStatus.VERIFY_FAILED if failures else StepStatus.SUCCEEDED
        why = "; ".join(describe(f) for f in failures)[:2000] or None
        self.journal.step_finished(plan_id, step.index, step.step_id, status,
                                   result.exit_code, result.output,
                                   duration_ms=round(result.duration_ms, 1),
                                   **({"reason": why} if why else {}))
        emit(_event(ExecEventType.STEP_FINISHED, plan_id, step.step_id, step.index + 1, total,
                    status=str(status), exit_code=result.exit_code, output=result.output,
                    **({"code": str(ErrorCode.VERIFY_FAILED), "message": why} if why else {})))
        if not failures or options.keep_on_verify_fail:
            return None
        return _Failure(ErrorCode.VERIFY_FAILED, f"step {step.step_id} exited 0 but did not "
                        f"do what it should: {why}", step.step_id, result.exit_code)

    def _run_step(self, plan_id: str, step: StepSpec, total: int, who: Who,
                  emit: Callable[[ExecEvent], None], cancel: threading.Event,
                  started: list[int], options: RunOptions) -> _Failure | None:
        number = step.index + 1
        captured = self.captures(step)
        # a captured step lands nothing before its backups' record is flushed, which flushes
        # this one too (the journal is written in order): no flush of its own
        self.journal.step_started(plan_id, step.index, step.step_id, durable=not captured)
        emit(_event(ExecEventType.STEP_STARTED, plan_id, step.step_id, number, total,
                    status="running", message=step.command))
        if (refused := not_approved_live(step, self.capture_problem)) is not None:
            return self._step_failed(plan_id, step, total, emit, None, refused,
                                     ErrorCode.CAPTURE_UNAVAILABLE)
        try:
            record = prepare(plan_id, step, who, backups=self.backups, limits=self.limits,
                             runner=self.runner, predict=not captured)
            self._record_backup(plan_id, record)
        except BackupRefused as exc:
            return self._step_failed(plan_id, step, total, emit, None, str(exc),
                                     ErrorCode.BACKUP_REFUSED)
        started.append(step.index)
        user = step.scope == "user"

        def output(chunk: str) -> None:
            emit(_event(ExecEventType.STEP_OUTPUT, plan_id, step.step_id, number, total,
                        output=chunk))

        step_dir = self.step_dir(plan_id, step.index)

        def spawned(pid: int) -> None:
            # so a restarted daemon can stop this step if the daemon dies while it runs; no
            # fsync: a machine crash ends the process too, a daemon crash keeps page cache
            record_process(step_dir / PROCESS_FILE, pid)  # step_dir is created on demand

        if captured:
            outcome = capturing.run(capturing.StepRun(
                step=step, who=who, directory=step_dir, blobs_dir=self.backups / plan_id /
                "blobs", limits=self.limits, on_output=output, on_spawn=spawned,
                cancel=cancel, trash=self.trash, journal=self.journal.path,
                recorded=lambda saved: self._record_backup(plan_id, saved, durable=False)),
                record, self.approval(plan_id, step, who))
            result = outcome.result
            if outcome.refusal is not None:
                (step_dir / PROCESS_FILE).unlink(missing_ok=True)
                remove_empty(step_dir, self.backups)
                return self._step_failed(plan_id, step, total, emit, result, outcome.refusal,
                                         outcome.code)
        elif step.confined:
            identity, root_read = unasked_identity(identity_of(record), step.command,
                                                   root_allowed=not user)
            result = run_confined(
                step.command, identity, root_read=root_read,
                timeout=self.limits.step_timeout_s, max_output=self.limits.max_output,
                session=who.session, cwd="/" if root_read else who.home, on_output=output,
                cancel=cancel, on_spawn=spawned, python=self.limits.confine_python)
        else:
            # a root step's HOME is the owner's (the one Anna judged ``~`` to be), never root's
            result = self.runner.run_shell(
                step.command, timeout=self.limits.step_timeout_s,
                max_output=self.limits.max_output,
                identity=identity_of(record) if user else None, session=who.session,
                cwd=who.home if user else "/", on_output=output, cancel=cancel,
                on_spawn=spawned, home=who.home)
        (step_dir / PROCESS_FILE).unlink(missing_ok=True)
        remove_empty(step_dir, self.backups)  # a step with nothing to undo leaves no directory
        if not result.ok:
            code, why = _why(result)
            return self._step_failed(plan_id, step, total, emit, result, why, code)
        record_after(plan_id, step.index, record, backups=self.backups, limits=self.limits,
                     runner=self.runner)
        return self._verify_step(plan_id, step, total, who, emit, record, result, options)

    def _record_backup(self, plan_id: str, record: StepManifest, *, durable: bool = True
                       ) -> None:
        """The journal's record of what the step's backups hold, durable before any of the
        step lands (:mod:`annad.execution.backuprecord`; ``durable=False``: a captured
        step's, flushed with its backups by :func:`annad.capture.commit.prepare`);
        BackupRefused when it cannot be."""
        try:
            data = (self.step_dir(plan_id, record.index) / manifests.MANIFEST).read_bytes()
        except FileNotFoundError:
            return  # nothing to undo was saved
        try:
            self.journal.backup_recorded(plan_id, record.step_id,
                                         backuprecord.body(record, data), durable=durable)
        except AnnaError as exc:  # a full state disk: the step does not run
            raise BackupRefused(f"cannot record the backups in the journal: {exc}") from None

    def _step_failed(self, plan_id: str, step: StepSpec, total: int,
                     emit: Callable[[ExecEvent], None], result: RunResult | None, why: str,
                     code: ErrorCode) -> _Failure:
        output = result.output if result is not None else why
        exit_code = result.exit_code if result is not None else None
        self.journal.step_finished(plan_id, step.index, step.step_id, StepStatus.FAILED,
                                   exit_code, output, reason=why)
        emit(_event(ExecEventType.STEP_FINISHED, plan_id, step.step_id, step.index + 1, total,
                    status="failed", exit_code=exit_code, output=output, code=str(code),
                    message=why))
        return _Failure(code, f"step {step.step_id} failed: {why}", step.step_id, exit_code)

    def stop_orphans(self, plan_id: str) -> list[int]:
        """Kill step processes a dead daemon left running (before anything is undone), finish
        the commits it left half done, then remove the temporary files it left (partial
        blobs, half-written restore copies). Returns the steps whose commit it finished
        (their step ran to its end and all it changed landed)."""
        killed, finished = [], []
        for path in sorted((self.backups / plan_id).glob(f"*/{PROCESS_FILE}")):
            try:
                info = json.loads(path.read_text())
                pid, start = int(info["pid"]), int(info["start"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if kill_orphan_group(pid, start):
                log.warning("plan %s: killed step process group %d left by a dead daemon",
                            plan_id, pid)
                killed.append(pid)
        plan_dir = self.backups / plan_id  # steps' captures, then their rollback commands'
        for directory in sorted(plan_dir.glob("[0-9][0-9][0-9]")) + sorted(
                plan_dir.glob(f"[0-9][0-9][0-9]/{rollback_capture.DIRECTORY}")):
            if commit.recover(directory):
                log.warning("plan %s: finished the commit of step %s a dead daemon left half "
                            "done", plan_id, directory.name)
                if directory.name.isdigit():  # a step's own, not its rollback command's
                    finished.append(int(directory.name))
            capturing.discard(directory, self.trash)  # a capture that never reached its commit
        for leftover in clean_leftovers(self.backups / plan_id):
            log.warning("plan %s: removed %s left by a dead daemon", plan_id, leftover)
        log.debug("plan %s: killed %d orphaned step process group(s)", plan_id, len(killed))
        return finished

    # ------------------------------------------------------------------ undo

    def undo(self, plan_id: str, indexes: list[int], emit: Callable[[ExecEvent], None],
             session: dict[str, str] | None = None, env: UndoEnv | None = None
             ) -> list[UndoResult]:
        """Undo the given steps in the order given; every result is journalled.

        ``env``: one rollback undoing its steps one call at a time passes the same env, so
        what an earlier call restored is known to be Anna's own doing, not a conflict.
        """
        return undo_steps(self.journal, self.backups / plan_id, indexes, emit,
                          env or self.undo_env(plan_id, session))
