"""Running verification inside an execution: after each step, and after the plan.

The executor calls :func:`after_step` once a step exited 0 (its postconditions,
:mod:`annad.execution.verify`) and :func:`after_plan` once every step did (the plan's own
``verify_commands``). Each result is journalled (``verify`` events, shown by
``annactl show``) and streamed (``verified`` events). A failure is returned to the
executor, which rolls the plan back unless the person asked to keep it
(``--keep-on-verify-fail``).

A plan's verify commands were proven read-only at submit and are assessed again at
execute (:func:`verify_specs`); they run in the runner's confinement like necessary checks:
read-only tree, no network, as the plan's owner, never as root because the text says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anna_common.errors import ErrorCode, PlanError
from anna_common.plan import RiskLevel
from anna_common.protocol.models import ExecEvent, ExecEventType, VerifyResult
from anna_common.risk.assess import Scope, assess
from annad.confine.runner import run_confined
from annad.confine.spec import unasked_identity
from annad.execution.verify import FAILED, NOT_CHECKED, PASSED, describe, postconditions

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from anna_common.findings import AnnotatedPlan
    from anna_common.risk.rules.base import AssessContext
    from annad.confine.credentials import Identity
    from annad.execution.verify import Checker, Expectations
    from annad.journal.store import Journal

EVENT = "verify"
"""Journal event kind of one verification result."""


@dataclass(frozen=True)
class VerifySpec:
    """One of the plan's verify commands, as the daemon assessed it."""

    verify_id: str
    command: str
    system: bool
    """System scope: may read as root (still confined, no capabilities)."""


@dataclass(frozen=True)
class RunOptions:
    """What the person's approval says about verification."""

    keep_on_verify_fail: bool = False
    verify: list[VerifySpec] = field(default_factory=list)


def verify_specs(annotated: AnnotatedPlan, ctx: AssessContext) -> list[VerifySpec]:
    """The plan's verify commands, each proven read-only again with the daemon's context."""
    specs = []
    for check in annotated.plan.verify_commands:
        verdict = assess(check.command, ctx)
        if verdict.banned or verdict.risk != RiskLevel.INFO or not verdict.read_only:
            raise PlanError(f"verify command {check.id} is not read-only by Anna's own "
                            "assessment; nothing was run", code=ErrorCode.CHECK_NOT_READ_ONLY)
        specs.append(VerifySpec(check.id, check.command, verdict.scope == Scope.SYSTEM))
    return specs


def _record(journal: Journal, plan_id: str, emit: Callable[[ExecEvent], None],
            result: VerifyResult) -> None:
    journal.event(EVENT, plan_id, result.step_id,
                  result=result.model_dump(exclude={"step_id"}))
    emit(ExecEvent(type=ExecEventType.VERIFIED, plan_id=plan_id, step_id=result.step_id,
                   status=result.status, message=describe(result)))


@dataclass(frozen=True)
class Owner:
    """Whose plan it is, as the confined verify commands run it."""

    identity: Identity
    home: str
    session: Mapping[str, str]
    timeout_s: float
    python: str | None = None
    """The confinement helper's interpreter (settings ``confine_python``)."""


def after_step(journal: Journal, plan_id: str, step: tuple[str, str], checker: Checker,
               expected: Expectations, emit: Callable[[ExecEvent], None]
               ) -> list[VerifyResult]:
    """Check the postconditions of ``step`` (id, command); return the failed ones."""
    results = postconditions(step[0], step[1], checker, expected)
    for result in results:
        _record(journal, plan_id, emit, result)
    return [r for r in results if r.status == FAILED]


def after_plan(journal: Journal, plan_id: str, specs: list[VerifySpec], owner: Owner,
               emit: Callable[[ExecEvent], None]) -> list[VerifyResult]:
    """Run the plan's verify commands, confined; return the failed ones."""
    failures = []
    for spec in specs:
        identity, root_read = unasked_identity(owner.identity, spec.command,
                                               root_allowed=spec.system)
        run = run_confined(spec.command, identity, root_read=root_read,
                           timeout=owner.timeout_s, max_output=4096,
                           session=owner.session, cwd="/" if root_read else owner.home,
                           python=owner.python)
        if run.error is not None or run.timed_out:
            status, found = NOT_CHECKED, run.error or "timed out"
        else:
            status = PASSED if run.exit_code == 0 else FAILED
            found = f"exit {run.exit_code}: {run.output.strip()[-300:]}"
        result = VerifyResult(step_id=spec.verify_id, kind="command", target=spec.command,
                              status=status, expected="exit 0", found=found)
        _record(journal, plan_id, emit, result)
        if status == FAILED:
            failures.append(result)
    return failures


def results_of(journal: Journal, plan_id: str) -> list[VerifyResult]:
    """The verification results journalled for a plan, in order."""
    found = []
    for _plan, kind, step, body in journal.events_of(plan_id, EVENT):
        if kind == EVENT:
            try:
                found.append(VerifyResult.model_validate({**body.get("result", {}),
                                                          "step_id": step or ""}))
            except ValueError:
                continue
    return found
