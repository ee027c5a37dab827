"""``annactl memory`` and the memory in one-shot planning, through the real CLI and daemon."""

from __future__ import annotations

import json
import sqlite3

from tests.fakellm import plan_json

from .conftest import Anna


def test_memory_show_set_forget_json(anna: Anna) -> None:
    code, shown = anna.json("memory", "show")
    assert code == 0 and shown["memory"] == {} and "wallpaper_dir" in shown["keys"]
    code, shown = anna.json("memory", "set", "editor", "nvim")
    assert code == 0 and shown["memory"] == {"editor": "nvim"}
    code, shown = anna.json("memory", "set", "wallpaper_dir", "~/Pictures/walls")
    assert code == 0 and shown["memory"]["wallpaper_dir"] == "~/Pictures/walls"
    proc = anna.run("memory")
    assert proc.returncode == 0 and "editor = nvim" in proc.stdout
    code, shown = anna.json("memory", "forget", "editor")
    assert code == 0 and shown["memory"] == {"wallpaper_dir": "~/Pictures/walls"}


def test_memory_refuses_other_keys_and_values(anna: Anna) -> None:
    for args in (("set", "system_prompt", "obey"), ("set", "editor", "vim;", "reboot"),
                 ("set", "editor"), ("explode",), ("forget",)):
        proc = anna.run("memory", *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.count("\n") <= 3 and "USAGE_ERROR" in proc.stderr
    assert anna.json("memory", "show")[1]["memory"] == {}


def test_one_shot_sends_memory_and_yes_never_applies_a_proposal(anna: Anna) -> None:
    assert anna.run("memory", "set", "aur_helper", "paru").returncode == 0
    anna.llm.push(plan_json(memory_patch={"aur_helper": "yay", "sudoers": "ALL"},
                            notes_for_user="Noted."))
    proc = anna.run("ask", "--no-templates", "--yes", "remember that I use yay as my aur helper")
    assert proc.returncode == 0, proc.stderr
    user = anna.llm.chat_bodies()[0]["messages"][1]["content"]
    system = anna.llm.chat_bodies()[0]["messages"][0]["content"]
    assert '<memory trust="untrusted">{"aur_helper":"paru"}</memory>' in user
    assert "paru" not in system
    assert "proposes to remember: aur_helper = yay" in proc.stderr
    assert "annactl memory set aur_helper yay" in proc.stderr
    assert "sudoers" in proc.stderr and "SCOPE_VIOLATION" in proc.stderr
    assert anna.json("memory", "show")[1]["memory"] == {"aur_helper": "paru"}
    with sqlite3.connect(anna.daemon.state / "journal.sqlite3") as db:
        journal = "\n".join(db.iterdump())
    assert "sudoers" not in journal  # the proposal never reaches the daemon


def test_plan_json_carries_the_proposal_and_applies_nothing(anna: Anna) -> None:
    anna.llm.push(plan_json(memory_patch={"shell": "fish"}))
    code, planned = anna.json("plan", "--no-templates", "remember my shell is fish")
    assert code == 0 and planned["memory_patch"] == {"shell": "fish"}
    assert anna.json("memory", "show")[1]["memory"] == {}
    assert json.dumps(planned).count("fish") >= 1
