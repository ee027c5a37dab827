"""Issue 24 in the TUI, with the real daemon and a model the test keeps slow (the fake server
holds its reply until the test releases it; nothing sleeps): Anna's offline answer first, the
plan on screen never changes under the person, and the progress line shows the model budget."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import pytest
from textual.widgets import Static

from annactl.commands.flow import Flow
from annactl.core.config import ClientSettings
from annactl.core.daemon_client import DaemonClient
from annactl.core.exit_codes import ExitStatus
from annactl.interactive.tui.app import AnnaTui, Source
from annactl.interactive.tui.screens.approval import ApprovalScreen
from tests.daemonfix import make_plan
from tests.fakellm import Reply

from .conftest import Anna
from .tuiwait import notified, on_screen, ready, until

pytestmark = pytest.mark.anyio

SIZE = (110, 40)
WEAK = "free up space"
"""A request the disk usage template matches only weakly (a keyword): the model is asked."""
BUDGET = re.compile(r"model · (\d+\.\d) s · model budget \d+ / 60 s")


def _app(anna: Anna) -> AnnaTui:
    settings = ClientSettings(socket=anna.daemon.socket, llm_url=anna.llm.ollama_url, llm_forms="small",
                              llm_model="test-model", autostart=False, llm_timeout=60)
    return AnnaTui(Source(text=WEAK), connect=lambda: Flow(settings,
                                                           DaemonClient(anna.daemon.socket)))


def _text(widget: Static) -> str:
    """What the widget shows, as plain text (its content may be a Rich group)."""
    from io import StringIO

    from rich.console import Console

    content = widget.content
    if isinstance(content, str):
        return content
    console = Console(file=StringIO(), width=200, record=True, color_system=None)
    console.print(content)
    return console.export_text()


async def _offline_box(pilot: Any) -> ApprovalScreen:
    """The offline answer's approval box, labelled, focus on Cancel."""
    box = await ready(pilot, ApprovalScreen, focus="cancel", selector="#banner")
    banner = _text(box.query_one("#banner", Static))
    assert "Anna's offline answer" in banner and "confidence: low" in banner
    assert box.prepared.source == "template"
    return box


def _state(app: AnnaTui) -> str:
    return _text(app.query_one("#state", Static))


async def test_offline_answer_first_then_the_model_plan_only_when_asked(anna: Anna) -> None:
    release = threading.Event()
    target = anna.work / "m.txt"
    anna.llm.push(Reply(json.dumps(make_plan([("write", f"echo m > {target}", "LOW")],
                                             goal="The model's way")), hold=release))
    app = _app(anna)
    try:
        async with app.run_test(size=SIZE) as pilot:
            box = await _offline_box(pilot)
            offline_id = box.prepared.plan_id
            # the model is working meanwhile: its request is in, the budget line ticks
            await until(pilot, lambda: len(anna.llm.chat_bodies()) == 1, "the model's request")
            first = await until(pilot, lambda: BUDGET.search(_state(app)), "the budget line")
            await until(pilot, lambda: (m := BUDGET.search(_state(app))) is not None
                        and m.group(1) != first.group(1), "the line to tick on its own")
            release.set()
            await until(pilot, lambda: notified(app, "The model's plan is ready"),
                        "the ready notice")
            # the box did not change under the person: same screen, same plan, now a notice
            assert app.screen is box and box.prepared.plan_id == offline_id
            assert "press m to see it" in _text(box.query_one("#banner", Static))
            await pilot.press("m")
            await until(pilot, lambda: on_screen(app, ApprovalScreen, focus="cancel")
                        and app.screen is not box, "the model's box, focus on Cancel")
            model = app.screen
            assert isinstance(model, ApprovalScreen)
            assert model.prepared.source == "model" and model.prepared.plan_id != offline_id
            assert str(model.query_one("#box").border_title) == "The model's way"
            assert not model.query("#banner")  # the model's plan is not labelled offline
            assert str(anna.daemon.client().get_plan(offline_id).status) == "dry_run"
            await pilot.press("c")
            await until(pilot, lambda: app.return_value is not None, "the app to exit")
    finally:
        release.set()
    assert app.return_value == ExitStatus.DECLINED
    assert not target.exists()


async def test_stopping_the_wait_keeps_the_offline_answer(anna: Anna) -> None:
    release = threading.Event()
    anna.llm.push(Reply(json.dumps(make_plan([("x", "true", "LOW")], goal="late")),
                        hold=release))
    app = _app(anna)
    try:
        async with app.run_test(size=SIZE) as pilot:
            box = await _offline_box(pilot)
            await until(pilot, lambda: len(anna.llm.chat_bodies()) == 1, "the model's request")
            await pilot.press("w")
            await until(pilot, lambda: "stopped waiting" in _text(box.query_one("#banner",
                                                                                Static)),
                        "the stopped line")
            assert not app.waiting_model and app.screen is box
            release.set()  # the late reply: the planner was cancelled, nothing is shown
            await until(pilot, lambda: len(anna.llm.chat_bodies()) == 1 and all(
                w.is_finished for w in app.workers if w.group == "plan"), "the planner's end")
            assert app.screen is box and box.prepared.source == "template"
            assert not notified(app, "failed")  # the cancel it asked for is no failure
            plans = anna.daemon.client().list_plans().plans
            assert [p.title for p in plans] == ["Show disk usage"]  # no late plan stored
            await pilot.press("c")
            await until(pilot, lambda: app.return_value is not None, "the app to exit")
    finally:
        release.set()
    assert app.return_value == ExitStatus.DECLINED


async def test_a_failed_model_leaves_the_same_offline_plan(anna: Anna) -> None:
    release = threading.Event()
    anna.llm.push(Reply("not json at all", hold=release), "still not json")
    app = _app(anna)
    try:
        async with app.run_test(size=SIZE) as pilot:
            box = await _offline_box(pilot)
            offline_id = box.prepared.plan_id
            release.set()
            await until(pilot, lambda: "offline answer stands" in _text(
                box.query_one("#banner", Static)), "the note on the same box")
            assert app.screen is box and box.prepared.plan_id == offline_id
            assert box.prepared.outcome is not None and box.prepared.outcome.offline_reason
            # no second copy of the plan was stored
            plans = anna.daemon.client().list_plans().plans
            assert len(plans) == 1 and plans[0].plan_id == offline_id
            await pilot.press("c")
            await until(pilot, lambda: app.return_value is not None, "the app to exit")
    finally:
        release.set()
    assert app.return_value == ExitStatus.DECLINED


async def test_the_progress_line_shows_the_model_budget_as_the_spinner_does(anna: Anna) -> None:
    """No template here: the line alone, ticking between two reports of the planner."""
    from annactl.commands.spinner import _spinner_text
    from annactl.interactive.tui.messages import PlanningProgress

    release = threading.Event()
    anna.llm.push(Reply(json.dumps(make_plan([("x", "true", "LOW")], goal="Slow")),
                        hold=release))
    settings = ClientSettings(socket=anna.daemon.socket, llm_url=anna.llm.ollama_url, llm_forms="small",
                              llm_model="test-model", autostart=False, llm_budget=45)
    seen: list[Any] = []
    app = AnnaTui(Source(text="do the slow thing", use_templates=False),
                  connect=lambda: Flow(settings, DaemonClient(anna.daemon.socket)))
    try:
        async with app.run_test(size=SIZE, message_hook=lambda m: seen.append(m)
                                if isinstance(m, PlanningProgress) else None) as pilot:
            line = re.compile(r"model · (\d+\.\d) s · model budget (\d+) / 45 s")
            first = await until(pilot, lambda: line.search(_state(app)), "the budget line")
            reports = len(seen)
            await until(pilot, lambda: (m := line.search(_state(app))) is not None
                        and m.group(1) != first.group(1), "the line to move")
            assert len(seen) == reports  # it moved on its own clock, not on a new report
            # one wording with the CLI spinner
            spinner = str(_spinner_text(seen[-1].progress, 0.0))
            assert re.search(r"Planning… model · [\d.]+ s · model budget \d+ / 45 s", spinner)
            release.set()
            await ready(pilot, ApprovalScreen, focus="cancel")
            assert "budget" not in _state(app)  # the line stops with the plan
            await pilot.press("c")
            await until(pilot, lambda: app.return_value is not None, "the app to exit")
    finally:
        release.set()


async def test_an_offline_answer_without_steps_then_the_models_answer(anna: Anna) -> None:
    """Nothing to approve: the offline answer is shown above the line, the model's below it."""
    release = threading.Event()
    anna.llm.push(Reply(json.dumps({"answer": "The model says all is well.", "citations": []}),
                        hold=release))
    settings = ClientSettings(socket=anna.daemon.socket, llm_url=anna.llm.ollama_url, llm_forms="small",
                              llm_model="test-model", autostart=False)
    app = AnnaTui(Source(text="tell me about system health"),
                  connect=lambda: Flow(settings, DaemonClient(anna.daemon.socket)))
    try:
        async with app.run_test(size=SIZE) as pilot:
            # mount() is asynchronous: the widgets are in the DOM before they are mounted
            label = await until(pilot, lambda: next(
                (w for w in app.query("#offline-label").results(Static) if w.is_mounted and all(
                    o.is_mounted for o in app.query("#offline"))), None),
                "the offline answer and its label, mounted")
            assert "Anna's offline answer" in _text(label) and "system_status_v1" in _text(label)
            assert app.query_one("#offline", Static).is_mounted
            assert not isinstance(app.screen, ApprovalScreen) and app.status == ExitStatus.SUCCESS
            release.set()
            await until(pilot, lambda: "The model says all is well." in _state(app),
                        "the model's answer")
            assert "The model's answer is below" in _text(label)
            await pilot.press("q")
            await until(pilot, lambda: app.return_value is not None, "the app to exit")
    finally:
        release.set()
    assert app.return_value == ExitStatus.SUCCESS


async def test_approving_the_offline_answer_runs_it_and_ends_the_wait(anna: Anna) -> None:
    from annactl.interactive.tui.screens.result import ResultScreen

    release = threading.Event()
    anna.llm.push(Reply(json.dumps(make_plan([("x", "true", "LOW")], goal="Too late")),
                        hold=release))
    app = _app(anna)
    try:
        async with app.run_test(size=SIZE) as pilot:
            box = await _offline_box(pilot)
            offline_id = box.prepared.plan_id
            await until(pilot, lambda: len(anna.llm.chat_bodies()) == 1, "the model's request")
            await pilot.press("a")  # a read-only plan: no second question
            result = await ready(pilot, ResultScreen, focus="close")
            assert result.record.plan_id == offline_id
            release.set()
            await until(pilot, lambda: all(w.is_finished for w in app.workers
                                           if w.group == "plan"), "the planner's end")
            assert isinstance(app.screen, ResultScreen) and not notified(app, "failed")
            titles = [p.title for p in anna.daemon.client().list_plans().plans]
            assert "Too late" not in titles
            # a later planning run (a fix) is shown as any plan, never held back or dropped
            from annactl.interactive.tui.messages import PlanReady

            settings = ClientSettings(socket=anna.daemon.socket, autostart=False)
            later = Flow(settings, DaemonClient(anna.daemon.socket)).plan_file_text(
                json.dumps(make_plan([("y", "true", "LOW")], goal="A later plan")))
            app.post_message(PlanReady(later))
            await until(pilot, lambda: on_screen(app, ApprovalScreen, focus="cancel")
                        and app.screen.prepared.plan_id == later.plan_id, "the later plan")
            await pilot.press("c")
            await until(pilot, lambda: app.return_value is not None, "the app to exit")
    finally:
        release.set()
