"""Changing a plan's steps in the TUI (``e`` in the approval box), driven by Textual's Pilot
against the real daemon: a step left out or a command edited is a new plan, validated,
judged and previewed again with its own digest; the original is recorded as never run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Checkbox, Input

from annactl.core.daemon_client import DaemonClient
from annactl.core.exit_codes import ExitStatus
from annactl.interactive.tui.app import AnnaTui, Source
from annactl.interactive.tui.screens.approval import ApprovalScreen
from annactl.interactive.tui.screens.edit_steps import EditStepsScreen
from annactl.interactive.tui.screens.result import ResultScreen
from annactl.interactive.tui.screens.word import WordScreen
from tests.daemonfix import make_plan

from .conftest import Anna
from .test_e2e_tui import SIZE, _app, approval_ready, exited
from .tuiwait import notified, on_screen, ready, until

pytestmark = pytest.mark.anyio


def _two_steps(anna: Anna) -> tuple[AnnaTui, Path, Path]:
    a, b = anna.work / "a.txt", anna.work / "b.txt"
    a.write_text("a\n")
    b.write_text("b\n")
    plan = anna.plan_file(make_plan([("write_a", f"echo changed > {a}", "LOW"),
                                     ("write_b", f"echo changed > {b}", "LOW")],
                                    goal="Change two files"))
    return _app(anna, Source(plan_file=plan)), a, b


async def _edit_screen(pilot: Any) -> EditStepsScreen:
    await approval_ready(pilot)
    await pilot.press("e")
    return await ready(pilot, EditStepsScreen, focus="keep-0")


async def _new_plan(pilot: Any, old_id: str) -> ApprovalScreen:
    """The approval box of a plan other than ``old_id``."""
    await until(pilot, lambda: on_screen(pilot.app, ApprovalScreen, focus="cancel")
                and pilot.app.screen.prepared.plan_id != old_id, "the changed plan's box")
    screen = pilot.app.screen
    assert isinstance(screen, ApprovalScreen)
    return screen


def _status(anna: Anna, plan_id: str) -> str:
    return str(DaemonClient(anna.daemon.socket).get_plan(plan_id).status)


async def test_leaving_a_step_out_is_a_new_plan_that_runs_without_it(anna: Anna) -> None:
    app, a, b = _two_steps(anna)
    async with app.run_test(size=SIZE) as pilot:
        edit = await _edit_screen(pilot)
        original = edit.prepared
        await pilot.press("space")  # untick write_a
        assert not edit.query_one("#keep-0", Checkbox).value
        await pilot.click("#recheck")
        box = await _new_plan(pilot, original.plan_id)
        new = box.prepared
        assert [s.id for s in new.annotated.steps] == ["write_b"]
        assert new.digest != original.digest and new.preview is not None
        assert [s.step_id for s in new.preview.steps] == ["write_b"]
        assert "skipped write_a" in new.annotated.plan.notes_for_user
        assert _status(anna, original.plan_id) == "dry_run"
        await pilot.press("a")
        await ready(pilot, ResultScreen, focus="close")
        assert str(app.screen.record.status) == "succeeded"
        await pilot.press("q")
        await exited(pilot)
    assert app.return_value == ExitStatus.SUCCESS
    assert a.read_text() == "a\n" and b.read_text() == "changed\n"


async def test_an_edited_command_is_judged_again(anna: Anna) -> None:
    app, a, b = _two_steps(anna)
    async with app.run_test(size=SIZE) as pilot:
        edit = await _edit_screen(pilot)
        original = edit.prepared
        edit.query_one("#command-1", Input).value = "echo x >> ~/.bashrc"  # LOW → HIGH
        await pilot.press("ctrl+r")
        box = await _new_plan(pilot, original.plan_id)
        assert str(box.prepared.annotated.final_risk) == "HIGH"
        assert box.prepared.annotated.steps[1].command == "echo x >> ~/.bashrc"
        await pilot.press("a")  # HIGH now: the word is asked, as for any HIGH plan
        await ready(pilot, WordScreen, focus="word")
        await pilot.press("escape")
        await ready(pilot, ApprovalScreen, focus="cancel")
        await pilot.press("c")
        await exited(pilot)
    assert app.return_value == ExitStatus.DECLINED
    assert a.read_text() == "a\n" and b.read_text() == "b\n"
    assert not (anna.daemon.home / ".bashrc").exists() or \
        "echo x" not in (anna.daemon.home / ".bashrc").read_text()


async def test_an_edit_into_a_banned_command_is_never_approvable(anna: Anna) -> None:
    app, a, b = _two_steps(anna)
    async with app.run_test(size=SIZE) as pilot:
        edit = await _edit_screen(pilot)
        original_id = edit.prepared.plan_id
        edit.query_one("#command-0", Input).value = "rm -rf /"
        await pilot.press("ctrl+r")
        await until(pilot, lambda: notified(app, "PLAN_BANNED"), "the PLAN_BANNED notification")
        box = await _new_plan(pilot, original_id)
        assert box.prepared.source == "rejected" and box.query_one("#approve").disabled
        await pilot.press("a")
        await until(pilot, lambda: notified(app, "cannot be approved"), "the refusal")
        assert not app.executing
        await pilot.press("c")
        await exited(pilot)
    assert app.return_value == ExitStatus.PLAN_INVALID
    assert a.read_text() == "a\n" and b.read_text() == "b\n"


async def test_the_screen_refuses_nothing_changed_or_nothing_left_and_escape_goes_back(
        anna: Anna) -> None:
    app, a, b = _two_steps(anna)
    async with app.run_test(size=SIZE) as pilot:
        edit = await _edit_screen(pilot)
        original_id = edit.prepared.plan_id

        def error() -> str:
            return str(edit.query_one("#edit-error").content)

        await pilot.press("ctrl+r")
        await until(pilot, lambda: "Nothing is changed" in error(), "nothing changed")
        edit.query_one("#keep-0", Checkbox).value = False
        edit.query_one("#keep-1", Checkbox).value = False
        await pilot.press("ctrl+r")
        await until(pilot, lambda: "nothing to approve" in error(), "nothing left")
        edit.query_one("#keep-1", Checkbox).value = True
        edit.query_one("#command-1", Input).value = "  "
        await pilot.press("ctrl+r")
        await until(pilot, lambda: "is empty" in error(), "an empty command")
        await pilot.press("escape")
        box = await ready(pilot, ApprovalScreen, focus="cancel")
        assert box.prepared.plan_id == original_id  # the same plan, unchanged
        assert _status(anna, original_id) == "submitted"
        await pilot.press("c")
        await exited(pilot)
    assert app.return_value == ExitStatus.DECLINED
    assert a.read_text() == "a\n" and b.read_text() == "b\n"


# ---------------------------------------------------------------------- without a daemon


def _handed(plan: Any) -> AnnaTui:
    from annactl.commands.prepared import Prepared

    return AnnaTui(Source(prepared=Prepared(plan_id="p-test", digest=plan.digest,
                                            annotated=plan, source="file")))


async def _opened(pilot: Any) -> None:
    await ready(pilot, ApprovalScreen, focus="cancel")
    await pilot.press("e")
    await ready(pilot, EditStepsScreen, focus="keep-0")


def test_snapshot_edit_steps(snap_compare: Any, high_plan: Any) -> None:
    assert snap_compare(_handed(high_plan), run_before=_opened, terminal_size=(90, 30))


async def test_hostile_step_text_is_inert_in_the_edit_screen(hostile_plan: Any) -> None:
    app = _handed(hostile_plan)
    async with app.run_test(size=(90, 30)) as pilot:
        await _opened(pilot)
        edit = app.screen
        assert isinstance(edit, EditStepsScreen)
        label = str(edit.query_one("#keep-0", Checkbox).label)
        assert "\x1b" not in label and label.startswith("s1")
        assert edit.query_one("#command-0", Input).value == "echo '[red]x[/]' > /tmp/anna-ui/f"
        await pilot.press("ctrl+r")  # shown as it is, the command counts as unchanged
        await until(pilot, lambda: "Nothing is changed" in str(
            edit.query_one("#edit-error").content), "nothing changed")
        await pilot.press("escape")
        await ready(pilot, ApprovalScreen, focus="cancel")
