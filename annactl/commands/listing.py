"""``annactl history`` and ``annactl show``: reading plans, as quick as ``status``.

The common path uses only the standard library to reach the daemon (status's small Unix
socket client), never Typer, the client settings (pydantic-settings), the telemetry models
or the risk engine: ``history`` works on plain dicts, ``show`` validates one
:class:`~anna_common.protocol.records.PlanRecord`. Both must start within 12x a bare
interpreter (``bench/startup.py``). Only when no daemon answers do they take the full path,
which may autostart one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from anna_common.errors import AnnaError, DaemonError, ErrorCode, UsageError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from annactl.ui.console import Consoles

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


def _fast_get(route: str) -> dict[str, Any] | None:
    """``GET route`` from the first daemon that answers, or None when none does."""
    from annactl.commands.status import candidate_sockets, unix_get

    for path in candidate_sockets():
        try:
            data = unix_get(path, route, timeout=10.0)
        except DaemonError:
            continue
        except AnnaError as exc:
            # the system daemon lets only root and group anna read plans: the caller's own
            # per-user daemon is next, as the full client would choose
            if exc.code is ErrorCode.PERMISSION_DENIED:
                continue
            raise
        if isinstance(data, dict):
            return data
    return None


def _full_client() -> Any:
    from annactl.core.config import load_settings
    from annactl.core.daemon_client import connect

    return connect(load_settings())


def fetch_page(limit: int, before: str | None) -> dict[str, Any]:
    """``GET /v1/plans`` from the first daemon that answers (else the full client)."""
    route = f"/v1/plans?limit={int(limit)}"
    if before is not None:
        route += "&before=" + quote(before, safe="")
    page = _fast_get(route)
    if page is not None:
        return page
    client = _full_client()
    try:
        return dict(client.list_plans(limit=limit, before=before).model_dump(mode="json"))
    finally:
        client.close()


def fetch_record(plan_id: str) -> dict[str, Any]:
    """``GET /v1/plans/{id}`` (an id or its end) as JSON."""
    record = _fast_get("/v1/plans/" + quote(plan_id, safe=""))
    if record is not None:
        return record
    client = _full_client()
    try:
        return dict(client.get_plan(plan_id).model_dump(mode="json"))
    finally:
        client.close()


def parse_show_args(args: list[str]) -> dict[str, Any] | None:
    """``ID [--json]`` by hand, or None (Typer then answers with its usual messages)."""
    words = [a for a in args if a != "--json"]
    if len(words) != 1 or words[0].startswith("-") or len(args) - len(words) > 1:
        return None
    return {"plan_id": words[0], "as_json": "--json" in args}


def show(consoles: Consoles, plan_id: str, *, as_json: bool) -> int:
    """The stored plan, its steps' states and its outcome (the journal's own words)."""
    data = fetch_record(plan_id)
    if as_json:
        from annactl.ui.console import emit_json

        emit_json(consoles, {"plan_id": data.get("plan_id"), "status": data.get("status"),
                             "record": data})
        return 0
    from annactl.core.wire import wire
    from annactl.ui import render

    try:  # the renderers only read attributes: no pydantic classes to build
        shown = render.record_view(wire(data))
    except (AttributeError, TypeError, ValueError):  # (wire's ShapeError is an AttributeError)
        # not the shape the renderers expect: the real models say what is wrong (coded)
        from anna_common.protocol.records import PlanRecord

        shown = render.record_view(PlanRecord.model_validate(data))
    consoles.out.print(shown)
    return 0


def history(consoles: Consoles, *, as_json: bool, limit: int = DEFAULT_LIMIT,
            before: str | None = None) -> int:
    """Plans the daemon knows, newest first, a page at a time (``limit`` 0: all of them,
    read and printed :data:`ALL_PAGE` at a time: :func:`history_all`)."""
    from rich.text import Text

    from annactl.ui.console import emit_json
    from annactl.ui.history_view import history_view, short_id

    if limit < 0:
        raise UsageError("--limit must be 0 (all) or more")
    if limit == 0:
        return history_all(consoles, as_json=as_json, before=before)
    page = fetch_page(limit, before)
    plans = [p for p in page.get("plans", []) if isinstance(p, dict)]
    if as_json:
        emit_json(consoles, {"status": "ok", "more": bool(page.get("more")), "plans": plans})
    elif not plans:
        consoles.out.print("No older plans." if before else "No plans yet.", markup=False)
    else:
        consoles.out.print(history_view(plans))
        if page.get("more"):
            older = short_id(str(plans[-1].get("plan_id", "")))
            consoles.out.print(Text(f"Older plans: annactl history --before {older} "
                                    "(or --all)", style="dim"))
    return 0


ALL_PAGE = 500
"""Plans ``history --all`` asks for and prints at a time."""


def pages(before: str | None) -> Iterator[list[dict[str, Any]]]:
    """Every plan older than ``before`` (None: all), newest first, a page at a time."""
    while True:
        page = fetch_page(ALL_PAGE, before)
        plans = [p for p in page.get("plans", []) if isinstance(p, dict)]
        if plans:
            yield plans
        if not page.get("more") or not plans:
            return
        before = str(plans[-1].get("plan_id", ""))


def history_all(consoles: Consoles, *, as_json: bool, before: str | None) -> int:
    """``history --all``: page after page, each printed as it comes, so neither the daemon
    nor this process holds the whole history. ``--json`` off a terminal writes the one
    document as it goes (the same document :func:`history` writes)."""
    import json

    from annactl.ui.console import emit_json
    from annactl.ui.history_view import history_view

    if as_json and consoles.out.is_terminal:  # indented and coloured: one document
        emit_json(consoles, {"status": "ok", "more": False,
                             "plans": [p for page in pages(before) for p in page]})
        return 0
    if as_json:
        from annactl.ui.jsonedge import with_code

        head = json.dumps(with_code({"status": "ok", "more": False}), ensure_ascii=True)
        out = consoles.out.file
        out.write(head[:-1] + ', "plans": [')
        for n, page in enumerate(pages(before)):
            out.write((", " if n else "") + ", ".join(json.dumps(p, ensure_ascii=True,
                                                                 default=str) for p in page))
            out.flush()
        out.write("]}\n")
        out.flush()
        return 0
    shown = False
    for page in pages(before):
        consoles.out.print(history_view(page))
        shown = True
    if not shown:
        consoles.out.print("No older plans." if before else "No plans yet.", markup=False)
    return 0
