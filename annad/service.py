"""PlanService: the one place the daemon's behaviour lives; routes only call it.

The service trusts nothing it receives. A submitted plan is re-parsed,
re-validated and re-classified with the daemon's own context (its telemetry and
the caller's home); execution is accepted only for the digest it returned at
submit and only with the confirmations the *daemon's* risk tier demands. The
caller is the :class:`~annad.peer.Peer` the kernel reported for the connection.

State machine: ``answered`` (no steps: nothing to run) is final at submit;
``submitted → dry_run`` (shown, not run); ``submitted | dry_run → running → succeeded |
failed | rolled_back | rollback_failed | rollback_incomplete``; ``succeeded | interrupted |
rollback_failed | rollback_incomplete → rolling_back → rolled_back | rollback_failed |
rollback_incomplete | interrupted`` (a rollback stopped by the daemon's stop);
``running | rolling_back`` at start-up → ``interrupted``; ``submitted | dry_run → refused``
when another plan is running. One plan runs (or rolls back) at a time.
"""

from __future__ import annotations

import dataclasses
import hmac
import logging
import os
import time
from typing import TYPE_CHECKING, Any

from anna_common.distro import context_from_telemetry
from anna_common.errors import AnnaError, ErrorCode, PlanError
from anna_common.protocol.models import (
    API_VERSION,
    AuditReport,
    ChecksRequest,
    ChecksResponse,
    DaemonMode,
    GcRequest,
    GcResponse,
    Health,
    JudgeResponse,
    PlanList,
    PlanRecord,
    PlanStatus,
    SessionEnv,
    SubmitResponse,
    TelemetryResponse,
)
from annad import __version__, policy_load
from annad.access import Access
from annad.backups.statefs import state_problem
from annad.confine import loopback
from annad.execution import approved, retention, revision
from annad.execution.aftercare import Aftercare
from annad.execution.checks import run_checks
from annad.execution.confirmations import check_confirmations, check_rollback_word
from annad.execution.recovery import StartupRecovery
from annad.execution.runs import RunManager
from annad.execution.runs_live import mark_live
from annad.journal import audit, summaries
from annad.journal.records import bound_row, home_of, plan_record, submitted_row
from annad.peer import Peer
from annad.policy_load import PolicyStore, asked_checks, journal_fields, judge
from annad.preview import engine
from annad.telemetry.processes import for_caller

if TYPE_CHECKING:
    from collections.abc import Iterator

    from anna_common.findings import AnnotatedPlan
    from anna_common.protocol.models import ExecuteRequest, RollbackRequest, RollbackResponse
    from anna_common.protocol.policy import PolicyCheckRequest, PolicyCheckResponse, PolicyView
    from anna_common.protocol.preview import PlanPreview
    from anna_common.risk.rules.base import AssessContext
    from annad.config import DaemonSettings
    from annad.execution.executor import Executor
    from annad.execution.undo import Runner
    from annad.journal.store import Journal
    from annad.telemetry.source import TelemetryProvider

log = logging.getLogger(__name__)


class PlanService:
    """Health, telemetry, plans, execution, rollback and audit for one daemon."""

    def __init__(self, settings: DaemonSettings, *, journal: Journal, executor: Executor,
                 telemetry: TelemetryProvider, runner: Runner,
                 policy: PolicyStore | None = None) -> None:
        self.settings = settings
        self.policy = policy or PolicyStore(settings.policy_file,
                                            user_files=settings.user_policy)
        self.mode = settings.mode
        self.journal = journal
        self.telemetry_provider = telemetry
        self.runner = runner
        self.runs = RunManager(journal=journal, executor=executor, user_mode=self.user_mode)
        self.capture_problem = executor.capture_problem
        """Why this daemon cannot capture its steps (its file steps are then HIGH)."""
        # what a step really changed is judged with the same context and policy as its plan
        executor.context = self.context
        executor.policy = self._policy_denies
        executor.previewed = lambda plan_id, index: engine.previewed_files(journal, plan_id,
                                                                           index)
        self.retention = retention.Retention(
            journal=journal, backups=executor.backups,
            policy=retention.Policy(keep_days=settings.backup_keep_days,
                                    max_bytes=settings.backup_keep_max_bytes))
        self.runs.after_run = self.auto_gc
        self.runs.backups_gone = lambda plan_id: retention.gone(journal, plan_id)
        self.started_at = time.monotonic()
        self.owner_uid = os.geteuid()
        self.access = Access(journal=journal, user_mode=self.user_mode,
                             owner_uid=self.owner_uid, group=settings.group)
        self.recovery = StartupRecovery(journal, executor)
        self.aftercare = Aftercare(settings, journal=journal, runner=runner, runs=self.runs,
                                   system=not self.user_mode)

    @property
    def user_mode(self) -> bool:
        """A per-user daemon (user-scope steps only, owner only)."""
        return self.mode is DaemonMode.USER

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Recover from a crash (:mod:`annad.execution.recovery`) and start telemetry."""
        self.recovery.begin()
        self.auto_gc()
        self.aftercare.start()
        self.recovery.report_interrupted()
        try:
            self.telemetry_provider.start()
        except Exception:  # telemetry must never keep plans from working
            log.exception("telemetry failed to start")

    def state_problem(self) -> str | None:
        """What the state disk lacks (health and ``annactl doctor`` show it), or None.

        Observed, not inferred from the reserve alone: with the reserve in place and the
        rest of the disk full, SQLite cannot grow the journal and every submit is refused,
        so health says so too."""
        return self.recovery.problem() or state_problem(self.journal.path.parent)

    def auto_gc(self) -> None:
        """The automatic retention policy (plans that can be rolled back are kept)."""
        retention.auto(self.retention, self.runs)

    def gc(self, peer: Peer | None, request: GcRequest) -> GcResponse:
        """``POST /v1/gc``: the caller's plans (root: everyone's), or the named ones."""
        peer = self.access.authorised(peer)
        if request.plan_ids:  # each must be the caller's (else PLAN_NOT_FOUND), by full id
            owned = [self.access.owned(peer, plan_id).plan_id
                     for plan_id in dict.fromkeys(request.plan_ids)]
            request = request.model_copy(update={"plan_ids": owned})
        return retention.collect(self.retention, self.runs, request, by_uid=peer.uid,
                                 now=time.time(), uid=None if peer.uid == 0 else peer.uid)

    def drain(self) -> None:
        """On a stop, while connections still serve: refuse new plans, let the running apply
        or rollback end (``stop_grace_s``, then cancelled or stopped; see ``RunManager``)."""
        self.runs.shutdown(self.settings.stop_grace_s)

    def stop(self) -> None:
        """Drain (if not done yet), then stop telemetry and close the journal."""
        self.aftercare.stop()
        self.runs.shutdown(self.settings.stop_grace_s)
        self.recovery.stop()
        try:
            self.telemetry_provider.stop()
        except Exception:
            log.exception("telemetry failed to stop")
        self.journal.close()

    def busy(self) -> bool:
        """A plan is running or rolling back."""
        return self.runs.current() is not None

    # ------------------------------------------------------------------ identity

    def authorise(self, peer: Peer | None) -> Peer:
        """The caller, if it may change the system (recipes and the queue ask first)."""
        return self.access.authorised(peer)

    # ------------------------------------------------------------------ reads

    def health(self, peer: Peer | None) -> Health:
        """``GET /v1/health``."""
        peer = self.access.served(peer)
        current = self.runs.current()
        return Health(api_version=API_VERSION, daemon_version=__version__, mode=self.mode,
                      caller_uid=peer.uid, caller_authorised=self.access.may_change(peer),
                      pid=os.getpid(), uptime_s=round(time.monotonic() - self.started_at, 3),
                      running_plan=current, state_problem=self.state_problem(),
                      capture_problem=self.capture_problem,
                      network_problem=loopback.problem() if os.geteuid() == 0 else None)

    def telemetry(self, peer: Peer | None, session: SessionEnv | None, *, fresh: bool
                  ) -> TelemetryResponse:
        """``GET /v1/telemetry``: other users' command lines only for root."""
        peer = self.access.served(peer)
        snapshot, age = self.telemetry_provider.get(session, fresh=fresh)
        if peer.uid != 0:
            snapshot = snapshot.model_copy(
                update={"processes": for_caller(snapshot.processes, peer.uid)})
        return TelemetryResponse(telemetry=snapshot, age_s=round(age, 3))

    def context(self, home: str) -> AssessContext:
        """The daemon's own assessment context: its telemetry and the caller's home."""
        snapshot, _ = self.telemetry_provider.get(None, fresh=False)
        ctx = context_from_telemetry(snapshot, home)
        if self.settings.distro:
            ctx = dataclasses.replace(ctx, distro=self.settings.distro)
        return ctx

    def get(self, peer: Peer | None, plan_id: str) -> PlanRecord:
        """``GET /v1/plans/{id}``."""
        record = plan_record(self.access.owned(self.access.authorised(peer), plan_id), self.journal)
        return self.aftercare.record(record)

    def list(self, peer: Peer | None, *, limit: int = 200, before: str | None = None
             ) -> PlanList | Iterator[bytes]:
        """``GET /v1/plans``: the caller's plans (root: everyone's), newest first, ``limit``
        (0: all) older than plan ``before``; a long list as the same document written a page
        at a time (:mod:`annad.journal.summaries`), the caller checked before the first byte."""
        peer = self.access.authorised(peer)
        if limit < 0:
            raise AnnaError("limit must be 0 (all) or more", code=ErrorCode.BAD_REQUEST)
        if before is not None:
            before = self.access.owned(peer, before).plan_id
        uid = None if peer.uid == 0 else peer.uid
        if limit == 0 or limit > summaries.LIST_PAGE:
            return summaries.stream(self.journal, limit=limit, before=before, uid=uid)
        rows = self.journal.list_summaries(limit + 1, before=before, uid=uid)
        return PlanList(plans=[summaries.summary_of(r) for r in rows[:limit]],
                        more=len(rows) > limit)

    def mark_dry_run(self, peer: Peer | None, plan_id: str) -> PlanRecord:
        """``POST /v1/plans/{id}/dry-run``: a submitted plan was shown and not run."""
        peer = self.access.authorised(peer)
        with self.runs.paused():  # a plan being claimed for execution is not a dry run
            row = self.access.owned(peer, plan_id)
            if row.status is PlanStatus.SUBMITTED:
                self.journal.mark_unrun(row.plan_id, PlanStatus.DRY_RUN)
            elif row.status not in (PlanStatus.DRY_RUN, PlanStatus.ANSWERED):
                raise PlanError(f"plan {row.plan_id} is {row.status}; only a submitted plan "
                                "can be recorded as a dry run", code=ErrorCode.PLAN_STATE,
                                detail={"status": str(row.status)})
        return self.get(peer, row.plan_id)

    def policy_view(self, peer: Peer | None) -> PolicyView:
        """``GET /v1/policy``: the rules in force for the caller."""
        peer = self.access.served(peer)
        return policy_load.view(self.policy, peer.uid,
                                home_of(peer.uid, self.settings.home_override))

    def policy_check(self, peer: Peer | None, request: PolicyCheckRequest
                     ) -> PolicyCheckResponse:
        """``POST /v1/policy/check``: what the policy decides for one command."""
        peer = self.access.served(peer)
        home = home_of(peer.uid, self.settings.home_override)
        return policy_load.check(self.policy, request.command, self.context(home), peer.uid,
                                 home)

    def audit_verify(self, peer: Peer | None) -> Iterator[int | AuditReport]:
        """``GET /v1/audit/verify``: event rows checked so far, then the report (last)."""
        self.access.authorised(peer)
        return audit.verify_progress(self.journal.path)

    # ------------------------------------------------------------------ submit and checks

    def submit(self, peer: Peer | None, body: Any, *, previewed: bool = True) -> SubmitResponse:
        """``POST /v1/plans``: validate and classify with the daemon's own context; store."""
        peer = self.access.authorised(peer)
        approved.submit_envelope(body)
        revises = body.get("revises")
        if revises is not None:  # refused before the analysis is paid for
            revision.revisable(self.journal, peer.uid, revises)
        home = home_of(peer.uid, self.settings.home_override)
        ctx = self.context(home)
        result = approved.accepted(body, ctx)
        assert result.plan is not None  # accepted() raised otherwise
        # a plan the policy denies is refused before any of it runs, even in a preview; the
        # preview may raise tiers (a failed validator), so the policy judges the result again
        self._judged(result.plan, peer.uid, home, ctx, None, "submit")
        annotated, warnings, preview = engine.at_submit(  # may raise tiers: before the seal
            result.plan, result.warnings, owner=peer.uid, home=home, settings=self.settings,
            wanted=previewed)
        annotated = mark_live(annotated, self.capture_problem)
        annotated = self._judged(annotated, peer.uid, home, ctx, None, "submit")
        row = submitted_row(annotated, body, uid=peer.uid, home=home)
        if revises is None:
            self.journal.add_plan(row, [s.id for s in annotated.steps])
        else:
            row = revision.store(self.journal, self.runs, row, [s.id for s in annotated.steps],
                                 revises=revises, preview=preview)
        self.journal.event("policy", row.plan_id, **journal_fields(annotated, "submit"))
        if revises is None or not previewed:  # a revision stored its preview (engine.store)
            engine.store(self.journal, row.plan_id, preview, checks_only=not previewed)
        return SubmitResponse(plan_id=row.plan_id, digest=annotated.digest, status=row.status,
                              annotated=annotated, warnings=warnings, preview=preview)

    def judge(self, peer: Peer | None, body: Any) -> JudgeResponse:
        """``POST /v1/judge``: validation, the approved digest and the policy, as submit
        would decide them; nothing is previewed, stored or run."""
        peer = self.access.authorised(peer)
        approved.judge_envelope(body)
        home = home_of(peer.uid, self.settings.home_override)
        ctx = self.context(home)
        result = approved.accepted(body, ctx)
        assert result.plan is not None  # accepted() raised otherwise
        annotated = self._judged(mark_live(result.plan, self.capture_problem), peer.uid, home,
                                 ctx, None, "judge")
        return JudgeResponse(digest=annotated.digest, annotated=annotated,
                             warnings=result.warnings)

    def preview(self, peer: Peer | None, plan_id: str) -> PlanPreview:
        """``GET /v1/plans/{id}/preview``: the preview stored at submit (made now if none)."""
        owned = self.access.owned(self.access.authorised(peer), plan_id)
        row, annotated = bound_row(self.journal, owned)
        return engine.stored_or_new(self.journal, annotated, plan_id=plan_id,
                                    owner=row.caller_uid, home=row.home, settings=self.settings)

    def checks(self, peer: Peer | None, plan_id: str, request: ChecksRequest) -> ChecksResponse:
        """``POST /v1/plans/{id}/checks``: run the checks the daemon itself rates INFO."""
        peer = self.access.authorised(peer)
        row, annotated = bound_row(self.journal, self.access.owned(peer, plan_id))
        ctx = self.context(row.home)
        annotated = self._judged(annotated, row.caller_uid, row.home, ctx, plan_id, "checks")
        unasked, merge = asked_checks(annotated)
        results = merge(run_checks(unasked, ctx, owner=row.caller_uid, home=row.home,
                                   session=request.session, settings=self.settings,
                                   user_mode=self.user_mode))
        self.journal.event("checks_run", row.plan_id, digest=row.digest,
                           ran=sum(r.ran for r in results),
                           refused=sum(not r.ran for r in results))
        return ChecksResponse(plan_id=plan_id, results=results)

    # ------------------------------------------------------------------ execution

    def execute(self, peer: Peer | None, plan_id: str, request: ExecuteRequest
                ) -> Iterator[bytes]:
        """``POST /v1/plans/{id}/execute``: checks, then a stream of NDJSON event lines."""
        peer = self.access.authorised(peer)
        row, annotated = bound_row(self.journal, self.access.owned(peer, plan_id))
        if not hmac.compare_digest(request.digest.encode(), row.digest.encode()):
            raise PlanError("the digest does not match the plan submitted; submit it again",
                            code=ErrorCode.DIGEST_MISMATCH)
        if annotated.banned:
            raise PlanError("the plan contains a hard-banned command", code=ErrorCode.PLAN_BANNED)
        engine.executable(self.journal, row.plan_id)
        # the policy is read again: the file may have changed since submit
        annotated = self._judged(annotated, row.caller_uid, row.home, self.context(row.home),
                                 plan_id, "execute")
        check_confirmations(annotated, request)
        options = self.aftercare.options(annotated, self.context(row.home), request)
        return self.runs.execute(row, annotated, request.session, options,
                                 self.aftercare.around(row, annotated))

    def confirm(self, peer: Peer | None, plan_id: str, connection: int | None) -> PlanRecord:
        """``POST /v1/plans/{id}/confirm``: keep a plan the lock-out guard armed."""
        peer = self.access.authorised(peer)
        row = self.access.owned(peer, plan_id)
        self.aftercare.confirm(row.plan_id, connection, peer.pid if peer else None)
        return self.get(peer, plan_id)

    def _policy_denies(self, command: str, ctx: AssessContext, uid: int, home: str
                       ) -> str | None:
        """Why the policy denies ``command`` for ``uid`` (None: it does not)."""
        decision = policy_load.check(self.policy, command, ctx, uid, home).decision
        if decision.action != "deny":
            return None
        return f"policy rule {decision.rule.id if decision.rule is not None else 'deny'}"

    def _judged(self, annotated: AnnotatedPlan, uid: int, home: str, ctx: AssessContext,
                plan_id: str | None, phase: str, *, items: str = "all") -> AnnotatedPlan:
        """The annotation marked by the policy as its files are now (see ``judge``)."""
        return judge(self.policy, self.journal, annotated, owner=(uid, home), ctx=ctx,
                     plan_id=plan_id, phase=phase, items=items)

    def cancel(self, peer: Peer | None, plan_id: str) -> PlanRecord:
        """``POST /v1/plans/{id}/cancel``: stop the running plan, wait for its undo."""
        peer = self.access.authorised(peer)
        row = self.access.owned(peer, plan_id)
        self.runs.cancel(row.plan_id, wait_s=self.settings.step_timeout_s + 60)
        return self.get(peer, plan_id)

    def rollback(self, peer: Peer | None, plan_id: str, request: RollbackRequest
                 ) -> RollbackResponse:
        """``POST /v1/plans/{id}/rollback``: undo a finished or interrupted plan."""
        peer = self.access.authorised(peer)
        row = self.access.owned(peer, plan_id)
        if not request.confirmed:
            raise AnnaError("a rollback changes the system: confirm it",
                            code=ErrorCode.CONFIRMATION_REQUIRED)
        row, annotated = bound_row(self.journal, row)
        self._judged(annotated, row.caller_uid, row.home, self.context(row.home), plan_id,
                     "rollback", items="rollback")
        check_rollback_word(annotated, request)
        response = self.runs.rollback(row, request.session)
        self.aftercare.guard.disarm(plan_id, response.status)  # undone by hand: nothing to wait for
        return response

