"""The approval queue screen: a snapshot (also docs/tui-queue.svg), hostile text inert, and
the keys' choices (no daemon; tests/recipes/test_queue_tui.py drives the real one)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from anna_common.protocol.queue import QueueEntry, QueueList
from annactl.interactive.tui.app import AnnaTui, Source
from annactl.interactive.tui.screens.queue import QueueScreen

from .tuiwait import ready, until

pytestmark = pytest.mark.anyio
SIZE = (132, 22)
REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(__file__).parent / "__snapshots__" / "test_tui_queue" / \
    "test_snapshot_queue.svg"


def queue_list() -> QueueList:
    """Three plans as recipes leave them, a plan and an undo agents proposed."""
    base = 1795420800.0  # 2026-11-23 08:00 UTC
    return QueueList(entries=[
        QueueEntry(plan_id="20261123-030012-a1b2c3", recipe="paccache",
                   goal="Trim the package cache to the newest versions", risk="MEDIUM",
                   reasons=["trim: MEDIUM needs a person"],
                   queued_at=base),
        QueueEntry(plan_id="20261123-031502-d4e5f6", recipe="journal-vacuum",
                   goal="Shrink the systemd journal", risk="MEDIUM",
                   reasons=["vacuum: MEDIUM needs a person"], queued_at=base + 900),
        QueueEntry(plan_id="20261123-040000-0a0b0c", recipe="fstab-tidy",
                   goal="Goal \x1b]0;title\x07[bold]G[/bold]", risk="HIGH",
                   reasons=["edit: HIGH needs a person"], queued_at=base + 3600),
        QueueEntry(plan_id="20261123-050000-1a2b3c", recipe="", agent="claude-code",
                   goal="Install and enable docker", risk="MEDIUM",
                   reasons=["agent claude-code asks for this plan"], queued_at=base + 7200),
        QueueEntry(plan_id="20261123-051500-4d5e6f", recipe="", agent="goose", kind="rollback",
                   goal="undo: Set the wallpaper", risk="LOW",
                   reasons=["agent goose asks for this undo of a plan"], queued_at=base + 8100),
    ])


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    """Times in the table are local: make them the same everywhere."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def _app() -> AnnaTui:
    return AnnaTui(Source(queue=True, queue_list=queue_list()))


async def queue_ready(pilot: Any) -> None:
    """The queue table is mounted and focused."""
    await ready(pilot, QueueScreen, focus="queue-table")


def test_snapshot_queue(snap_compare: Any) -> None:
    assert snap_compare(_app(), terminal_size=SIZE, run_before=queue_ready)


def test_docs_screenshot_is_the_snapshot() -> None:
    # refresh with: pytest tests/ui/test_tui_queue.py --snapshot-update, then copy the file
    assert (REPO / "docs" / "tui-queue.svg").read_bytes() == SNAPSHOT.read_bytes()


async def test_hostile_goal_is_inert_and_q_quits() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, QueueScreen, focus="queue-table")
        from textual.widgets import DataTable

        cells = " ".join(str(c) for row in screen.query_one(DataTable).rows
                         for c in screen.query_one(DataTable).get_row(row))
        assert "\x1b" not in cells and "\x07" not in cells
        await pilot.press("q")
        await until(pilot, lambda: app.return_value is not None, "the app to exit")


async def test_moving_down_selects_the_next_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    app = _app()
    chosen: list[Any] = []
    monkeypatch.setattr(app, "load_plan", lambda: chosen.append(app.source.plan_id))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, QueueScreen, focus="queue-table")
        await pilot.press("down", "a")
        await until(pilot, lambda: chosen, "the plan to be opened")
    assert chosen == ["20261123-031502-d4e5f6"]
