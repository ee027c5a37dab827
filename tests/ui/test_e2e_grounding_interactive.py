"""Issue 14 in the REPL and the TUI: the model's invented facts are flagged there as in the
one-shot (the same renderers, the same contradictions), through the real programs."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.daemonfix import make_plan
from tests.fakellm import plan_json

from .conftest import Anna
from .ptyrun import PtyProcess
from .test_e2e_grounding import INVENTED
from .tmuxrun import Tmux


def test_repl_shows_contradictions_of_an_answer_and_of_a_plan(anna: Anna) -> None:
    anna.llm.push(plan_json(notes_for_user=INVENTED, goals=["Report on the machine"]))
    steps = make_plan([("write", f"echo x > {anna.work}/x", "LOW")], goal="Write x")
    steps["notes_for_user"] = INVENTED
    anna.llm.push(json.dumps(steps))
    term = PtyProcess([*anna.argv, "repl", "--no-templates"],
                      {**anna.env, "PROMPT_TOOLKIT_NO_CPR": "1"})
    term.expect(r"anna>")
    term.send("plan: tell me about my hardware\r")
    term.expect(r"Confidence lowered[^\n]*\s+anna>")  # the answer, then the prompt is back
    assert "This machine (from telemetry)" in term.text
    assert "not true here: memory_used" in term.text
    term.send("plan: write x\r")
    term.expect(r"Type ok to run it\.\s+anna>")  # typed ahead, Ctrl-D could be lost
    assert term.text.count("Confidence lowered") == 2
    term.send("\x04")
    assert term.wait(timeout=20) == 0
    assert "Traceback" not in term.text


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tui_shows_contradictions_in_the_box_and_in_an_answer(anna: Anna) -> None:
    steps = make_plan([("write", f"echo x > {anna.work}/x", "LOW")], goal="Write x")
    steps["notes_for_user"] = INVENTED
    anna.llm.push(json.dumps(steps))
    term = Tmux([*anna.argv, "tui", "--no-templates", "write x"], anna.env, anna.work)
    try:
        term.wait_for(r"Show Details")
        term.wait_for(r"Confidence lowered")  # in the approval box itself
        term.keys("d")
        term.wait_for(r"not true here")
        term.keys("Escape")
        term.wait_focused("Cancel")
        term.keys("Enter")
        term.exit_status()
    finally:
        term.close()
    anna.llm.push(plan_json(notes_for_user=INVENTED, goals=["Report on the machine"]))
    term = Tmux([*anna.argv, "tui", "--no-templates", "tell me about my hardware"], anna.env,
                anna.work)
    try:
        screen = term.wait_for(r"Confidence lowered")
        assert "This machine (from telemetry)" in screen or "not true here" in screen
    finally:
        term.close()
