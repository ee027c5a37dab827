"""``annactl confirm ID``: keep a plan the lock-out guard armed.

A plan that can cut the person off (sshd, network, firewall, PAM, sudoers, the display
manager) is rolled back by the daemon unless confirmed from a *new login*: ``annactl confirm
ID`` run in an ssh or console session opened after the plan finished, proof that the person
can still log in (the daemon tells a login by the caller's audit session, see
:mod:`annad.execution.guard`). After such a plan, ``annactl`` says so (:func:`offer`); it
cannot confirm from the terminal that ran the plan, which proves nothing about logging in.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from annactl.core.exit_codes import ExitStatus

if TYPE_CHECKING:
    from anna_common.protocol.models import PlanRecord
    from annactl.commands.flow import Flow
    from annactl.ui.console import Consoles


def confirm_plan(consoles: Consoles, plan_id: str, *, as_json: bool) -> int:
    """Send the confirmation; print the plan's guard as the daemon now records it."""
    from annactl.commands.flow import connect_flow
    from annactl.core.config import load_settings
    from annactl.ui.console import emit_json

    record = connect_flow(load_settings()).daemon.confirm(plan_id)
    if as_json:
        emit_json(consoles, {"plan_id": plan_id, "status": str(record.status),
                             "guard": record.guard.model_dump(mode="json")
                             if record.guard else None})
    else:
        consoles.out.print(f"Plan {plan_id} confirmed: it is kept.", markup=False)
    return ExitStatus.SUCCESS


def guard_notice(record: PlanRecord) -> str | None:
    """What to tell the person after a guarded plan ran (None: not guarded now)."""
    guard = record.guard
    if guard is None or guard.state != "armed":
        return None
    when = time.strftime("%H:%M:%S", time.localtime(guard.deadline or time.time()))
    return (f"This plan can cut you off ({'; '.join(guard.reasons[:3])}). Anna rolls it back "
            f"at {when} unless you log in again (ssh or a console) and confirm from there: "
            f"annactl confirm {record.plan_id}")


def offer(flow: Flow, consoles: Consoles, record: PlanRecord) -> None:
    """After a guarded plan: say so, and how to keep it (a confirmation from a new login;
    this terminal's session existed before the plan finished, so it cannot confirm).

    The record in hand is the journal's (the guard is armed before the plan's last event);
    only when it carries no guard is the daemon asked again, and a daemon that is gone
    just then (restarting) never turns a finished plan into a failed command."""
    from anna_common.errors import AnnaError

    plan_id = record.plan_id
    if record.guard is None:
        try:
            record = flow.daemon.get_plan(plan_id)
        except AnnaError:
            return
    notice = guard_notice(record)
    if notice is not None:
        consoles.err.print(notice, style="bold yellow", markup=False)
