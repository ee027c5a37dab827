"""``annactl tui [--plan-file F | --plan ID | "TEXT"]``: the approval screen; alone, the queue."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from anna_common.errors import UsageError
from annactl.core.exit_codes import ExitStatus

if TYPE_CHECKING:
    from pathlib import Path

    from annactl.ui.console import Consoles


def run(consoles: Consoles, *, text: str | None, plan_file: Path | None, plan_id: str | None,
        use_templates: bool) -> int:
    """Check the arguments, then run the Textual app; its result is the exit status."""
    given = [x for x in (text, plan_file, plan_id) if x]
    if len(given) > 1:
        raise UsageError("give exactly one of TEXT, --plan-file FILE or --plan ID")
    from annactl.commands.stdin_text import need_terminal

    without = "use annactl ask or annactl apply without a terminal"
    need_terminal("the approval screen reads your keys at a terminal", otherwise=without)
    if not sys.stdout.isatty():
        raise UsageError("the approval screen draws on a terminal, and stdout is not one",
                         hint=without)
    if not given:
        return _queue(use_templates=use_templates)
    if plan_file is not None and not plan_file.is_file():
        raise UsageError(f"cannot read {plan_file}: no such file")
    from annactl.commands.flow import connect_flow
    from annactl.core.config import load_settings
    from annactl.interactive.tui.app import AnnaTui, Source

    settings = load_settings()  # a broken config is reported before the screen starts
    app = AnnaTui(Source(text=text, plan_file=plan_file, plan_id=plan_id,
                         use_templates=use_templates and settings.templates),
                  connect=lambda: connect_flow(settings))
    result = app.run()
    _say(consoles, app.exit_note)
    return int(result) if result is not None else int(ExitStatus.DECLINED)


def _say(consoles: Consoles, note: str | None) -> None:
    """The app's last word on stderr, after the screen is gone (Cancel says what it did)."""
    if note:
        consoles.err.print(note, markup=False, highlight=False)


def _queue(*, use_templates: bool) -> int:
    """``annactl tui`` alone: open on the approval queue when plans wait in it."""
    from annactl.commands.flow import connect_flow
    from annactl.core.config import load_settings
    from annactl.interactive.tui.app import AnnaTui, Source

    settings = load_settings()
    flow = connect_flow(settings)
    queue = flow.daemon.queue()
    if not queue.entries:
        raise UsageError("nothing waits in the approval queue; give TEXT, --plan-file FILE "
                         "or --plan ID")
    app = AnnaTui(Source(queue=True, queue_list=queue, use_templates=use_templates),
                  connect=lambda: flow)
    result = app.run()
    return int(result) if result is not None else int(ExitStatus.DECLINED)
