"""The approval queue: plans unattended recipes could not run alone, and plans or undos
agents proposed (``annactl mcp``), waiting for a person.

A table of the waiting plans (id, from: the recipe or ``agent NAME``, risk, goal, why).
``a`` (or Enter) opens the selected plan in the approval box — where approving works
exactly as for any plan: one confirmation for LOW/MEDIUM, the typed word for HIGH, focus
starting on Cancel; an undo asks whether to roll the plan back (and its word if HIGH). ``d``
dismisses it (it stays in history and never runs from the queue), ``q`` leaves. The
screen only reports what the person chose; the app does the daemon calls in workers.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from annactl.ui.console import inert

if TYPE_CHECKING:
    from anna_common.protocol.queue import QueueList

RISK_STYLE = {"INFO": "green", "LOW": "cyan", "MEDIUM": "yellow", "HIGH": "bold red"}
"""Colour of the risk column."""


@dataclass(frozen=True)
class QueueChoice:
    """What the person chose on the queue screen."""

    action: str
    """``approve``, ``undo`` (roll back: an agent asked for it), ``dismiss`` or ``quit``."""
    plan_id: str | None = None
    """The selected plan (None for ``quit``)."""


class QueueScreen(Screen[QueueChoice]):
    """The waiting plans; the table has the focus."""

    BINDINGS = [  # noqa: RUF012 - Textual's declared type
        Binding("a", "approve", "Approve…"),
        Binding("enter", "approve", "Open", show=False),
        Binding("d", "dismiss_plan", "Dismiss"),
        Binding("q", "leave", "Quit"),
        Binding("escape", "leave", "Quit", show=False),
    ]
    AUTO_FOCUS = "#queue-table"

    def __init__(self, queue: QueueList) -> None:
        super().__init__()
        self.queue = queue

    def compose(self) -> ComposeResult:
        """Title line, table, key help."""
        with Vertical(id="queue-box"):
            count = len(self.queue.entries)
            yield Static(Text(f"{count} plan{'s' if count != 1 else ''} waiting for your "
                              "approval", style="bold"), id="queue-title")
            yield DataTable(id="queue-table", cursor_type="row", zebra_stripes=True)
            yield Static(Text("a approve (opens the plan)  ·  d dismiss  ·  q quit",
                              style="dim"), id="queue-help")
        yield Footer()

    def on_mount(self) -> None:
        """Fill the table (every string from the daemon made inert)."""
        table = self.query_one(DataTable)
        table.add_columns("id", "from", "risk", "queued", "goal", "why it waits")
        for entry in self.queue.entries:
            when = dt.datetime.fromtimestamp(entry.queued_at).strftime("%m-%d %H:%M")
            who = f"agent {entry.agent}" if entry.agent is not None else entry.recipe
            table.add_row(
                Text(entry.plan_id),
                Text(inert(who + (" (undo)" if entry.kind == "rollback" else ""),
                           max_chars=30).replace("\n", " ")),
                Text(str(entry.risk), style=RISK_STYLE.get(str(entry.risk), "")), when,
                Text(inert(entry.goal, max_chars=34).replace("\n", " ")),
                Text(inert("; ".join(entry.reasons), max_chars=56).replace("\n", " ")),
                key=entry.plan_id)

    def selected(self) -> str | None:
        """The plan id under the cursor."""
        table = self.query_one(DataTable)
        if not self.queue.entries or table.cursor_row < 0:
            return None
        return self.queue.entries[min(table.cursor_row, len(self.queue.entries) - 1)].plan_id

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row opens it."""
        event.stop()
        self.action_approve()

    def action_approve(self) -> None:
        """Open the selected plan in the approval box (an undo an agent asked for: ask
        whether to roll the plan back)."""
        plan_id = self.selected()
        if plan_id is not None:
            undo = any(e.plan_id == plan_id and e.kind == "rollback" for e in self.queue.entries)
            self.dismiss(QueueChoice("undo" if undo else "approve", plan_id))

    def action_dismiss_plan(self) -> None:
        """Drop the selected plan from the queue."""
        plan_id = self.selected()
        if plan_id is not None:
            self.dismiss(QueueChoice("dismiss", plan_id))

    def action_leave(self) -> None:
        """Leave the app."""
        self.dismiss(QueueChoice("quit"))
