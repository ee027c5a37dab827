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


def refuse_before_asking(daemon: DaemonClient, plan: AnnotatedPlan) -> None:
    """Raise ``SCOPE_REQUIRES_ROOT`` when ``daemon`` is a per-user one and ``plan`` has a
    step or rollback command that needs root; otherwise do nothing."""
    if daemon.mode != "user":
        return
    steps = [s.id for s in [*plan.steps, *plan.rollback] if s.scope == Scope.SYSTEM]
    if not steps:
        return
    from annactl.core.sysaccess import system_access

    access = system_access()
    raise AnnaError(f"{', '.join(steps)} need(s) root, and the daemon answering you is your "
                    f"per-user one, which runs only your own changes: {access.why}; "
                    "nothing was run", code=ErrorCode.SCOPE_REQUIRES_ROOT,
                    hint=f"run: {access.fix}", detail={"steps": steps, "fix": access.fix})
