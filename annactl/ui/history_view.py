"""``annactl history`` as a table that reads at 80 columns: short ids, the title gets the room.

Kept apart from :mod:`annactl.ui.render` so listing plans imports only Rich's table and text
(no syntax highlighting, no plan models): ``history`` starts as fast as ``status``.
Every string from the journal goes through :func:`annactl.ui.console.inert_text`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from annactl.ui.console import inert_text

if TYPE_CHECKING:
    from rich.table import Table

SHORT_ID_CHARS = 6
"""Characters of a plan id ``history`` shows; the daemon accepts this end of an id."""


def short_id(plan_id: str) -> str:
    """The end of a plan id (its random part) that ``show``, ``apply`` and ``rollback`` take."""
    return plan_id[-SHORT_ID_CHARS:]


def when(ts: float, *, now: float | None = None) -> str:
    """``MM-DD HH:MM`` this year, ``YYYY-MM-DD`` before."""
    if not ts:
        return "-"
    here = time.localtime(ts)
    this_year = time.localtime(time.time() if now is None else now).tm_year
    return time.strftime("%m-%d %H:%M" if here.tm_year == this_year else "%Y-%m-%d", here)


def history_view(plans: list[dict[str, Any]]) -> Any:
    """:func:`history_table`, without the ``when`` and ``steps`` columns on a terminal
    narrower than :data:`annactl.ui.render_narrow.NARROW` (the title keeps its room)."""
    from annactl.ui.render_narrow import ByWidth

    return ByWidth(lambda: history_table(plans), lambda: history_table(plans, narrow=True))


def history_table(plans: list[dict[str, Any]], *, narrow: bool = False) -> Table:
    """Plans as ``GET /v1/plans`` lists them (JSON), newest first; every column at least as
    wide as its header, and only the title folds."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from annactl.ui.styles import RISK_STYLE, STATUS_STYLE

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, expand=False)
    names = ("id", "status", "risk") if narrow else ("id", "when", "status", "risk", "steps")
    for name in names:
        # ids are typed back: never broken; no column narrower than its header
        table.add_column(name, no_wrap=True, min_width=len(name),
                         justify="right" if name == "steps" else "left")
    table.add_column("title", overflow="fold", ratio=1, min_width=12)
    for item in plans:
        risk, status = str(item.get("final_risk", "?")), str(item.get("status", "?"))
        cells: list[Any] = [inert_text(short_id(str(item.get("plan_id", "?"))))]
        if not narrow:
            cells.append(when(float(item.get("created_at") or 0)))
        cells += [Text(status, style=STATUS_STYLE.get(status, "")),
                  Text(risk, style=RISK_STYLE.get(risk, ""))]
        if not narrow:
            cells.append(str(item.get("steps", "?")))
        table.add_row(*cells, inert_text(item.get("title", ""), max_chars=120))
    return table
