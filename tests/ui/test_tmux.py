"""The real programs in tmux, as a person would use them: the TUI and the REPL."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.daemonfix import make_plan

from .conftest import Anna
from .plans import HOSTILE_NOTES
from .tmuxrun import Tmux

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(shutil.which("tmux") is None,
                                                    reason="tmux is not installed")]


def test_tui_approve_and_roll_back_in_tmux(anna: Anna, tmux_runs: list[Tmux]) -> None:
    target = anna.work / "f.txt"
    target.write_text("original\n")
    plan = make_plan([("write", f"echo changed > {target}", "LOW")], goal="Change f")
    plan["notes_for_user"] = HOSTILE_NOTES
    path = anna.plan_file(plan)
    term = Tmux([*anna.argv, "tui", "--plan-file", str(path)], anna.env, anna.work)
    tmux_runs.append(term)
    screen = term.wait_for(r"Show Details")
    assert "Change f" in screen and "Risk:" in screen and "Steps: 1" in screen
    assert "Rollback: available" in screen
    term.keys("d")
    screen = term.wait_for(r"\[bold red\]LOUD\[/\]")  # the notes, shown literally
    assert "pwned" not in term.title()
    term.keys("Escape")
    term.wait_for(r"Approve", absent=r"LOUD")  # the box again, the details gone
    term.keys("a")
    screen = term.wait_for(r"Result: succeeded")
    assert target.read_text() == "changed\n"
    term.keys("r")  # asks first, as the CLI does
    term.wait_for(r"Roll back plan \S+ \(Change f, now")
    assert target.read_text() == "changed\n"
    term.keys("y")
    screen = term.wait_for(r"Result: rolled_back")
    assert target.read_text() == "original\n"
    assert "Roll back" not in screen  # nothing left to roll back: the button is gone
    term.keys("q")
    assert term.exit_status() == 0


def test_tui_cancel_in_tmux(anna: Anna, tmux_runs: list[Tmux]) -> None:
    target = anna.work / "f.txt"
    target.write_text("original\n")
    path = anna.plan_file(make_plan([("write", f"echo changed > {target}", "LOW")]))
    term = Tmux([*anna.argv, "tui", "--plan-file", str(path)], anna.env, anna.work)
    tmux_runs.append(term)
    term.wait_for(r"Show Details")
    term.wait_focused("Cancel")  # focus starts on Cancel (applied after the box appears)
    term.keys("Enter")
    assert term.exit_status() == 4
    assert target.read_text() == "original\n"


def test_repl_session_in_tmux(anna: Anna, tmux_runs: list[Tmux]) -> None:
    target = anna.work / "f.txt"
    target.write_text("original\n")
    reply = json.dumps(make_plan([("write", f"echo changed > {target}", "LOW")],
                                 goal="Change f"))
    # plan, the model's evaluation after it ran, the second plan
    verdict = json.dumps({"goals_met": True, "goals": [{"goal": "Change f", "met": True,
                                                        "why": "the step exited 0"}],
                          "summary": "The file was changed.", "suggestion": ""})
    anna.llm.push(reply, verdict, reply)
    term = Tmux([*anna.argv, "repl", "--no-templates"], anna.env, anna.work)
    tmux_runs.append(term)
    term.wait_for(r"anna>")
    # completion of slash commands
    term.type("/he")
    term.wait_for(r"/help\s+this list")  # the completion menu
    term.keys("Tab")
    term.wait_for(r"anna> /help")
    term.keys("Enter")
    term.wait_for(r"/rollback\s+/rollback ID")
    # a preference, kept in the user state
    term.type("remember my editor is nvim")
    term.keys("Enter")
    term.wait_for(r"Remembered: editor = nvim")
    # plan only, then ok
    term.type("plan: change the file")
    term.keys("Enter")
    term.wait_for(r"Type ok to run it")
    assert target.read_text() == "original\n"
    term.type("ok")
    term.keys("Enter")
    term.wait_for(r"Result: succeeded")
    term.wait_for(r"goals met")  # the evaluation follows the result
    assert target.read_text() == "changed\n"
    # free text asks before running; "n" declines and the REPL goes on
    term.keys("C-l")
    term.type("change the file again")
    term.keys("Enter")
    term.wait_for(r"Run this LOW plan\? \[y/N\]")
    term.type("n")
    term.keys("Enter")
    term.wait_for(r"DECLINED")
    # the second request carried the first turn and the preference as context
    second = json.dumps(anna.llm.chat_bodies()[2]["messages"])
    assert "change the file" in second and "nvim" in second
    # Ctrl-R finds an earlier line
    term.keys("C-l")
    term.keys("C-r")
    term.type("plan:")
    term.wait_for(r"plan: change the file")
    term.keys("C-g")
    term.keys("C-u")
    term.type("/quit")
    term.keys("Enter")
    assert term.exit_status() == 0
    # history and memory persist in the user state dir
    state = Path(anna.env["XDG_STATE_HOME"]) / "anna"
    assert "plan: change the file" in (state / "repl_history").read_text()
    assert json.loads((state / "memory.json").read_text()) == {"editor": "nvim"}
