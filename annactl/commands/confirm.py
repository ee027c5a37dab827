"""``annactl confirm ID``: keep a plan the lock-out guard armed.

A plan that can cut the person off (sshd, network, firewall, PAM, sudoers, the display
manager) is rolled back by the daemon unless confirmed from a connection made after the
plan finished: proof that the person can still reach the machine. This command is that
confirmation (every daemon request is a new connection); after such a plan, ``annactl``
offers to run it for the person (:func:`offer`).
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
            f"at {when} unless you confirm from a new connection: "
            f"annactl confirm {record.plan_id}")


def offer(flow: Flow, consoles: Consoles, record: PlanRecord) -> None:
    """After a guarded plan: say so, and offer to send the confirmation now over a new
    connection (the answer itself shows the person can still use this terminal).

    The record in hand is the journal's (the guard is armed before the plan's last event);
    only when it carries no guard is the daemon asked again, and a daemon that is gone
    just then (restarting) never turns a finished plan into a failed command."""
    from anna_common.errors import AnnaError
    from annactl.ui.confirm import TerminalPrompter

    plan_id = record.plan_id
    if record.guard is None:
        try:
            record = flow.daemon.get_plan(plan_id)
        except AnnaError:
            return
    notice = guard_notice(record)
    if notice is None:
        return
    consoles.err.print(notice, style="bold yellow", markup=False)
    if not consoles.interactive:
        return
    prompter = TerminalPrompter(consoles.err)
    if prompter.yes_no("Can you still reach the machine (open a new session to check)? "
                       "Confirm now? [y/N]"):
        flow.daemon.confirm(plan_id)
        consoles.err.print(f"Plan {plan_id} confirmed: it is kept.", markup=False)
