"""Rich renderables of a plan's execution as it streams: one progress line per event, and
a step's streamed output cut into whole, inert, capped lines.

A step printing escape codes or a huge line cannot disturb the terminal: every line is made
inert (:mod:`annactl.ui.console`) and cut. The names are also importable from
:mod:`annactl.ui.render`, where callers find them with the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from annactl.ui.console import inert, inert_text
from annactl.ui.render_plan import tail

if TYPE_CHECKING:
    from anna_common.protocol.models import ExecEvent


def _counter(event: ExecEvent) -> str:
    return f"[{event.index}/{event.total}] " if event.index and event.total else ""


def _step_started(event: ExecEvent) -> RenderableType | None:
    return Text(f"{_counter(event)}▶ ", style="cyan") + \
        Text(inert(event.step_id or "", max_chars=60), style="bold") + \
        Text(" " + inert(event.message, max_chars=200), style="dim")


def _step_finished(event: ExecEvent, *, with_output: bool = True) -> RenderableType | None:
    ok = event.status == "succeeded"
    line = Text(f"{_counter(event)}{'✔' if ok else '✘'} ", style="green" if ok else "red")
    line.append(inert(event.step_id or "", max_chars=60), style="bold")
    line.append(f"  exit {event.exit_code}" if event.exit_code is not None else "")
    if event.code == "CONFINEMENT_REFUSED":  # it never ran: say why, in words
        line.append("  not run: this machine could not confine it — "
                    + inert(event.message, max_chars=300), style="red")
    if with_output and event.output.strip():
        return Group(line, Text(_indent(tail(event.output)), style="dim"))
    return line


def _step_output(event: ExecEvent) -> RenderableType | None:
    return Text(_indent(tail(event.output, 3)), style="dim") if event.output.strip() else None


def _undo(event: ExecEvent) -> RenderableType | None:
    step = inert(event.step_id or "", max_chars=60)
    if event.type == "undo_started":
        return Text("↶ undoing ", style="yellow") + Text(step)
    failed = event.status in {"undo_failed", "failed"}
    line = Text("↶ undo failed " if failed else "↶ undone ", style="bold red" if failed
                else "yellow") + Text(step)
    if event.message.strip():
        line.append(": " + inert(event.message, max_chars=200), style="dim")
    return line


def _error(event: ExecEvent) -> RenderableType | None:
    return Text(f"error {event.code or ''}: ", style="bold red") + \
        inert_text(event.message, max_chars=400)


_EVENT_VIEWS = {"step_started": _step_started, "step_finished": _step_finished,
                "step_output": _step_output, "undo_started": _undo, "undo_finished": _undo,
                "error": _error}


def event_view(event: ExecEvent, *, streamed: bool = False) -> RenderableType | None:
    """One execution event as a progress line (None for events not shown).

    ``streamed``: the step's output already arrived as ``step_output`` events, so its
    ``step_finished`` line does not repeat it.
    """
    if event.type == "step_finished":
        return _step_finished(event, with_output=not streamed)
    view = _EVENT_VIEWS.get(str(event.type))
    return view(event) if view is not None else None


class OutputLines:
    """Turns streamed output chunks into whole lines, per step (chunks split lines anywhere).

    Lines are made inert and capped, so a step printing escape codes or a huge line cannot
    disturb the terminal.
    """

    MAX_LINE = 400
    """Longer lines are cut."""

    def __init__(self) -> None:
        self._partial: dict[str, str] = {}

    def feed(self, step_id: str | None, chunk: str) -> list[str]:
        """Complete lines now available for ``step_id``."""
        key = step_id or ""
        text = self._partial.get(key, "") + inert(chunk)
        *lines, rest = text.split("\n")
        self._partial[key] = rest[-self.MAX_LINE * 4:]
        return [line[: self.MAX_LINE] for line in lines]

    def flush(self, step_id: str | None) -> list[str]:
        """Whatever is left for ``step_id`` (its last line had no newline)."""
        rest = self._partial.pop(step_id or "", "")
        return [rest[: self.MAX_LINE]] if rest.strip() else []


def output_line(line: str) -> Text:
    """One line of a step's output, indented and dim."""
    return Text("    " + line, style="dim")


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())
