"""The REPL sends the memory and asks before remembering what the model proposes."""

from __future__ import annotations

from tests.fakellm import plan_json

from .conftest import Anna
from .ptyrun import PtyProcess


def test_repl_asks_before_remembering_a_model_proposal(anna: Anna) -> None:
    assert anna.run("memory", "set", "editor", "vim").returncode == 0
    anna.llm.push(plan_json(memory_patch={"editor": "helix"}, notes_for_user="Noted."),
                  plan_json(memory_patch={"shell": "fish"}, notes_for_user="Noted too."))
    term = PtyProcess([*anna.argv, "repl", "--no-templates"],
                      {**anna.env, "PROMPT_TOOLKIT_NO_CPR": "1"})
    term.expect(r"anna>")
    term.send("plan: remember helix as my editor\r")
    term.expect(r"editor = helix\s+Remember this\?")
    term.send("y\r")
    # expect() searches the whole transcript, so each pattern must be one that appears once
    term.expect(r"Noted\.\s+anna>")
    assert "Remembered." in term.text
    term.send("plan: remember fish as my shell\r")
    term.expect(r"shell = fish\s+Remember this\?")
    term.send("n\r")
    term.expect(r"Noted too\.\s+anna>")
    term.send("/memory\r")
    term.expect(r"editor = helix\s+anna>")
    term.send("\x04")
    assert term.wait(timeout=20) == 0
    assert anna.json("memory", "show")[1]["memory"] == {"editor": "helix"}
    users = [b["messages"][1]["content"] for b in anna.llm.chat_bodies()]
    assert '"editor":"vim"' in users[0] and '"editor":"helix"' in users[1]
