"""The approval queue in the TUI against the real daemon: a recipe's MEDIUM plan waits,
``annactl tui`` opens on the queue, the person approves it there (Pilot) — through the
same approval box, focus on Cancel — or dismisses it."""

from __future__ import annotations

import pytest

from annactl.commands.flow import Flow
from annactl.core.config import load_settings
from annactl.core.daemon_client import DaemonClient
from annactl.core.exit_codes import ExitStatus
from annactl.interactive.tui.app import AnnaTui, Source
from annactl.interactive.tui.screens.approval import ApprovalScreen
from annactl.interactive.tui.screens.queue import QueueScreen
from annactl.interactive.tui.screens.result import ResultScreen
from tests.ui.tuiwait import ready, until

from .conftest import RecipeSite

pytestmark = pytest.mark.anyio
SIZE = (110, 30)

MEDIUM = """
description = "Clear old files"
[[steps]]
id = "clear"
description = "Remove the old directory"
command = "rm -r {work}/old"
"""


def _app(site: RecipeSite) -> AnnaTui:
    settings = load_settings(socket=site.daemon.socket, autostart=False)
    return AnnaTui(Source(queue=True),
                   connect=lambda: Flow(settings, DaemonClient(site.daemon.socket)))


def _queued(site: RecipeSite) -> str:
    (site.work / "old").mkdir()
    site.recipe("clear", MEDIUM.replace("{work}", str(site.work)))
    rc, out = site.json("recipe", "run", "clear", "--trigger", "timer")
    assert rc == 0 and out["outcome"] == "queued", out
    return str(out["plan_id"])


async def test_queued_plan_is_approved_from_the_tui(site: RecipeSite) -> None:
    plan_id = _queued(site)
    app = _app(site)
    async with app.run_test(size=SIZE) as pilot:
        queue = await ready(pilot, QueueScreen, focus="queue-table")
        assert [e.plan_id for e in queue.queue.entries] == [plan_id]
        await pilot.press("a")
        box = await ready(pilot, ApprovalScreen, focus="cancel")
        assert box.prepared.plan_id == plan_id
        assert (site.work / "old").is_dir()  # nothing ran before the approval
        await pilot.press("a")
        result = await ready(pilot, ResultScreen, focus="close")
        assert str(result.record.status) == "succeeded"
        await pilot.press("q")
        await until(pilot, lambda: app.return_value is not None, "the app to exit")
    assert app.return_value == ExitStatus.SUCCESS
    assert not (site.work / "old").exists()
    _rc, after = site.json("queue")
    assert after["entries"] == []


async def test_queued_plan_is_dismissed_from_the_tui(site: RecipeSite) -> None:
    plan_id = _queued(site)
    app = _app(site)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, QueueScreen, focus="queue-table")
        await pilot.press("d")
        await until(pilot, lambda: "Nothing waits" in str(
            app.query_one("#state").content), "the empty queue")
        await pilot.press("q")
        await until(pilot, lambda: app.return_value is not None, "the app to exit")
    assert (site.work / "old").is_dir()
    rc, shown = site.json("show", plan_id)
    assert rc == 0
    assert shown["status"] == "submitted"  # in history, never ran
    _rc, after = site.json("queue")
    assert after["entries"] == []


async def test_cancel_in_the_box_runs_nothing(site: RecipeSite) -> None:
    _queued(site)
    app = _app(site)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, QueueScreen, focus="queue-table")
        await pilot.press("enter")
        await ready(pilot, ApprovalScreen, focus="cancel")
        await pilot.press("enter")  # Enter on the fresh box presses Cancel
        await until(pilot, lambda: app.return_value is not None, "the app to exit")
    assert app.return_value == ExitStatus.DECLINED
    assert (site.work / "old").is_dir()
    _rc, after = site.json("queue")
    assert len(after["entries"]) == 1


