"""Issue 36.6 (and 36.9's REPL edges): partial approval in the REPL (``skip 2``,
``edit 1 …``, ``/apply ID --skip S``) and the TUI's dropped-step glyph and changed-plan box,
driven in tmux as a person would; ``clear`` in the REPL clears, never asks the model; the
notes of a changed plan say it is changed before the model's words."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemonfix import make_plan

from .conftest import Anna
from .tmuxrun import Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _two(anna: Anna) -> tuple[Path, Path, dict[str, object]]:
    a, b = anna.work / "a.txt", anna.work / "b.txt"
    a.write_text("a\n")
    b.write_text("b\n")
    plan = make_plan([("write_a", f"echo changed > {a}", "LOW"),
                      ("write_b", f"echo changed > {b}", "LOW")], goal="Change both")
    plan["notes_for_user"] = "This changes a.txt and b.txt."
    return a, b, plan


def _repl(anna: Anna, tmux_runs: list[Tmux]) -> Tmux:
    term = Tmux([*anna.argv, "repl", "--no-templates"], anna.env, anna.work, size=(110, 50))
    tmux_runs.append(term)
    term.wait_for(r"anna>")
    return term


def _line(term: Tmux, text: str) -> None:
    term.type(text)
    term.keys("Enter")


def _leave(term: Tmux) -> None:
    """Ctrl-D once the prompt is back (a key sent while a plan's report prints is lost)."""
    term.wait_for(r"anna>\s*\Z")
    term.keys("C-d")
    assert term.exit_status() == 0


def test_repl_skip_by_number_then_ok_runs_the_changed_plan(anna: Anna,
                                                          tmux_runs: list[Tmux]) -> None:
    a, b, plan = _two(anna)
    anna.llm.push(json.dumps(plan))
    term = _repl(anna, tmux_runs)
    _line(term, "plan: change both files")
    term.wait_for(r"Type ok to run it")
    _line(term, "clear")  # the screen, not a request
    term.wait_for(r"anna>", absent=r"Type ok to run it")
    _line(term, "skip 1")
    screen = term.wait_for(r"This is your changed plan")
    assert "skipped write_a" in screen
    _line(term, "ok")
    term.wait_for(r"Result: succeeded")
    assert a.read_text() == "a\n" and b.read_text() == "changed\n"
    assert len(anna.llm.chat_bodies()) == 1  # "clear" and "skip 1" never reached the model
    _leave(term)


def test_repl_apply_a_stored_plan_with_skip_and_edit(anna: Anna,
                                                     tmux_runs: list[Tmux]) -> None:
    a, b, plan = _two(anna)
    code, planned = anna.json("apply", str(anna.plan_file(plan)))  # stored, not run
    assert code == 4, planned
    plan_id = str(planned["plan_id"])
    term = _repl(anna, tmux_runs)
    _line(term, f"/apply {plan_id} --skip write_b --edit 'write_a=echo edited > {a}'")
    screen = term.wait_for(r"This is your changed plan")
    assert "PLAN_NOT_FOUND" not in screen
    assert "skipped write_b; edited write_a" in screen
    _line(term, "/apply")  # the last plan shown: the changed one, asked like any plan
    term.wait_for(r"Run this LOW plan\? \[y/N\]")
    _line(term, "y")
    term.wait_for(r"Result: succeeded")
    assert a.read_text() == "edited\n" and b.read_text() == "b\n"
    _leave(term)


def test_repl_edit_is_a_request_unless_it_names_a_step(anna: Anna,
                                                       tmux_runs: list[Tmux]) -> None:
    _, _, plan = _two(anna)
    anna.llm.push(json.dumps(plan))
    term = _repl(anna, tmux_runs)
    _line(term, "plan: change both files")
    term.wait_for(r"Type ok to run it")
    asked = len(anna.llm.chat_bodies())
    _line(term, "edit my nginx config")  # no step named: the model is asked (none answers)
    term.wait_for(r"LLM_")
    assert "This is your changed plan" not in term.screen()
    later = anna.llm.chat_bodies()[asked:]
    assert later and "edit my nginx config" in json.dumps(later[0])
    _leave(term)


def test_tui_dropped_step_has_its_own_glyph_and_the_box_says_changed(
        anna: Anna, tmux_runs: list[Tmux]) -> None:
    a, b, plan = _two(anna)
    path = anna.plan_file(plan)
    term = Tmux([*anna.argv, "tui", "--plan-file", str(path)], anna.env, anna.work)
    tmux_runs.append(term)
    term.wait_for(r"Show Details")
    term.keys("e")
    screen = term.wait_for(r"Change the steps")
    assert screen.count("✓") == 2 and screen.count("✗") == 1  # (✗) in the help line
    term.keys("Space")  # leave write_a out: its box shows ✗, not a recoloured ✓
    screen = term.wait_for(r"(?s)✗.*✗")
    assert screen.count("✓") == 1 and screen.count("✗") == 2
    term.keys("C-r")
    screen = term.wait_for(r"Your changed plan")
    assert "skipped write_a" in screen and "Steps: 1" in screen
    term.keys("a")
    term.wait_for(r"Result: succeeded")
    assert a.read_text() == "a\n" and b.read_text() == "changed\n"
    term.keys("q")
    assert term.exit_status() == 0


def test_notes_of_a_changed_plan_say_so_first(anna: Anna) -> None:
    _, _, plan = _two(anna)
    code, planned = anna.json("apply", str(anna.plan_file(plan)))
    code, changed = anna.json("apply", str(planned["plan_id"]), "--skip", "write_b")
    assert code == 4 and changed["plan_id"] != planned["plan_id"], changed  # not run
    code, shown = anna.json("show", str(changed["plan_id"]))
    notes = next(v for v in _strings(shown) if v.startswith("Your changed plan"))
    assert notes.startswith(f"Your changed plan (changed by you from plan "
                            f"{planned['plan_id']}: skipped write_b).")
    assert notes.endswith("written for the plan before the change: This changes a.txt and "
                          "b.txt.")


def _strings(doc: object) -> Iterator[str]:
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for value in doc.values():
            yield from _strings(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from _strings(value)
