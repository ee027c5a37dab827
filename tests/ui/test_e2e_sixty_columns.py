"""Issue 23.4: ``history``, ``show`` and ``status`` on a real 60-column terminal (a pty), with
cells longer than the screen: no line passes 60 columns, headers stay whole words, prose
breaks between words, and a hostile goal reaches the terminal as text, never as codes."""

from __future__ import annotations

import re

from tests.daemonfix import make_plan

from .conftest import Anna
from .ptyrun import PtyProcess

WIDTH = 60
GOAL = ("Change the configuration file that has an extraordinarily long name "
        "[bold]and markup[/bold] \x1b]0;owned\x07\x1b[2J")
STEP_ID = "write_the_configuration_file_with_a_long_id"


def _screen(anna: Anna, *args: str) -> tuple[str, bytes]:
    term = PtyProcess([*anna.argv, *args], anna.env, rows=24, cols=WIDTH)
    assert term.wait() == 0, term.text
    return term.text, term.raw


def _fits(text: str) -> None:
    lines = text.splitlines()
    assert lines and max(len(line.rstrip()) for line in lines) <= WIDTH, text


def _words_whole(text: str, words: list[str]) -> None:
    """Each word shows unbroken somewhere (a fold inside it would split it over lines)."""
    flat = re.findall(r"\S+", text)
    for word in words:
        assert word in flat, (word, text)


def test_history_show_and_status_fit_sixty_columns(anna: Anna) -> None:
    folder = anna.work / ("a_really_long_directory_name_that_goes_on" * 2)
    folder.mkdir()
    target = folder / "supercalifragilistic_configuration_file.txt"
    plan = anna.plan_file(make_plan([(STEP_ID, f"echo changed > {target}", "LOW")], goal=GOAL))
    code, applied = anna.json("apply", str(plan), "--yes")
    assert code == 0 and applied["status"] == "succeeded", applied
    plan_id = str(applied["plan_id"])

    text, raw = _screen(anna, "history")
    _fits(text)
    assert re.search(r"^id\s+status\s+risk\s+title\s*$", text, re.M), text
    _words_whole(text, ["configuration", "extraordinarily", plan_id[-6:]])
    assert b"\x1b[2J" not in raw and b"\x1b]0;" not in raw

    text, raw = _screen(anna, "show", plan_id)
    _fits(text)
    assert re.search(r"┃ # ┃ step\s+┃ status\s+┃ exit ┃ output ┃", text), text
    _words_whole(text, ["configuration", "extraordinarily", "[bold]and", "markup[/bold]",
                        plan_id])
    assert b"\x1b[2J" not in raw and b"\x1b]0;" not in raw

    text, _ = _screen(anna, "status")
    _fits(text)
    for label in ("Host", "Memory", "Packages"):
        assert re.search(rf"^{label}\s", text, re.M), (label, text)
