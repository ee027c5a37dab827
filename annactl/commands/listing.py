"""``annactl history``: a page of plans, as quick as ``status``.

The common path uses only the standard library to reach the daemon (status's small Unix
socket client) and plain dicts, never the protocol's pydantic models, the risk engine or
Typer: listing plans must start within 12x a bare interpreter (``bench/startup.py``).
Only when no daemon answers does it take the full path, which may autostart one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from anna_common.errors import DaemonError, UsageError

if TYPE_CHECKING:
    from annactl.console import Consoles

DEFAULT_LIMIT = 20
"""Plans on one page of ``annactl history``."""


def parse_history_args(args: list[str]) -> dict[str, Any] | None:
    """``[--json] [--all] [--limit N|-n N] [--before ID]`` by hand, or None for anything else
    (``--help``, typos: Typer then answers with its usual messages)."""
    opts: dict[str, Any] = {"as_json": False, "limit": DEFAULT_LIMIT, "before": None}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        name, eq, value = arg.partition("=")
        if arg == "--json":
            opts["as_json"] = True
        elif arg == "--all":
            opts["limit"] = 0
        elif name in ("--limit", "-n", "--before") and (eq or rest):
            value = value if eq else rest.pop(0)
            if name == "--before":
                opts["before"] = value
            elif value.isdigit():
                opts["limit"] = int(value)
            else:
                return None
        else:
            return None
    return opts


def fetch_page(limit: int, before: str | None) -> dict[str, Any]:
    """``GET /v1/plans`` from the first daemon that answers (else the full client)."""
    from annactl.status import candidate_sockets, unix_get

    route = f"/v1/plans?limit={int(limit)}"
    if before is not None:
        route += "&before=" + quote(before, safe="")
    for path in candidate_sockets():
        try:
            page = unix_get(path, route, timeout=10.0)
        except DaemonError:
            continue
        if isinstance(page, dict):
            return page
    from annactl.config import load_settings
    from annactl.daemon_client import connect

    client = connect(load_settings())
    try:
        return client.list_plans(limit=limit, before=before).model_dump(mode="json")
    finally:
        client.close()


def history(consoles: Consoles, *, as_json: bool, limit: int = DEFAULT_LIMIT,
            before: str | None = None) -> int:
    """Plans the daemon knows, newest first, a page at a time (``limit`` 0: all of them)."""
    from rich.text import Text

    from annactl.console import emit_json
    from annactl.ui.history_view import history_table, short_id

    if limit < 0:
        raise UsageError("--limit must be 0 (all) or more")
    page = fetch_page(limit, before)
    plans = [p for p in page.get("plans", []) if isinstance(p, dict)]
    if as_json:
        emit_json(consoles, {"status": "ok", "more": bool(page.get("more")), "plans": plans})
    elif not plans:
        consoles.out.print("No older plans." if before else "No plans yet.", markup=False)
    else:
        consoles.out.print(history_table(plans))
        if page.get("more"):
            older = short_id(str(plans[-1].get("plan_id", "")))
            consoles.out.print(Text(f"Older plans: annactl history --before {older} "
                                    "(or --all)", style="dim"))
    return 0
