"""Issue 24 in the REPL, in tmux, with the real daemon and a model the test keeps slow (the
fake server holds its reply until the test releases it; nothing sleeps): Anna's offline
answer is printed at once, labelled; the model's plan comes after it with both ids named;
Ctrl-C stops waiting and keeps the offline answer."""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Iterator

import pytest

from tests.daemonfix import make_plan
from tests.fakellm import Reply

from .conftest import Anna
from .tmuxrun import Tmux

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(shutil.which("tmux") is None,
                                                    reason="tmux is not installed")]



def words(pattern: str) -> str:
    """``pattern`` with each space matching any run of blanks (the console wraps lines)."""
    return pattern.replace(" ", r"\s+")


LABEL = words(r"Anna's offline answer \(template disk_usage_v1, plan (\S+); confidence: low")


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Lets the held model reply go; set at the end whatever happened."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def repl(anna: Anna, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tmux]:
    """The real REPL (templates on) in tmux, wide enough for the plan views."""
    term = Tmux([*anna.argv, "repl"], {**anna.env, "ANNA_LLM_TIMEOUT": "120"}, anna.work,
                size=(150, 60))
    yield term
    term.close()


def _ask(term: Tmux, line: str) -> None:
    term.wait_for(r"anna>")
    term.type(line)
    term.keys("Enter")


def test_offline_answer_first_then_the_model_plan_with_both_ids(
        anna: Anna, repl: Tmux, release: threading.Event) -> None:
    anna.llm.push(Reply(json.dumps(make_plan([("write", f"echo m > {anna.work}/m", "LOW")],
                                             goal="The model's way")), hold=release))
    _ask(repl, "plan: free up space")
    screen = repl.wait_for(LABEL + words(r"[\s\S]*Ctrl-C stops waiting"))
    offline_id = re.search(LABEL, screen).group(1)  # type: ignore[union-attr]
    assert "Show disk usage" in screen
    assert re.search(words("The model is still working"), screen)
    # the spinner goes on below it, with the model budget used / budget
    repl.wait_for(r"Planning… model · \d+\.\d s · model budget \d+ / 60 s")
    assert len(anna.llm.chat_bodies()) == 1 and "Type ok" not in repl.screen()
    release.set()
    screen = repl.wait_for(words(r"Type ok to run the model's plan (\S+) \(above\); /apply "
                                 + re.escape(offline_id) + r" runs Anna's offline answer"))
    assert "The model's way" in screen
    assert re.search(words(f"stays as plan {offline_id}"), screen)
    # the model's plan is printed after the offline answer: what ok runs is the last one
    assert screen.index("The model's way") > screen.index("Anna's offline answer")
    assert str(anna.daemon.client().get_plan(offline_id).status) == "dry_run"
    _ask(repl, "/quit")
    assert repl.exit_status() == 0
    assert not (anna.work / "m").exists()


def test_ctrl_c_stops_waiting_and_keeps_the_offline_answer(
        anna: Anna, repl: Tmux, release: threading.Event) -> None:
    anna.llm.push(Reply(json.dumps(make_plan([("x", "true", "LOW")], goal="The late plan")),
                        hold=release))
    _ask(repl, "plan: free up space")
    repl.wait_for(LABEL + words(r"[\s\S]*Ctrl-C stops waiting"))
    repl.wait_for(r"Planning… model")
    repl.keys("C-c")
    screen = repl.wait_for(words(r"Stopped waiting for the model: Anna's offline answer "
                                 r"stands\."))
    screen = repl.wait_for(r"Type ok to run it\.\s+anna>")
    assert "The model's plan follows" not in screen and "The late plan" not in screen
    release.set()
    _ask(repl, "/quit")
    assert repl.exit_status() == 0


def test_the_confirmation_asked_is_for_the_model_plan_printed_last(
        anna: Anna, repl: Tmux, release: threading.Event) -> None:
    """Free text asks before running: the question comes right after the model's plan, never
    while only the offline answer is on screen."""
    target = anna.work / "m"
    anna.llm.push(Reply(json.dumps(make_plan([("write", f"echo m > {target}", "LOW")],
                                             goal="The model's way")), hold=release))
    _ask(repl, "free up space")
    repl.wait_for(LABEL + words(r"[\s\S]*Ctrl-C stops waiting"))
    assert "[y/N]" not in repl.screen()
    release.set()
    screen = repl.wait_for(r"Run this LOW plan\? \[y/N\]")
    follows = re.search(words("The model's plan follows"), screen)
    assert follows is not None
    assert follows.start() < screen.index("The model's way") < screen.index("Run this LOW")
    repl.type("n")
    repl.keys("Enter")
    repl.wait_for(r"DECLINED")
    _ask(repl, "/quit")
    assert repl.exit_status() == 0
    assert not target.exists()


def test_a_model_plan_that_cannot_be_offered_leaves_the_offline_answer(
        anna: Anna, repl: Tmux, release: threading.Event) -> None:
    """A banned plan is no fallback case (no template answers it): the error is said, and the
    offline answer already on screen stands as the last plan shown."""
    anna.llm.push(Reply(json.dumps(make_plan([("wipe", "rm -rf /", "LOW")], goal="Wipe")),
                        hold=release))
    _ask(repl, "plan: free up space")
    screen = repl.wait_for(LABEL + words(r"[\s\S]*Ctrl-C stops waiting"))
    offline_id = re.search(LABEL, screen).group(1)  # type: ignore[union-attr]
    release.set()
    screen = repl.wait_for(words(r"The model failed \(PLAN_BANNED") + r"[\s\S]*"
                           + words(r"Anna's offline answer above stands"))
    repl.wait_for(r"Type ok to run it\.\s+anna>")
    repl.keys("C-l")
    _ask(repl, "ok")  # runs the last plan shown: the offline one (one read-only df step)
    screen = repl.wait_for(r"Result: \w+[\s\S]*anna>")
    assert "df -h" in screen or "show_df" in screen
    assert str(anna.daemon.client().get_plan(offline_id).status) != "submitted"
    _ask(repl, "/quit")
    assert repl.exit_status() == 0
