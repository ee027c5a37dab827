"""``annactl gc``: remove plan backups the daemon's retention policy (or the person) allows.

Without arguments the daemon applies its policy to plans that can no longer be rolled
back. ``--include-rollbackable`` or plan ids extend it to plans that can still be rolled
back: their rollback stops working, so the client first asks the daemon what would go
(a dry run), asks the person (default No; ``--yes`` skips), and then removes exactly the
plans it showed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from annactl.core.exit_codes import ExitStatus

if TYPE_CHECKING:
    from anna_common.protocol.models import GcResponse
    from annactl.core.daemon_client import DaemonClient
    from annactl.ui.console import Consoles

_ROLLBACKABLE = frozenset({"succeeded", "interrupted", "rollback_failed",
                           "rollback_incomplete"})


def gc(consoles: Consoles, plan_ids: list[str], *, dry_run: bool, include_rollbackable: bool,
       yes: bool, as_json: bool) -> int:
    """Print what was (or, with ``--dry-run``, would be) removed and the bytes freed."""
    from annactl.core.config import load_settings
    from annactl.core.daemon_client import connect

    client: DaemonClient = connect(load_settings())  # no model is needed
    asked = include_rollbackable or bool(plan_ids)
    result = client.gc(dry_run=True, include_rollbackable=asked, plan_ids=plan_ids)
    if not dry_run:
        if asked:
            _confirm(consoles, result, yes=yes, as_json=as_json)
            chosen = [r.plan_id for r in result.removed]
            # exactly the plans shown: a plan that finished since then is not included
            result = client.gc(include_rollbackable=True, plan_ids=chosen) if chosen else result
        else:
            result = client.gc()
    _show(consoles, result, as_json=as_json)
    return ExitStatus.SUCCESS


def _confirm(consoles: Consoles, preview: GcResponse, *, yes: bool, as_json: bool) -> None:
    from annactl.ui import confirm

    risky = [r.plan_id for r in preview.removed if str(r.status) in _ROLLBACKABLE]
    if not risky or yes:
        return
    if as_json or not consoles.interactive:
        raise confirm.declined("removing the backups of plans that can still be rolled back "
                               "needs a confirmation and there is no terminal to ask on",
                               hint="pass --yes")
    question = (f"Remove the backups of {len(risky)} plan(s) that can still be rolled back "
                f"({', '.join(risky[:5])}{' …' if len(risky) > 5 else ''})? They can no "
                "longer be rolled back. [y/N]")
    if not confirm.TerminalPrompter(consoles.err).yes_no(question):
        raise confirm.declined("declined; no backups were removed")


def _show(consoles: Consoles, result: GcResponse, *, as_json: bool) -> None:
    from rich.table import Table

    from annactl.ui.console import emit_json

    if as_json:
        emit_json(consoles, {"status": "ok", **result.model_dump(mode="json")})
        return
    verb = "Would remove" if result.dry_run else "Removed"
    if result.removed:
        table = Table(box=None, show_header=True)
        for column in ("plan", "state", "bytes", "why"):
            table.add_column(column)
        for item in result.removed:
            table.add_row(item.plan_id, str(item.status), str(item.bytes), item.reason)
        consoles.out.print(table)
    consoles.out.print(f"{verb} the backups of {len(result.removed)} plan(s): "
                       f"{result.bytes_freed} bytes.", markup=False)
    if result.kept_rollbackable:
        consoles.out.print(f"Kept {len(result.kept_rollbackable)} plan(s) that can still be "
                           "rolled back (annactl gc --include-rollbackable, or name them).",
                           markup=False)
