"""A plan that needs root, on a per-user daemon: say so once, before asking anything.

The per-user daemon refuses system-scope steps at execute time (``SCOPE_REQUIRES_ROOT``);
asking "Run this plan? [y/N]" first only to refuse after "y" wastes the person's
decision. The daemon's annotation already says which steps need root, so the client
refuses before the question, naming the steps and the one command that fixes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.errors import AnnaError, ErrorCode
from anna_common.levels import Scope

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan
    from annactl.core.daemon_client import DaemonClient


def needs_root(daemon: DaemonClient, plan: AnnotatedPlan, plan_id: str | None = None
               ) -> AnnaError | None:
    """``SCOPE_REQUIRES_ROOT`` when ``daemon`` is a per-user one and ``plan`` has a step or
    rollback command that needs root (its hint: what this person can do, then how to run
    the plan it kept); None otherwise."""
    if daemon.mode != "user":
        return None
    steps = [s.id for s in [*plan.steps, *plan.rollback] if s.scope == Scope.SYSTEM]
    if not steps:
        return None
    from annactl.core.sysaccess import system_access

    access = system_access()
    later = f"; then: annactl apply {plan_id}" if plan_id else ""
    return AnnaError(f"{', '.join(steps)} need(s) root, and the daemon answering you is your "
                     f"per-user one, which runs only your own changes: {access.why}; "
                     "nothing was run", code=ErrorCode.SCOPE_REQUIRES_ROOT,
                     hint=f"{_as_hint(access.fix)}{later}",
                     detail={"steps": steps, "fix": access.fix})


def _as_hint(fix: str) -> str:
    """A command is introduced as one; words (ask an administrator…) are said as they are."""
    return fix if fix.startswith(("ask ", "log in")) else f"run: {fix}"


def refuse_before_asking(daemon: DaemonClient, plan: AnnotatedPlan,
                         plan_id: str | None = None) -> None:
    """Raise :func:`needs_root`'s error when there is one; the stored plan ``plan_id`` is
    then recorded as shown and not run (``annactl apply ID`` runs it once the system daemon
    answers), never left ``submitted`` as if it waited for an answer."""
    error = needs_root(daemon, plan, plan_id)
    if error is None:
        return
    if plan_id:
        from contextlib import suppress

        with suppress(AnnaError):  # the refusal is what the person must hear about
            daemon.mark_dry_run(plan_id)
    raise error
