"""Issue 36.7: a plan that needs the system daemon says so before it is offered, everywhere
(one-shot, REPL, TUI), says what the person can do, and is never left ``submitted``.

The system step is harmless even if it ran: no such unit exists (and the per-user daemon
would refuse it anyway)."""

from __future__ import annotations

import json
import shutil

import pytest

from annactl.core.sysaccess import join_fix
from tests.daemonfix import make_plan

from .conftest import Anna
from .ptyrun import PtyProcess
from .tmuxrun import Tmux

RESTART = make_plan([("restart", "systemctl restart anna-no-such-unit.service", "MEDIUM")],
                    goal="Restart the unit")
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _statuses(anna: Anna) -> list[str]:
    code, history = anna.json("history")
    assert code == 0, history
    return [p["status"] for p in history["plans"]]


def test_one_shot_refuses_before_the_question_and_keeps_the_plan_as_not_run(
        anna: Anna) -> None:
    anna.llm.push(json.dumps(RESTART))
    term = PtyProcess([*anna.argv, "ask", "--no-templates", "restart the unit"], anna.env)
    assert term.wait(timeout=60) == 9
    text = term.text
    assert "SCOPE_REQUIRES_ROOT" in text and "restart need(s) root" in text
    assert "[y/N]" not in text and "Run this" not in text  # never offered
    assert "hint: run: annactl setup; then: annactl apply " in text
    assert _statuses(anna) == ["dry_run"]  # not "submitted" forever


def test_json_refusal_names_the_plan_and_leaves_it_not_run(anna: Anna) -> None:
    anna.llm.push(json.dumps(RESTART))
    code, doc = anna.json("ask", "--no-templates", "--yes", "restart the unit")
    assert code == 9 and doc["code"] == "SCOPE_REQUIRES_ROOT" and doc["plan_id"], doc
    assert doc["hint"].endswith(f"then: annactl apply {doc['plan_id']}")
    assert _statuses(anna) == ["dry_run"]


@needs_tmux
def test_repl_says_so_instead_of_type_ok(anna: Anna, tmux_runs: list[Tmux]) -> None:
    anna.llm.push(json.dumps(RESTART))
    term = Tmux([*anna.argv, "repl", "--no-templates"], anna.env, anna.work)
    tmux_runs.append(term)
    term.wait_for(r"anna>")
    term.type("plan: restart the unit")
    term.keys("Enter")
    screen = term.wait_for(r"SCOPE_REQUIRES_ROOT")
    assert "Type ok to run it" not in screen
    assert "hint: run: annactl setup" in screen
    term.type("ok")
    term.keys("Enter")  # the last plan still cannot run: refused again, never asked
    term.wait_for(r"(?s)SCOPE_REQUIRES_ROOT.*SCOPE_REQUIRES_ROOT")
    assert "[y/N]" not in term.screen()
    term.keys("C-d")
    assert term.exit_status() == 0
    assert _statuses(anna) == ["dry_run"]


@needs_tmux
def test_tui_box_says_so_and_approve_is_disabled(anna: Anna, tmux_runs: list[Tmux]) -> None:
    anna.llm.push(json.dumps(RESTART))
    term = Tmux([*anna.argv, "tui", "--no-templates", "restart the unit"], anna.env, anna.work)
    tmux_runs.append(term)
    screen = term.wait_for(r"Cannot run here")
    assert "What you can do: run: annactl setup" in term.screen()
    term.keys("a")  # refused with the reason; nothing runs
    term.wait_for(r"need\(s\) root")
    assert "Result:" not in term.screen()
    term.keys("c")
    assert term.exit_status() == 4
    assert _statuses(anna) == ["dry_run"], screen


def test_the_hint_for_someone_outside_group_anna() -> None:
    assert join_fix("kim", administers=False) == (
        "ask an administrator to add you to group anna (sudo usermod -aG anna kim), then "
        "log in again")
    assert join_fix("kim", administers=True).startswith("annactl setup (it adds kim")
