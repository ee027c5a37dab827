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
    term.expect(r"anna>")
    term.send("ok\r")
    term.expect(r"the last answer has nothing to run")
    term.send("plan: write x\r")
    term.expect(r"Type ok to run it")
    term.send("ok\r")  # ok is the plan's one confirmation in the REPL
    term.expect(r"The plan succeeded")
    term.expect(r"anna>")
    term.send("ok\r")  # the same plan again
    term.expect(r"already ran and succeeded, so it cannot be run")
    term.expect(r"anna>")
    # Known defect, found when the branches were merged: after this sequence Ctrl-D does not
    # end the process (it hangs past the prompt loop's return); tracked in the closing note.
    term.proc.kill()
    term.proc.wait()
    assert "this needs submitted" not in term.text and "Traceback" not in term.text
    assert target.read_text() == "x\n"
