"""Running an approved plan step by step, and undoing it.

For each step, in order: journal "started" (on disk), save the undo record
(file snapshots, package and unit pre-state, the step's rollback command) as a
flushed manifest, run the command through the runner, journal the outcome. A
step that fails, times out, is cancelled or cannot be backed up stops the plan,
and that step plus every step before it are undone in reverse order. The same
undo runs for ``rollback`` after success and after a crash, from the manifests
alone.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from anna_common.errors import ErrorCode
from anna_common.protocol import ExecEvent, ExecEventType, PlanStatus, StepStatus, UndoResult
from annad import manifest as manifests
from annad import statefs
from annad.backup import BackupRefused, BlobStore, Budget, snapshot, snapshot_listing
from annad.confine import unasked_identity
from annad.credentials import Identity
from annad.identity import HashBudget
from annad.identity import record as record_identity
from annad.journal_rows import UndoRow
from annad.leftovers import clean_leftovers, remove_empty
from annad.manifest import StepManifest, printable
from annad.prestate import package_states, query_packages, unit_states
from annad.runner import kill_orphan_group, process_start_time, run_confined
from annad.targets import snapshot_targets
from annad.undo import UndoEnv, identity_of, undo_step
from annad.undofiles import after_tree, record_new_entries

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from annad.journal import Journal
    from annad.runner import RunResult
    from annad.undo import Runner

log = logging.getLogger(__name__)

PROCESS_FILE = "process.json"
"""In a step's backup dir: pid and start time of its running process."""

@dataclass(frozen=True, slots=True)
class StepSpec:
    """One step as the daemon assessed it."""

    index: int
    step_id: str
    command: str
    scope: str
    """``user`` or ``system`` by the daemon's own assessment."""
    rollback_command: str | None = None
    rollback_scope: str = "user"
    confined: bool = False
    """Runs without its own confirmation (INFO): in the runner's confinement, like a check."""
    uncaptured: bool = False
    """The assessment says the step writes what Anna cannot see (``uncaptured_write``)."""


@dataclass(frozen=True, slots=True)
class Who:
    """Whose user-scope commands these are."""

    uid: int
    gid: int
    groups: tuple[int, ...]
    user: str
    home: str
    session: dict[str, str] = field(default_factory=dict)

    def identity(self) -> Identity:
        """The runner identity of these user-scope commands."""
        return Identity(uid=self.uid, gid=self.gid, groups=self.groups, home=self.home,
                        user=self.user)


@dataclass
class Limits:
    """Timeouts and caps from the settings."""

    step_timeout_s: float
    max_output: int
    backup_max_bytes: int
    backup_max_files: int
    confine_python: str | None = None
    """Interpreter of the confinement helper (settings ``confine_python``)."""


@dataclass
class _Failure:
    code: ErrorCode
    message: str
    step_id: str
    exit_code: int | None = None


class Executor:
    """Runs plans and undoes them; one instance per daemon."""

    def __init__(self, *, journal: Journal, backups: Path, runner: Runner, limits: Limits,
                 root_daemon: bool) -> None:
        self.journal = journal
        self.backups = backups
        self.runner = runner
        self.limits = limits
        self.root_daemon = root_daemon

    def step_dir(self, plan_id: str, index: int) -> Path:
        """Where a step's manifest lives."""
        return self.backups / plan_id / f"{index:03d}"

    def undo_env(self, plan_id: str, session: dict[str, str] | None = None) -> UndoEnv:
        """What undo needs for a plan."""
        return UndoEnv(runner=self.runner, blobs=BlobStore(self.backups / plan_id / "blobs"),
                       timeout=self.limits.step_timeout_s, max_output=self.limits.max_output,
                       restrict_user_scope=self.root_daemon, session=session)

    # ------------------------------------------------------------------ execute

    def run(self, plan_id: str, steps: list[StepSpec], who: Who, emit: Callable[[ExecEvent], None],
            cancel: threading.Event) -> PlanStatus:
        """Execute ``steps``; on any failure undo what ran. Returns the final status."""
        total = len(steps)
        refusal = self._room_refusal(steps, who)
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
                failure = self._run_step(plan_id, step, total, who, emit, cancel, started)
                if failure is not None:
                    break
        except Exception as exc:  # a bug must still leave the machine as it was
            log.exception("executor failed in plan %s", plan_id)
            failure = _Failure(ErrorCode.INTERNAL_ERROR, f"internal error: {exc}", "")
        if failure is None:
            self.journal.set_plan_status(plan_id, PlanStatus.SUCCEEDED)
            emit(_event(ExecEventType.PLAN_FINISHED, plan_id, total=total, status="succeeded",
                        message="all steps succeeded"))
            return PlanStatus.SUCCEEDED
        return self._fail(plan_id, failure, started, total, emit)

    def _room_refusal(self, steps: list[StepSpec], who: Who) -> str | None:
        """Why the backups of this plan cannot fit on the state disk, or None.

        Checked before anything runs, with the files as they are now (a step that grows
        a file is checked again when its own backup is taken, see ``BlobStore.put``)."""
        size, files = 0, 0
        for step in steps:
            user = step.scope == "user"
            try:
                targets, _ = snapshot_targets(step.command, home=who.home,
                                              cwd=who.home if user else "/")
            except Exception:  # the step's own backup (in _prepare) will say why
                log.debug("no targets known for step %s before the run", step.step_id)
                continue
            for target in targets:
                more_size, more_files = _existing_size(target.path, tree=target.tree,
                                                       limit=self.limits.backup_max_files)
                size, files = size + more_size, files + more_files
        problem = statefs.room_problem(self.backups, size, files)
        return None if problem is None else f"cannot back up this plan's targets: {problem}"

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
        results = self.undo(plan_id, list(reversed(started)), emit)
        undo_ok = all(r.ok for r in results)
        if failure.code is ErrorCode.CANCELLED:
            status = PlanStatus.ROLLED_BACK if undo_ok else PlanStatus.ROLLBACK_FAILED
        else:
            status = PlanStatus.FAILED if undo_ok else PlanStatus.ROLLBACK_FAILED
        code = failure.code if undo_ok else ErrorCode.ROLLBACK_FAILED
        error = {"code": str(code), "message": failure.message,
                 "detail": {"step_id": failure.step_id, "exit_code": failure.exit_code,
                            "cause": str(failure.code), "undo_ok": undo_ok}}
        self.journal.set_plan_status(plan_id, status, error=error)
        emit(_event(ExecEventType.PLAN_FINISHED, plan_id, total=total, status=str(status),
                    code=str(code), message=failure.message + (
                        "; the plan was undone" if undo_ok else "; undoing it failed in part")))
        return status

    def _run_step(self, plan_id: str, step: StepSpec, total: int, who: Who,
                  emit: Callable[[ExecEvent], None], cancel: threading.Event,
                  started: list[int]) -> _Failure | None:
        number = step.index + 1
        self.journal.step_started(plan_id, step.index, step.step_id)
        emit(_event(ExecEventType.STEP_STARTED, plan_id, step.step_id, number, total,
                    status="running", message=step.command))
        try:
            record = self._prepare(plan_id, step, who)
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
            started_at = process_start_time(pid)
            if started_at is not None:
                step_dir.mkdir(parents=True, exist_ok=True, mode=0o700)  # created on demand
                (step_dir / PROCESS_FILE).write_text(json.dumps({"pid": pid,
                                                                 "start": started_at}))

        if step.confined:
            identity, root_read = unasked_identity(identity_of(record), step.command,
                                                   root_allowed=not user)
            result = run_confined(
                step.command, identity, root_read=root_read,
                timeout=self.limits.step_timeout_s, max_output=self.limits.max_output,
                session=who.session, cwd="/" if root_read else who.home, on_output=output,
                cancel=cancel, on_spawn=spawned, python=self.limits.confine_python)
        else:
            # a root step's HOME is the owner's home: the one Anna judged ``~`` to be and
            # backed up, never the daemon's own (unset under systemd, /root otherwise)
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
        self._record_after(plan_id, step.index, record)
        self.journal.step_finished(plan_id, step.index, step.step_id, StepStatus.SUCCEEDED,
                                   result.exit_code, result.output,
                                   duration_ms=round(result.duration_ms, 1))
        emit(_event(ExecEventType.STEP_FINISHED, plan_id, step.step_id, number, total,
                    status="succeeded", exit_code=result.exit_code, output=result.output))
        return None

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

    def _prepare(self, plan_id: str, step: StepSpec, who: Who) -> StepManifest:
        """Snapshot the step's write targets and record pre-state; flush the manifest."""
        user = step.scope == "user"
        record = StepManifest(
            plan_id=plan_id, index=step.index, step_id=step.step_id,
            scope="user" if user else "system", uid=who.uid, gid=who.gid,
            groups=list(who.groups), user=who.user, home=who.home, session=who.session,
            rollback_command=step.rollback_command,
            rollback_scope="user" if step.rollback_scope == "user" else "system",
            uncaptured=step.uncaptured)
        targets, notes = snapshot_targets(step.command, home=who.home,
                                          cwd=who.home if user else "/")
        if step.uncaptured:
            notes.append("Anna cannot back up what this step writes (code it runs writes "
                         "files Anna cannot see)")
        record.notes = notes
        blobs = BlobStore(self.backups / plan_id / "blobs")
        budget = Budget(self.limits.backup_max_bytes, self.limits.backup_max_files)
        try:
            for target in targets:
                if target.new_only:
                    record.targets.append(snapshot_listing(target.path, budget))
                    continue
                record.targets.extend(snapshot(target.path, blobs, budget, tree=target.tree,
                                               follow=target.follow))
        except OSError as exc:  # a name the kernel refuses, a vanished directory...
            raise BackupRefused("cannot back up what this step writes: "
                                + printable(str(exc))) from None
        blobs.flush()
        record.packages = package_states(step.command, self.runner)
        record.units = unit_states(step.command, self.runner, identity=identity_of(record),
                                   env=who.session)
        directory = self.step_dir(plan_id, step.index)
        if record.targets or record.packages or record.units or record.rollback_command or \
                record.notes:
            manifests.save(directory, record)  # flushed to disk before the step runs
        return record

    def _record_after(self, plan_id: str, index: int, record: StepManifest) -> None:
        """After success: what the step left at each target (undo leaves what someone
        changed since) and what the package database holds now (undo removes only the new)."""
        if not record.packages and not record.targets:
            return
        budget = HashBudget(self.limits.backup_max_bytes, self.limits.backup_max_files)
        for target in record.targets:
            if target.new_only:
                record_new_entries(target, budget)
            else:
                target.after = record_identity(target.path, tree=after_tree(target),
                                               budget=budget)
        for state in record.packages:
            try:
                state.after = query_packages(self.runner, state.options)
            except BackupRefused:
                log.warning("cannot record package state after step %d of %s", index, plan_id)
        # package state after the step decides what undo removes: flushed like the snapshot
        manifests.save(self.step_dir(plan_id, index), record, durable=bool(record.packages))

    def stop_orphans(self, plan_id: str) -> list[int]:
        """Kill step processes a dead daemon left running (before anything is undone), then
        remove the temporary files it left (partial blobs, half-written restore copies)."""
        killed = []
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
        for leftover in clean_leftovers(self.backups / plan_id):
            log.warning("plan %s: removed %s left by a dead daemon", plan_id, leftover)
        return killed

    # ------------------------------------------------------------------ undo

    def undo(self, plan_id: str, indexes: list[int], emit: Callable[[ExecEvent], None],
             session: dict[str, str] | None = None, env: UndoEnv | None = None
             ) -> list[UndoResult]:
        """Undo the given steps in the order given; every result is journalled.

        ``env``: one rollback undoing its steps one call at a time passes the same env, so
        what an earlier call restored is known to be Anna's own doing, not a conflict.
        """
        env = env or self.undo_env(plan_id, session)
        results: list[UndoResult] = []
        for index in indexes:
            try:
                record = manifests.load(self.step_dir(plan_id, index))
            except (OSError, ValueError) as exc:
                results.append(UndoResult(step_id=f"#{index + 1}", action="restore", ok=False,
                                          message=f"cannot read the undo record: {exc}"))
                continue
            if record is None:
                continue  # the step never got as far as its snapshot: nothing ran
            emit(_event(ExecEventType.UNDO_STARTED, plan_id, record.step_id, index + 1,
                        message=f"undoing {record.step_id}"))
            step_results = undo_step(record, env)
            for result in step_results:
                self.journal.add_undo(plan_id, UndoRow(result.step_id, result.action,
                                                       result.target, result.ok, result.message))
            ok = all(r.ok for r in step_results)
            self.journal.set_step_status(plan_id, index,
                                         StepStatus.UNDONE if ok else StepStatus.UNDO_FAILED)
            emit(_event(ExecEventType.UNDO_FINISHED, plan_id, record.step_id, index + 1,
                        status=str(StepStatus.UNDONE if ok else StepStatus.UNDO_FAILED),
                        message="; ".join(f"{r.action} {r.target}: {r.message}"
                                          for r in step_results)[:4000]))
            results.extend(step_results)
        return results


def _existing_size(path: str, *, tree: bool, limit: int) -> tuple[int, int]:
    """Bytes and files a backup of ``path`` would copy now (symlinks not followed below
    the top; at most ``limit`` files counted: a bigger tree is refused by the budget)."""
    try:
        info = Path(path).stat()
    except OSError:
        return 0, 0
    if stat.S_ISREG(info.st_mode):
        return info.st_size, 1
    if not (tree and stat.S_ISDIR(info.st_mode)):
        return 0, 1
    size, files = 0, 1
    for top, _dirs, names in os.walk(path):
        for name in names:
            with contextlib.suppress(OSError):
                child = (Path(top) / name).lstat()
                if stat.S_ISREG(child.st_mode):
                    size += child.st_size
            files += 1
            if files > limit:
                return size, files
    return size, files


def _why(result: RunResult) -> tuple[ErrorCode, str]:
    if result.error:
        return ErrorCode.EXECUTION_FAILED, result.error
    if result.timed_out:
        return ErrorCode.STEP_TIMEOUT, "the step ran past its timeout and was killed"
    if result.cancelled:
        return ErrorCode.CANCELLED, "cancelled"
    return ErrorCode.EXECUTION_FAILED, f"exited with status {result.exit_code}"


def _event(kind: ExecEventType, plan_id: str, step_id: str | None = None,
           index: int | None = None, total: int | None = None, **fields: object) -> ExecEvent:
    return ExecEvent(type=kind, plan_id=plan_id, step_id=step_id, index=index, total=total,
                     ts=time.time(), **fields)
