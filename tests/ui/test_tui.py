"""The TUI screens: Pilot-driven behaviour and a snapshot per screen.

These tests hand the app a plan already annotated by Anna's validation, so they need no
daemon; the end-to-end tests (tests/ui/test_e2e_tui.py) run the same app against the real
daemon, and one test drives the real program in tmux.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import RichLog

from anna_common.findings import AnnotatedPlan
from anna_common.protocol.models import ExecEvent, ExecEventType
from annactl.commands.prepared import Prepared
from annactl.core.exit_codes import ExitStatus
from annactl.interactive.tui.app import AnnaTui, Source
from annactl.interactive.tui.screens.approval import ApprovalScreen
from annactl.interactive.tui.screens.details import DetailsScreen
from annactl.interactive.tui.screens.progress import ProgressScreen
from annactl.interactive.tui.screens.word import WordScreen

from .plans import HOSTILE_NOTES
from .tuiwait import notified, ready, until

pytestmark = pytest.mark.anyio

SIZE = (90, 30)
APPROVAL = {"focus": "cancel"}
"""An approval box is ready when focus sits on Cancel (its AUTO_FOCUS)."""


def shown(widget: Any) -> str:
    """The plain text a Static shows (its content rendered without colour)."""
    import io

    from rich.console import Console

    buffer = io.StringIO()
    Console(file=buffer, width=200, color_system=None).print(widget.content)
    return buffer.getvalue()


def _prepared(plan: AnnotatedPlan) -> Prepared:
    return Prepared(plan_id="p-test", digest=plan.digest, annotated=plan, source="file")


def _app(plan: AnnotatedPlan) -> AnnaTui:
    return AnnaTui(Source(prepared=_prepared(plan)))


async def test_box_shows_title_risk_steps_rollback_and_focus_on_cancel(
        low_plan: AnnotatedPlan) -> None:
    app = _app(low_plan)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, ApprovalScreen, **APPROVAL)
        assert isinstance(screen, ApprovalScreen)
        assert app.focused is not None and app.focused.id == "cancel"
        texts = " ".join(shown(w) for w in screen.query("Static"))
        assert "Risk:" in texts and "LOW" in texts
        assert "Steps: 1" in texts and "Rollback: " in texts
        assert str(screen.query_one("#box").border_title) == "Do the thing"
        await pilot.press("enter")  # Enter on the fresh box presses Cancel
        await until(pilot, lambda: app.return_value is not None, "the app to exit")
    assert app.return_value == ExitStatus.DECLINED


@pytest.mark.parametrize("key", ["c", "escape"])
async def test_cancel_keys(low_plan: AnnotatedPlan, key: str) -> None:
    app = _app(low_plan)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, ApprovalScreen, **APPROVAL)
        await pilot.press(key)
        await until(pilot, lambda: app.return_value is not None, "the app to exit")
    assert app.return_value == ExitStatus.DECLINED
    # said on the terminal once the screen is gone (annactl/interactive/launch.py)
    assert app.exit_note == ("Cancelled: nothing was run. Plan p-test is kept; annactl "
                             "apply p-test runs it.")


async def test_details_and_back(high_plan: AnnotatedPlan) -> None:
    app = _app(high_plan)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, ApprovalScreen, **APPROVAL)
        await pilot.press("d")
        assert isinstance(await ready(pilot, DetailsScreen, focus="details-pane"), DetailsScreen)
        await pilot.press("escape")
        assert isinstance(await ready(pilot, ApprovalScreen, **APPROVAL), ApprovalScreen)


async def test_high_approve_opens_word_modal_and_wrong_word_approves_nothing(
        high_plan: AnnotatedPlan) -> None:
    app = _app(high_plan)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, ApprovalScreen, **APPROVAL)
        await pilot.press("a")
        word = await ready(pilot, WordScreen, focus="word")
        assert isinstance(word, WordScreen)
        await pilot.press(*"yes", "enter")
        await until(pilot, lambda: "not the word" in shown(word.query_one("#word-error")),
                    "the wrong-word message")
        assert isinstance(app.screen, WordScreen)  # still waiting
        assert "not the word" in shown(app.screen.query_one("#word-error"))
        assert not app.executing
        await pilot.press("escape")  # back to the box, not approved
        assert isinstance(await ready(pilot, ApprovalScreen, **APPROVAL), ApprovalScreen)
        assert not app.executing


async def test_banned_cannot_be_approved(banned_plan: AnnotatedPlan) -> None:
    app = _app(banned_plan)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, ApprovalScreen, **APPROVAL)
        assert app.screen.query_one("#approve").disabled
        await pilot.press("a")
        # the refusal is the key's own answer: once it shows, the key has been handled
        await until(pilot, lambda: notified(app, "cannot be approved"), "the refusal")
        assert isinstance(app.screen, ApprovalScreen)
        assert not app.executing
        assert any("cannot be approved" in n.message for n in app._notifications)


async def test_plan_without_steps_shows_notes() -> None:
    from .plans import annotate_dict, plan_dict

    plan = annotate_dict(plan_dict([], notes="All good: 3 failed units? No, none."))
    app = _app(plan)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "All good" in shown(app.query_one("#state")), "the notes")
        assert not isinstance(app.screen, ApprovalScreen)
        assert "All good" in shown(app.query_one("#state"))
        await pilot.press("q")
        await until(pilot, lambda: app.return_value is not None, "the app to exit")
    assert app.return_value == ExitStatus.SUCCESS


async def test_hostile_text_is_inert_in_the_tui(hostile_plan: AnnotatedPlan) -> None:
    app = _app(hostile_plan)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, ApprovalScreen, **APPROVAL)
        await pilot.press("d")
        details = await ready(pilot, DetailsScreen, focus="details-pane")
        text = shown(details.query_one("#plan-view"))
        assert "[bold red]LOUD[/]" in text
        assert "\x1b" not in text and "\x07" not in text
        assert "\x1b" not in str(app.screen_stack[-2].query_one("#box").border_title)


# ---------------------------------------------------------------------- snapshots
# snap_compare takes its picture after a fixed number of pauses; each test waits (in
# run_before) until what it photographs is mounted and focused, and presses its own keys.


async def approval_ready(pilot: Any) -> None:
    """The approval box is mounted with focus on Cancel."""
    await ready(pilot, ApprovalScreen, **APPROVAL)


async def details_ready(pilot: Any) -> None:
    """``d`` on the ready box; then the details pane is mounted and focused."""
    await approval_ready(pilot)
    await pilot.press("d")
    await ready(pilot, DetailsScreen, focus="details-pane", selector="#plan-view")


def test_snapshot_approval_low(snap_compare: Any, low_plan: AnnotatedPlan) -> None:
    assert snap_compare(_app(low_plan), terminal_size=SIZE, run_before=approval_ready)


def test_snapshot_approval_wallpaper(snap_compare: Any) -> None:
    """The seed's approval box; this snapshot is also docs/tui-approval.svg."""
    from .plans import annotate_dict, wallpaper_plan

    assert snap_compare(_app(annotate_dict(wallpaper_plan(), "/home/user")),
                        terminal_size=SIZE, run_before=approval_ready)


def test_snapshot_approval_high(snap_compare: Any, high_plan: AnnotatedPlan) -> None:
    assert snap_compare(_app(high_plan), terminal_size=SIZE, run_before=approval_ready)


def test_snapshot_approval_banned(snap_compare: Any, banned_plan: AnnotatedPlan) -> None:
    assert snap_compare(_app(banned_plan), terminal_size=SIZE, run_before=approval_ready)


def test_snapshot_details(snap_compare: Any, high_plan: AnnotatedPlan) -> None:
    assert snap_compare(_app(high_plan), run_before=details_ready, terminal_size=(110, 40))


def test_snapshot_word(snap_compare: Any, high_plan: AnnotatedPlan) -> None:
    async def run_before(pilot: Any) -> None:
        await approval_ready(pilot)
        await pilot.press("a")
        word = await ready(pilot, WordScreen, focus="word")
        await pilot.press(*"/etc/fs")
        await until(pilot, lambda: word.query_one("#word").value == "/etc/fs", "the typed word")

    assert snap_compare(_app(high_plan), run_before=run_before, terminal_size=SIZE)


def test_snapshot_hostile(snap_compare: Any, hostile_plan: AnnotatedPlan) -> None:
    assert HOSTILE_NOTES
    assert snap_compare(_app(hostile_plan), run_before=details_ready,
                        terminal_size=(110, 40))


def _events(plan_id: str) -> list[ExecEvent]:
    kinds = ExecEventType
    return [
        ExecEvent(type=kinds.PLAN_STARTED, plan_id=plan_id, total=2),
        ExecEvent(type=kinds.STEP_STARTED, plan_id=plan_id, step_id="backup", index=1, total=2),
        ExecEvent(type=kinds.STEP_FINISHED, plan_id=plan_id, step_id="backup", index=1,
                  total=2, status="succeeded", exit_code=0, output="copied\n"),
        ExecEvent(type=kinds.STEP_STARTED, plan_id=plan_id, step_id="edit", index=2, total=2),
    ]


def test_snapshot_progress(snap_compare: Any, high_plan: AnnotatedPlan) -> None:
    app = _app(high_plan)

    async def run_before(pilot: Any) -> None:
        await approval_ready(pilot)  # else the box could be pushed over the progress view
        screen = ProgressScreen(_prepared(high_plan))
        await app.push_screen(screen)
        for event in _events("p-test"):
            screen.apply(event)
        await ready(pilot, ProgressScreen, focus="output")
        await until(pilot, lambda: len(screen.query_one("#output", RichLog).lines) >= 4,
                    "the four event lines in the log")

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def _record(plan: AnnotatedPlan, status: str) -> Any:
    from anna_common.protocol.models import PlanRecord, StepRecord, UndoResult

    undo = [UndoResult(step_id="edit", action="restore", target="/etc/fstab", ok=True,
                       message="restored byte-exact")] if status == "rolled_back" else []
    return PlanRecord(
        plan_id="p-test", digest=plan.digest, status=status, created_at=0.0, updated_at=0.0,
        caller_uid=1000, source="file", request="replace fstab", annotated=plan,
        steps=[StepRecord(step_id="backup", index=0, status="succeeded", exit_code=0),
               StepRecord(step_id="edit", index=1,
                          status="succeeded" if status == "succeeded" else "undone",
                          exit_code=0 if status == "succeeded" else 1, output="boom")],
        undo=undo)


@pytest.mark.parametrize("status", ["succeeded", "rolled_back"])
def test_snapshot_result(snap_compare: Any, high_plan: AnnotatedPlan, status: str) -> None:
    from annactl.interactive.tui.screens.result import ResultScreen

    app = _app(high_plan)

    async def run_before(pilot: Any) -> None:
        await approval_ready(pilot)
        await app.push_screen(ResultScreen(_record(high_plan, status)))
        await ready(pilot, ResultScreen, focus="close")

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_result_offers_rollback_only_where_it_applies(high_plan: AnnotatedPlan) -> None:
    from annactl.interactive.tui.screens import Decision
    from annactl.interactive.tui.screens.result import ResultScreen

    app = _app(high_plan)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, ApprovalScreen, **APPROVAL)
        chosen: list[Decision | None] = []
        await app.push_screen(ResultScreen(_record(high_plan, "rolled_back")), chosen.append)
        result = await ready(pilot, ResultScreen, focus="close")
        assert not result.query("#rollback")  # after a rollback the button is gone
        assert app.focused is not None and app.focused.id == "close"
        await pilot.press("r")  # nothing to roll back: stays
        assert chosen == []
        await pilot.press("q")
        # keys are handled in order: had "r" dismissed the screen, this would not be CLOSE
        await until(pilot, lambda: chosen == [Decision.CLOSE], "Close to be chosen")
        assert chosen == [Decision.CLOSE]
        await app.push_screen(ResultScreen(_record(high_plan, "succeeded")), chosen.append)
        await ready(pilot, ResultScreen, focus="close")
        await pilot.press("r")  # asks first, as the CLI does; focus on No
        from annactl.interactive.tui.screens.ask import YesNoScreen

        await ready(pilot, YesNoScreen, focus="no")
        await pilot.press("enter")  # No: nothing is rolled back
        await ready(pilot, ResultScreen, focus="close")
        assert chosen == [Decision.CLOSE]
        await pilot.press("r")
        await ready(pilot, YesNoScreen, focus="no")
        await pilot.press("y")
        await until(pilot, lambda: len(chosen) == 2, "a second choice")
        assert chosen == [Decision.CLOSE, Decision.ROLLBACK]
