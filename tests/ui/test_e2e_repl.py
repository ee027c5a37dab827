"""The REPL on a pseudo-terminal: untrusted text stays inert, errors never end the session."""

from __future__ import annotations

import json

from tests.daemonfix import make_plan

from .conftest import Anna
from .plans import HOSTILE_NOTES
from .ptyrun import PtyProcess


def test_repl_keeps_model_text_inert_and_survives_errors(anna: Anna) -> None:
    plan = make_plan([("write", f"echo x > {anna.work}/x", "LOW")], goal="Goal\x1b]0;pwned\x07")
    plan["notes_for_user"] = HOSTILE_NOTES
    anna.llm.push(json.dumps(plan))
    # a pty answers no cursor-position requests; tell prompt-toolkit not to wait for them
    term = PtyProcess([*anna.argv, "repl", "--no-templates"],
                      {**anna.env, "PROMPT_TOOLKIT_NO_CPR": "1"})
    term.expect(r"anna>")
    term.send("/apply\r")  # nothing shown yet
    term.expect(r"no plan has been shown yet")
    term.send("/frobnicate\r")
    term.expect(r"type /help")
    term.send("remember my shoe size is 42\r")
    term.expect(r"I can remember")
    term.send("plan: hostile\r")
    term.expect(r"Type ok to run it")
    raw = term.raw.decode("utf-8", errors="replace")
    assert "\x1b]0;pwned" not in raw and "\x07" not in raw and "\x1b[31mRED" not in raw
    assert "[bold red]LOUD[/]" in term.text
    term.send("half a line\x03")  # Ctrl-C at the prompt drops the line; the session goes on
    term.send("/memory\r")
    term.expect(r"Nothing remembered yet")
    term.expect(r"Nothing remembered yet\.\s+anna>")
    term.send("\x04")  # Ctrl-D leaves
    assert term.wait(timeout=20) == 0
    assert "Traceback" not in term.text
