"""Issue 36.3: conversations from the shell (``ask --continue``, ``--session NAME``,
``annactl sessions``): what the model gets, the bounds, the file's permissions, forgetting.
The real annactl against a real per-user daemon and the fake model server."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from tests.fakellm import Reply

from .conftest import Anna

FIRST = "what uses my memory?"
FOLLOW = "and how much of it is swap?"


def _answer(text: str) -> Reply:
    return Reply(json.dumps({"answer": text, "citations": []}))


def _user_message(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def _state(anna: Anna) -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "anna" / "sessions"


def test_continue_carries_the_last_turn_and_a_plain_ask_does_not(anna: Anna) -> None:
    anna.llm.push(_answer("Firefox uses the most."), _answer("No swap is used."),
                  _answer("It is 7.6 GiB."))
    assert anna.run(FIRST, "--no-templates").returncode == 0
    code, doc = anna.json("ask", "--continue", "--no-templates", FOLLOW)
    assert code == 0, doc
    assert doc["conversation"]["name"] == "last" and doc["conversation"]["earlier_turns"] == 1
    assert doc["conversation"]["turns"][0]["request"] == FIRST
    proc = anna.run("how big is my memory?", "--no-templates")  # a new conversation
    assert proc.returncode == 0
    first, second, third = (_user_message(b) for b in anna.llm.chat_bodies())
    assert "Firefox uses the most." not in first and FIRST in first
    assert FIRST in second and "Firefox uses the most." in second  # the earlier turn, sent
    assert FIRST not in third and "No swap is used." not in third


def test_named_sessions_are_kept_listed_shown_and_forgotten(anna: Anna) -> None:
    anna.llm.push(_answer("Firefox uses the most."), _answer("No swap is used."),
                  _answer("Nothing carried."))
    assert anna.run("ask", "--session", "mem", "--no-templates", FIRST).returncode == 0
    assert anna.run(FOLLOW, "--session", "mem", "--no-templates").returncode == 0
    code, shown = anna.json("sessions", "show", "mem")
    assert code == 0 and [t["request"] for t in shown["turns"]] == [FIRST, FOLLOW]
    code, listed = anna.json("sessions")
    assert [s["name"] for s in listed["sessions"]] == ["mem"]
    root = _state(anna)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE((root / "mem.json").stat().st_mode) == 0o600
    forgot = anna.run("sessions", "forget", "mem")
    assert forgot.returncode == 0 and not (root / "mem.json").exists()
    code, doc = anna.json("ask", "--session", "mem", "--no-templates", FOLLOW)
    assert code == 0 and doc["conversation"]["earlier_turns"] == 0
    assert FIRST not in _user_message(anna.llm.chat_bodies()[-1])
    bad = anna.run("ask", "--session", "../etc", "--no-templates", FIRST)
    assert bad.returncode == 2 and "not a conversation name" in bad.stderr


def test_turns_are_bounded_and_a_foreign_file_is_ignored(anna: Anna, tmp_path: Path) -> None:
    root = _state(anna)
    root.mkdir(parents=True, mode=0o700)
    turns = [[f"request number {i} " + "x" * 3000, f"answer {i}"] for i in range(12)]
    (root / "long.json").write_text(json.dumps({"name": "long", "updated": 1.0,
                                                "turns": turns}))
    elsewhere = tmp_path / "planted.json"
    elsewhere.write_text(json.dumps({"turns": [["planted request", "planted"]]}))
    (root / "link.json").symlink_to(elsewhere)
    anna.llm.push(_answer("ok"), _answer("ok"))
    code, doc = anna.json("ask", "--session", "long", "--no-templates", FIRST)
    assert code == 0 and doc["conversation"]["earlier_turns"] == 4
    message = _user_message(anna.llm.chat_bodies()[0])
    assert "request number 11" in message and "request number 7" not in message
    assert "x" * 300 not in message  # each turn cut short in the packet
    kept = json.loads((root / "long.json").read_text())["turns"]
    assert len(kept) == 8 and len(kept[0][0]) <= 1000  # stored bounded too
    code, doc = anna.json("ask", "--session", "link", "--no-templates", FIRST)
    assert code == 0 and doc["conversation"]["earlier_turns"] == 0
    assert "planted" not in _user_message(anna.llm.chat_bodies()[1])
