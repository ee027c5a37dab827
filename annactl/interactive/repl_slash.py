"""The REPL's slash commands, their completion, and the words typed alone that act."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prompt_toolkit.completion import Completer, Completion

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

SLASH_COMMANDS = {
    "/status": "the machine at a glance",
    "/history": "plans, newest first",
    "/show": "/show ID: a stored plan and its outcome",
    "/apply": "/apply [ID] [--skip STEP] [--edit 'STEP=CMD']: run the last plan or a "
              "stored one (also: skip 3, edit 2 COMMAND)",
    "/clear": "clear the screen (also: clear)",
    "/fix": "ask the model for a new plan after the last one failed (also: fix)",
    "/rollback": "/rollback ID: undo a plan",
    "/memory": "remembered preferences (/memory forget KEY)",
    "/help": "this list",
    "/quit": "leave (also Ctrl-D)",
}
"""Slash commands and their one-line help."""
APPLY_WORDS = frozenset({"ok", "apply", "yes"})
"""Typed alone, these run the last plan shown."""
MAX_TURNS = 4
"""Previous turns sent to the planner as context."""


class SlashCompleter(Completer):
    """Completes slash commands, and plan ids after ``/show``, ``/apply``, ``/rollback``."""

    def __init__(self, plan_ids: Callable[[], list[str]]) -> None:
        self.plan_ids = plan_ids

    def get_completions(self, document: Document,
                        complete_event: CompleteEvent) -> Iterable[Completion]:
        """Slash command names first; then ids."""
        text = document.text_before_cursor
        if not text.startswith("/"):
            return
        if " " not in text:
            for name, meta in SLASH_COMMANDS.items():
                if name.startswith(text):
                    yield Completion(name, start_position=-len(text), display_meta=meta)
            return
        command, _, partial = text.partition(" ")
        if command in {"/show", "/apply", "/rollback"}:
            for plan_id in self.plan_ids():
                if plan_id.startswith(partial):
                    yield Completion(plan_id, start_position=-len(partial))
