"""Issue 23 (TUI): a question whose offline answer has checks runs them once, not twice.

The TUI shows Anna's offline answer at once and the planner runs that plan's checks for the
model to read (a question's template checks); the TUI used to start the same checks again
for its box. Counted in the real daemon's journal (``checks_run`` events of the plan), with
the real annactl planner and a fake model server that holds its reply until the test lets
it go (nothing sleeps).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Any

import pytest

from annactl.commands.flow import Flow
from annactl.core.config import ClientSettings
from annactl.core.daemon_client import DaemonClient
from annactl.interactive.tui.app import AnnaTui, Source
from annactl.interactive.tui.screens.approval import ApprovalScreen
from annactl.interactive.tui.screens.details import DetailsScreen
from tests.fakellm import Reply
from tests.waiting import WAIT_S

from .conftest import Anna
from .tuiwait import notified, ready, until

pytestmark = pytest.mark.anyio

QUESTION = "why is my disk so full lately"
"""A question the disk usage template matches weakly: its answer has checks, the model is
asked in the answer form and reads their output."""
HOSTILE = "\x1b]0;owned\x07[bold red]LOOK[/] \x1b[2J"


def _check_rounds(anna: Anna, plan_id: str) -> int:
    with sqlite3.connect(anna.daemon.state / "journal.sqlite3", timeout=WAIT_S) as db:
        (count,) = db.execute("SELECT count(*) FROM events WHERE plan_id=? AND kind=?",
                              (plan_id, "checks_run")).fetchone()
    return int(count)


def _app(anna: Anna) -> AnnaTui:
    settings = ClientSettings(socket=anna.daemon.socket, llm_url=anna.llm.ollama_url, llm_forms="small",
                              llm_model="test-model", autostart=False, llm_timeout=60)
    return AnnaTui(Source(text=QUESTION), connect=lambda: Flow(
        settings, DaemonClient(anna.daemon.socket)))


async def test_the_offline_answers_checks_run_once_and_reach_box_and_model(anna: Anna) -> None:
    release = threading.Event()
    anna.llm.push(Reply(json.dumps({"answer": f"Big: {HOSTILE}", "citations": []}),
                        hold=release))
    app = _app(anna)
    try:
        async with app.run_test(size=(110, 40)) as pilot:
            box = await ready(pilot, ApprovalScreen, focus="cancel", selector="#banner")
            offline = box.prepared
            assert offline.source == "template" and offline.annotated.checks
            # the model is asked only after the checks ran (it reads their output) ...
            await until(pilot, lambda: len(anna.llm.chat_bodies()) == 1, "the model's request")
            # ... and the box got the same results, without a round of its own
            await until(pilot, lambda: bool(offline.checks), "the check results in the box")
            assert _check_rounds(anna, offline.plan_id) == 1
            user = anna.llm.chat_bodies()[0]["messages"][1]["content"]
            assert "CHECK RESULTS" in user and f'"id":"{offline.checks[0].id}"' in user
            await pilot.press("d")
            details = await ready(pilot, DetailsScreen)
            assert offline.annotated.checks[0].id in _shown(details)
            await pilot.press("escape")
            await ready(pilot, ApprovalScreen, focus="cancel")
            release.set()
            await until(pilot, lambda: notified(app, "The model's plan is ready"),
                        "the model's answer")
            await pilot.press("m")
            await until(pilot, lambda: app.screen is not box and "Big:" in _shown(app.screen),
                        "the model's answer on screen")
            shown = _shown(app.screen)
            assert "\x1b" not in shown and "[bold red]" in shown  # inert, as text
            await pilot.press("q")
    finally:
        release.set()
    assert _check_rounds(anna, offline.plan_id) == 1
    with sqlite3.connect(anna.daemon.state / "journal.sqlite3", timeout=WAIT_S) as db:
        rounds = dict(db.execute("SELECT plan_id, count(*) FROM events WHERE kind=? "
                                 "GROUP BY plan_id", ("checks_run",)))
    assert rounds == {offline.plan_id: 1}  # no other plan of this request ran checks


def _shown(screen: Any) -> str:
    """The text a screen shows (every Static's content, rendered plain)."""
    from io import StringIO

    from rich.console import Console
    from textual.widgets import Static

    console = Console(file=StringIO(), width=200, record=True, color_system=None)
    for widget in screen.query(Static):
        console.print(widget.content)
    return console.export_text()
