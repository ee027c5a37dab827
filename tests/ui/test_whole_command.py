"""The person sees the whole command before approving (issue 34 item 6): a 2,000-character
apt hook command, every word of it, in the one-shot view at every width and in the TUI's
approval box, and the same hook as a root shell's (valid on the test machine's distribution)
through the real annactl and in the REPL in tmux — wrapped, never cut, its markup-looking
words shown as text."""

from __future__ import annotations

import io
import json
import re
import shutil
from typing import Any

import pytest
from rich.console import Console

from anna_common.plan import MAX_COMMAND_BYTES
from annactl.commands.prepared import Prepared
from annactl.interactive.tui.app import AnnaTui, Source
from annactl.interactive.tui.screens.approval import ApprovalScreen
from annactl.ui import render
from annactl.ui.render_plan import COMMAND_CHARS
from tests.daemonfix import make_plan

from .conftest import Anna
from .plans import HOOK_TAIL, SHELL_HOOK, annotate_dict, hook_command, hook_words, plan_dict
from .tmuxrun import Tmux
from .tuiwait import ready

COMMAND = hook_command()
LIVE_COMMAND = hook_command(form=SHELL_HOOK)
MARKUP = "[bold red]hook[/]"


def visible(text: str, command: str = COMMAND) -> None:
    """Every word of ``command`` in ``text``, its end, its markup as text, no ellipsis."""
    missing = [w for w in hook_words(command) if w not in text]
    assert not missing, f"{len(missing)} words not shown, first {missing[:3]}"
    assert HOOK_TAIL in text or "anna-hook-tail-END" in text
    assert MARKUP in text or ("[bold" in text and "red]hook[/]" in text)  # may wrap there
    assert "…" not in text


def test_no_view_cuts_a_command_the_contract_allows() -> None:
    assert len(COMMAND) > 600
    assert COMMAND_CHARS >= MAX_COMMAND_BYTES


@pytest.mark.parametrize("width", [60, 100, 160])
def test_the_one_shot_view_shows_it_whole_at_every_width(width: int) -> None:
    plan = annotate_dict(plan_dict([("hook", COMMAND, "HIGH")]))
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None).print(render.plan_view(plan))
    visible(buffer.getvalue())


def test_the_real_annactl_prints_it_whole(anna: Anna) -> None:
    anna.llm.push(json.dumps(make_plan([("hook", LIVE_COMMAND, "HIGH")], goal="Update")))
    proc = anna.run("plan", "--no-templates", "update the package lists",
                    extra_env={"COLUMNS": "100"})
    assert proc.returncode == 0, proc.stderr
    visible(proc.stdout, LIVE_COMMAND)


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_repl_shows_it_whole(anna: Anna, tmux_runs: list[Tmux]) -> None:
    anna.llm.push(json.dumps(make_plan([("hook", LIVE_COMMAND, "HIGH")], goal="Update")))
    term = Tmux([*anna.argv, "repl", "--no-templates"], anna.env, anna.work)
    tmux_runs.append(term)
    term.wait_for(r"anna>")
    term.type("plan: update the package lists")
    term.keys("Enter")
    term.wait_for(r"Risk:")
    visible(term.history(), LIVE_COMMAND)


@pytest.mark.anyio
async def test_the_tui_approval_box_shows_it_whole() -> None:
    plan = annotate_dict(plan_dict([("hook", COMMAND, "HIGH")]))
    app = AnnaTui(Source(prepared=Prepared(plan_id="p-test", digest=plan.digest,
                                           annotated=plan, source="file")))
    async with app.run_test(size=(90, 40)) as pilot:
        screen = await ready(pilot, ApprovalScreen, focus="cancel")
        pane = screen.query_one("#commands")
        # in the box itself, before any "Show Details": the first words are on the screen
        first = _screen_text(app)
        assert "w0000;" in first and "Show Details" in first
        # and the whole command is laid out in the pane (nothing cropped): scrolled to its
        # end, the tail is on the screen
        lines: list[str] = []
        while True:
            lines.append(_screen_text(app))
            if pane.scroll_y >= pane.max_scroll_y:
                break
            pane.scroll_to(y=pane.scroll_y + pane.size.height - 1, animate=False)
            await pilot.pause()
        visible("\n".join(lines))
        assert app.focused is not None and app.focused.id == "cancel"


def _screen_text(app: Any) -> str:
    """What the terminal shows, as plain text (the SVG screenshot's text runs)."""
    svg = app.export_screenshot()
    text = re.sub(r"<[^>]+>", "", svg)
    return (text.replace("&#160;", " ").replace("&amp;", "&").replace("&lt;", "<")
            .replace("&gt;", ">").replace("&quot;", '"').replace("&#x27;", "'"))


def test_a_rollback_command_is_shown_whole_too() -> None:
    # it runs later, as approved now: a hook in it is as much the person's to see
    plan = annotate_dict(plan_dict([("edit", "cp /tmp/fstab.new /etc/fstab", "HIGH")],
                                   rollback=[("restore", COMMAND)],
                                   rollback_ids={"edit": "restore"}))
    buffer = io.StringIO()
    Console(file=buffer, width=100, color_system=None).print(render.plan_view(plan))
    assert "Rollback commands" in buffer.getvalue()
    visible(buffer.getvalue())
