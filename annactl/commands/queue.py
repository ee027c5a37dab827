"""``annactl queue`` (list, show, approve, dismiss) and ``annactl recipe run NAME``.

Recipes run unattended in the daemon; what they may not run alone waits in the queue.
Approving a queued plan is ``apply ID``: the same view, the same confirmation by tier
(HIGH asks for its word), the same execution and report. ``recipe run`` is what the
``anna-recipe@NAME.service`` unit starts (``--trigger timer``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.errors import UsageError
from annactl.core.exit_codes import ExitStatus, exit_status_for_plan

if TYPE_CHECKING:
    from rich.table import Table

    from anna_common.protocol.queue import QueueEntry, QueueList
    from annactl.commands.ask import RunOptions
    from annactl.commands.flow import Flow
    from annactl.ui.console import Consoles


def _flow() -> Flow:
    from annactl.commands.flow import connect_flow
    from annactl.core.config import load_settings

    return connect_flow(load_settings())


def queue_table(queue: QueueList) -> Table:
    """ID, recipe, risk, goal, why it waits (untrusted text made inert)."""
    import datetime as dt

    from rich.table import Table
    from rich.text import Text

    from annactl.ui.console import inert
    from annactl.ui.history_view import short_id

    table = Table(title="Waiting for your approval", title_justify="left")
    # the id is typed back: short as history prints it, never wrapped
    table.add_column("id", no_wrap=True, min_width=6)
    table.add_column("from", overflow="fold", min_width=6)
    table.add_column("risk", no_wrap=True, min_width=4)
    table.add_column("queued", no_wrap=True)
    for column in ("goal", "why"):
        table.add_column(column, overflow="fold", min_width=4)
    for entry in queue.entries:
        when = dt.datetime.fromtimestamp(entry.queued_at).strftime("%Y-%m-%d %H:%M")
        table.add_row(Text(short_id(entry.plan_id)), Text(inert(origin(entry), max_chars=80)),
                      Text(str(entry.risk), style="bold red" if entry.risk == "HIGH"
                           else "yellow"), when,
                      Text(inert(entry.goal, max_chars=120)),
                      Text(inert("; ".join(entry.reasons), max_chars=300)))
    return table


def origin(entry: QueueEntry) -> str:
    """Who put a plan in the queue: ``recipe NAME``, or ``agent NAME`` (an MCP client's
    name, untrusted: shown inert) — ``(undo)`` when it asks for a rollback."""
    who = f"agent {entry.agent}" if entry.agent is not None else f"recipe {entry.recipe}"
    return who + (" (undo)" if entry.kind == "rollback" else "")


def list_queue(consoles: Consoles, *, as_json: bool) -> int:
    """The waiting plans."""
    from annactl.commands.failures import json_failures
    from annactl.ui.console import emit_json

    with json_failures(consoles, as_json=as_json):
        queue = _flow().daemon.queue()
    if as_json:
        emit_json(consoles, {"status": "ok", **queue.model_dump(mode="json")})
    elif not queue.entries:
        consoles.out.print("Nothing waits for your approval.", markup=False)
    else:
        consoles.out.print(queue_table(queue))
        consoles.out.print("annactl queue approve ID · show ID · dismiss ID", style="dim",
                           markup=False)
    return ExitStatus.SUCCESS


MIN_ID_CHARS = 4
"""Shortest piece of an id the queue commands take (as ``show`` does)."""


def resolve(flow: Flow, text: str) -> str:
    """The waiting plan ``text`` names: its full id, or an unambiguous piece of it — the
    start (as git takes a prefix) or the end (the short id ``history`` and the queue table
    print). Ambiguous or unknown: a coded error that lists the candidates."""
    from anna_common.errors import AnnaError, ErrorCode

    waiting = [e.plan_id for e in flow.daemon.queue().entries]
    if text in waiting:
        return text
    found = [p for p in waiting if len(text) >= MIN_ID_CHARS
             and (p.startswith(text) or p.endswith(text))]
    if len(found) == 1:
        return found[0]
    if found:
        raise AnnaError(f"{text!r} matches {len(found)} waiting plans: " + ", ".join(found[:8])
                        + "; give more of the id", code=ErrorCode.PLAN_NOT_FOUND,
                        detail={"candidates": found})
    raise AnnaError(f"plan {text!r} is not waiting in the queue", code=ErrorCode.PLAN_NOT_FOUND,
                    hint="annactl queue lists the waiting plans (ids as history prints them)")


def approve(consoles: Consoles, plan_id: str, opts: RunOptions) -> int:
    """Show, confirm by tier and run a queued plan (as ``apply ID``); for an undo an agent
    asked for, confirm and roll the plan back (as ``rollback ID``)."""
    from annactl.commands.ask import run_prepared
    from annactl.commands.failures import json_failures

    with json_failures(consoles, as_json=opts.as_json):
        flow = _flow()
        full = resolve(flow, plan_id)
        if any(e.plan_id == full and e.kind == "rollback" for e in flow.daemon.queue().entries):
            from annactl.commands import plans

            return plans.rollback(consoles, full, yes=opts.yes, as_json=opts.as_json,
                                  allow_high=opts.allow_high)
        return run_prepared(flow, consoles, flow.stored(full), opts)


def show(consoles: Consoles, plan_id: str, *, as_json: bool) -> int:
    """A waiting plan, named as :func:`resolve` takes it."""
    from annactl.commands import listing
    from annactl.commands.failures import json_failures

    with json_failures(consoles, as_json=as_json):
        full = resolve(_flow(), plan_id)
    return listing.show(consoles, full, as_json=as_json)


def dismiss(consoles: Consoles, plan_id: str, *, as_json: bool) -> int:
    """Drop a plan from the queue; it stays in history and never runs from here."""
    from annactl.commands.failures import json_failures
    from annactl.ui.console import emit_json

    with json_failures(consoles, as_json=as_json):
        flow = _flow()
        entry = flow.daemon.dismiss(resolve(flow, plan_id))
    if as_json:
        emit_json(consoles, {"status": "ok", **entry.model_dump(mode="json")})
    else:
        consoles.out.print(f"Dismissed {entry.plan_id}.", markup=False)
    return ExitStatus.SUCCESS


def parse_params(pairs: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` pairs (the value may hold ``=``)."""
    params: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--param wants KEY=VALUE, not {pair[:80]!r}")
        params[key] = value
    return params


def run_recipe(consoles: Consoles, name: str, *, params: list[str], trigger: str,
               as_json: bool) -> int:
    """Ask the daemon to run the recipe; say whether it ran or waits."""
    from annactl.commands.failures import json_failures
    from annactl.ui.console import emit_json, inert

    with json_failures(consoles, as_json=as_json):
        if trigger not in ("manual", "timer"):
            raise UsageError("--trigger is manual or timer")
        response = _flow().daemon.run_recipe(name, params=parse_params(params),
                                             trigger=trigger)
    if as_json:
        emit_json(consoles, {**response.model_dump(mode="json"),
                             "plan_status": str(response.status),
                             "status": str(response.status)})
    elif response.outcome == "queued":
        consoles.out.print(f"Recipe {inert(name, max_chars=64)}: plan {response.plan_id} "
                           f"({response.risk}) waits for approval: "
                           + inert("; ".join(response.reasons), max_chars=300), markup=False)
    else:
        consoles.out.print(f"Recipe {inert(name, max_chars=64)}: plan {response.plan_id} "
                           f"{response.status}.", markup=False)
    if response.outcome == "queued":
        return ExitStatus.SUCCESS
    return exit_status_for_plan(str(response.status))
