"""Necessary checks: run only what the daemon's own assessment proves read-only (INFO).

The client's annotation is never consulted: each check is assessed again here
with the daemon's context. A check that is not INFO, or is banned, is refused
and reported, never run. The verdict is not the wall, though: every check runs
in the runner's confinement (:mod:`annad.confine.spec`: the machine's real processes and
network seen, nothing changed — a read-only tree, Landlock, seccomp, no capabilities, no
new privileges, limits) as the plan's owner. The checks of one plan share one
confinement helper (:mod:`annad.confine.session`). ``sudo`` in the text never
makes it root; only a system-scope check in the system daemon that must read what
the owner cannot read (:func:`annad.confine.spec.needs_root_read`) reads as uid 0, still
without any capability. When the confinement cannot be built the check does not run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.plan import RiskLevel
from anna_common.protocol.models import CheckResult
from anna_common.risk.assess import Scope, assess
from annad.confine.runner import run_confined
from annad.confine.spec import unasked_identity
from annad.journal.records import who_of

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan
    from anna_common.protocol.models import SessionEnv
    from anna_common.risk.rules.base import AssessContext
    from annad.config import DaemonSettings


def run_checks(annotated: AnnotatedPlan, ctx: AssessContext, *, owner: int,
               home: str, session: SessionEnv, settings: DaemonSettings, user_mode: bool
               ) -> list[CheckResult]:
    """Run each read-only check in plan order; refuse the rest with a reason."""
    who = who_of(owner, home, session)
    results: list[CheckResult] = []
    for check in annotated.checks:
        verdict = assess(check.command, ctx)
        if verdict.banned or verdict.risk != RiskLevel.INFO or not verdict.read_only:
            why = verdict.reasons[0] if verdict.reasons else "not proven read-only"
            results.append(CheckResult(id=check.id, command=check.command, ran=False,
                                       reason=f"not read-only by Anna's own assessment "
                                       f"({verdict.risk}): {why}"))
            continue
        system = verdict.scope == Scope.SYSTEM
        if system and user_mode:
            results.append(CheckResult(id=check.id, command=check.command, ran=False,
                                       reason="needs root: set up the system daemon "
                                       "(annactl setup)"))
            continue
        identity, root_read = unasked_identity(who.identity(), check.command,
                                               root_allowed=system)
        run = run_confined(check.command, identity, root_read=root_read,
                           timeout=settings.check_timeout_s, max_output=settings.check_output,
                           session=who.session, cwd="/" if root_read else home,
                           python=settings.confine_python)
        reason = run.error or ("timed out" if run.timed_out else None)
        results.append(CheckResult(id=check.id, command=check.command, ran=run.error is None,
                                   exit_code=run.exit_code, output=run.output,
                                   truncated=run.truncated,
                                   duration_ms=round(run.duration_ms, 1), reason=reason))
    return results
