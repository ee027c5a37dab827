"""Issue 36.6: a step that failed in its preview is never offered with a plain yes — the
one-shot prompt and the TUI ask for 'run anyway' typed (a LOW plan; HIGH asks its word)."""

from __future__ import annotations

import shutil

import pytest

from tests.daemonfix import make_plan

from .conftest import Anna
from .ptyrun import PtyProcess
from .tmuxrun import Tmux


def _failing(anna: Anna) -> str:
    target = anna.work / "o.txt"
    return str(anna.plan_file(make_plan([("write", f"echo hi > {target}; false", "LOW")],
                                        goal="Write o")))


def test_one_shot_asks_for_run_anyway(anna: Anna) -> None:
    plan = _failing(anna)
    term = PtyProcess([*anna.argv, "apply", plan], anna.env)
    term.expect(r"(?s)write failed in the preview.*Type 'run anyway' to run")
    assert "[y/N]" not in term.text
    term.send("y\r")  # a plain yes is not enough
    assert term.wait() == 4 and "DECLINED" in term.text
    assert not (anna.work / "o.txt").exists()
    term = PtyProcess([*anna.argv, "apply", plan], anna.env)
    term.expect(r"Type 'run anyway' to run")
    term.send("run anyway\r")
    assert term.wait() == 5, term.text  # it ran, failed as the preview said, was undone
    assert "Result: failed" in term.text and not (anna.work / "o.txt").exists()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tui_asks_for_run_anyway(anna: Anna) -> None:
    term = Tmux([*anna.argv, "tui", "--plan-file", _failing(anna)], anna.env, anna.work)
    try:
        term.wait_for(r"Show Details")
        term.keys("a")
        screen = term.wait_for(r"A step failed in its preview")
        assert "run anyway" in screen
        term.keys("Escape")  # back to the box: nothing ran
        term.wait_for(r"Show Details")
        term.keys("c")
        assert term.exit_status() == 4
    finally:
        term.close()
    assert not (anna.work / "o.txt").exists()
