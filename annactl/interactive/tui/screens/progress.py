"""Execution progress: one line per step with its state, and the output as it arrives."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, RichLog, Static

from annactl.interactive.tui.widgets import StepLine, title_text
from annactl.ui import render
from annactl.ui.console import inert

if TYPE_CHECKING:
    from anna_common.protocol.models import ExecEvent
    from annactl.commands.prepared import Prepared


class ProgressScreen(Screen[None]):
    """Shows execution events; Ctrl-C or Escape asks the daemon to stop and roll back."""

    BINDINGS = [  # noqa: RUF012 - Textual's declared type
        Binding("ctrl+c", "stop", "Stop and roll back", priority=True),
        Binding("escape", "stop", "Stop and roll back"),
    ]

    def __init__(self, prepared: Prepared) -> None:
        super().__init__()
        self.prepared = prepared
        self.stop_requested = False
        self.lines = render.OutputLines()
        self.streamed: set[str | None] = set()

    def compose(self) -> ComposeResult:
        """Title, step lines, output log."""
        steps = self.prepared.annotated.steps
        with Vertical(id="progress") as box:
            box.border_title = title_text(self.prepared.annotated)
            yield Static(Text(f"Running {len(steps)} step(s)…"), id="progress-state")
            for number, step in enumerate(steps, start=1):
                yield StepLine(number, len(steps), step.id, step.description)
        yield RichLog(id="output", wrap=True, markup=False, highlight=False, max_lines=2000)
        yield Footer()

    def apply(self, event: ExecEvent) -> None:
        """Show one event: update the step's line and append its output."""
        kind = str(event.type)
        if event.index and kind in {"step_started", "step_finished"}:
            step = self.query_one(f"#step-{event.index}", StepLine)
            step.set_status("running" if kind == "step_started" else event.status or "failed",
                            event.exit_code if kind == "step_finished" else None)
        if kind in {"undo_started", "undo_finished"}:
            self._mark_undo(event)
        self._log(event)
        if kind == "plan_finished":
            state = Text("Finished: ") + render.status_text(inert(event.status or "", max_chars=30))
            self.query_one("#progress-state", Static).update(state)

    def _log(self, event: ExecEvent) -> None:
        """Output as whole lines (chunks split lines anywhere), then the event's own line."""
        log = self.query_one("#output", RichLog)
        if event.type == "step_output":
            self.streamed.add(event.step_id)
            for text in self.lines.feed(event.step_id, event.output):
                log.write(render.output_line(text))
            return
        if event.type == "step_finished":
            for text in self.lines.flush(event.step_id):
                log.write(render.output_line(text))
        view = render.event_view(event, streamed=event.step_id in self.streamed)
        if view is not None:
            log.write(view)

    def _mark_undo(self, event: ExecEvent) -> None:
        for line in self.query(StepLine):
            if line.step_id == inert(event.step_id or "", max_chars=40):
                ok = event.status not in {"undo_failed", "failed"}
                if event.type == "undo_finished":
                    line.set_status("undone" if ok else "undo_failed")

    def action_stop(self) -> None:
        """Ask the app to cancel the plan (the daemon stops it and rolls back)."""
        if self.stop_requested:
            return
        self.stop_requested = True
        self.query_one("#progress-state", Static).update(
            Text("Stopping: asking the daemon to stop and roll back…", style="bold yellow"))
        stop = getattr(self.app, "stop_execution", None)
        if callable(stop):
            stop()
