"""The TUI's Fix button against the real daemon and the fake model: a failed plan is
rolled back, evaluated, and the model's fix comes back to the approval box."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console
from textual.widgets import Button, Static

from annactl.commands.flow import Flow
from annactl.core.config import load_settings
from annactl.core.daemon_client import DaemonClient
from annactl.core.exit_codes import ExitStatus
from annactl.interactive.tui.app import AnnaTui, Source
from annactl.interactive.tui.screens.approval import ApprovalScreen
from annactl.interactive.tui.screens.result import ResultScreen
from annactl.interactive.tui.screens.word import WordScreen

from .conftest import Anna
from .test_e2e_loop import _failing, _fix, _verdict
from .tuiwait import on_screen, ready, until

pytestmark = pytest.mark.anyio

SIZE = (100, 40)
REQUEST = "replace app.conf with the new one"


def _app(anna: Anna) -> AnnaTui:
    settings = load_settings(socket=anna.daemon.socket, llm_url=anna.llm.ollama_url,
                              llm_model="test-model", autostart=False, templates=False)
    return AnnaTui(Source(text=REQUEST, use_templates=False),
                   connect=lambda: Flow(settings, DaemonClient(anna.daemon.socket)))


def _result(app: AnnaTui, status: str) -> bool:
    return on_screen(app, ResultScreen, focus="close") and str(app.screen.record.status) == status


def _evaluated(app: AnnaTui, met: bool) -> bool:
    screen = app.screen
    if not isinstance(screen, ResultScreen) or screen.evaluation is None:
        return False
    shown = Console(width=200, record=True, file=io.StringIO())
    shown.print(screen.query_one("#evaluation", Static).content)
    words = "goals met" if met else "goals not met"
    return screen.evaluation.goals_met is met and f"Evaluation: {words}" in shown.export_text()


async def test_fix_button_plans_anew_and_asks_again(anna: Anna) -> None:
    note, target, failing = _failing(anna)
    anna.llm.push(failing, _verdict(False), _fix(anna, target), _verdict(True))
    app = _app(anna)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, ApprovalScreen, focus="cancel")
        await pilot.press("a")
        # its copy step failed in the preview: approving asks for "run anyway" typed
        await ready(pilot, WordScreen, focus="word")
        await pilot.press(*"run anyway", "enter")
        await until(pilot, lambda: _result(app, "failed"), "the failed result")
        await until(pilot, lambda: _evaluated(app, met=False), "the evaluation")
        fix: Any = app.screen.query_one("#fix", Button)
        await until(pilot, lambda: not fix.disabled, "the Fix button to be enabled")
        assert note.read_text() == "original\n"
        await pilot.press("f")
        approval = await ready(pilot, ApprovalScreen, focus="cancel")
        assert approval.prepared.source == "fix" and not target.exists()  # approved afresh
        await pilot.press("a")
        await until(pilot, lambda: _result(app, "succeeded"), "the fix's result")
        await until(pilot, lambda: _evaluated(app, met=True), "the fix's evaluation")
        assert app.screen.query_one("#fix", Button).disabled
        await pilot.press("f")  # nothing to fix: the screen stays
        assert isinstance(app.screen, ResultScreen)
        await pilot.press("q")
        await until(pilot, lambda: app.return_value is not None, "the app to exit")
    assert app.return_value == ExitStatus.SUCCESS
    assert target.read_text() == "port = 8080\n"
    assert len(anna.llm.chat_bodies()) == 4
