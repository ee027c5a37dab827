"""The REPL in words for people: ``ok`` after an answer has nothing to run, and ``ok`` on a
plan that already ran says so without naming internal states."""

from __future__ import annotations

import json

from tests.daemonfix import make_plan

from .conftest import Anna
from .ptyrun import PtyProcess


def test_ok_after_an_answer_and_after_a_run(anna: Anna) -> None:
    target = anna.work / "x"
    anna.llm.push(json.dumps(make_plan([("write", f"echo x > {target}", "LOW")],
                                       goal="Write x")))
    term = PtyProcess([*anna.argv, "repl"], {**anna.env, "PROMPT_TOOLKIT_NO_CPR": "1"})
    term.expect(r"anna>")
    term.send("how is my system?\r")  # answered by the status template: no steps
    _prompt_after(term, r"Services: ")  # the answer's last line
    term.send("ok\r")
    _prompt_after(term, r"the last answer has nothing to run")
    term.send("plan: write x\r")
    _prompt_after(term, r"Type ok to run it")
    term.send("ok\r")  # ok is the plan's one confirmation in the REPL
    _prompt_after(term, r"The plan succeeded")
    term.send("ok\r")  # the same plan again
    _prompt_after(term, r"already ran and succeeded, so it cannot be run")
    term.send("\x04")
    assert term.wait(timeout=20) == 0
    assert "this needs submitted" not in term.text and "Traceback" not in term.text
    assert target.read_text() == "x\n"


def _prompt_after(term: PtyProcess, text: str) -> None:
    """Wait for the prompt drawn after ``text``: only then does the REPL read keys itself.

    Keys typed before it reach the terminal's line discipline, which is in cooked mode
    between prompts: a typed-ahead line is kept, but a Ctrl-D there is the terminal's
    end-of-file mark, which reaches prompt-toolkit as a NUL once it turns raw mode on, so the
    REPL never sees a Ctrl-D. That, not the REPL, is
    why this test once saw Ctrl-D "not end the process": it typed Ctrl-D before the prompt.
    """
    term.expect(text + r"[\s\S]*anna>")
