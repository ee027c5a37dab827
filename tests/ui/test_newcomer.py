"""A newcomer's first minutes: honest plan states, history pages and short ids, output that
reads in a pipe and at 80x24, and one-word mistakes that never reach the model."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

import pytest

from tests.daemonfix import make_plan

from .conftest import Anna
from .tmuxrun import Tmux


def _submit(anna: Anna, goal: str, command: str = "true", risk: str = "INFO") -> str:
    plan = make_plan([("s", command, risk)], goal=goal)
    from anna_common.plan import ActionPlan

    client = anna.daemon.client()
    try:
        return client.submit(ActionPlan.model_validate(plan), request=goal).plan_id
    finally:
        client.close()


def test_a_dry_run_is_recorded_as_one_and_can_still_be_applied(anna: Anna) -> None:
    target = anna.work / "f.txt"
    target.write_text("original\n")
    anna.llm.push(json.dumps(make_plan([("write", f"echo changed > {target}", "LOW")],
                                       goal="Change the file")))
    code, out = anna.json("ask", "--dry-run", "--no-templates", "change the file")
    assert code == 0 and out["status"] == "dry_run"
    code, shown = anna.json("show", out["plan_id"])
    assert shown["status"] == "dry_run"  # the same word in --json, show and history
    assert [s["status"] for s in shown["record"]["steps"]] == ["skipped"]
    code, listed = anna.json("history")
    assert listed["plans"][0]["status"] == "dry_run"
    text = anna.run("show", out["plan_id"]).stdout
    assert "Nothing was run" in text and "annactl rollback" not in text
    code, applied = anna.json("apply", out["plan_id"], "--yes")
    assert code == 0 and applied["status"] == "succeeded"
    assert target.read_text() == "changed\n"


def test_an_answer_is_recorded_as_answered(anna: Anna) -> None:
    code, out = anna.json("ask", "how is my system?")
    assert code == 0 and out["status"] == "answered"
    code, shown = anna.json("show", out["plan_id"])
    assert shown["status"] == "answered" and shown["record"]["steps"] == []
    assert anna.json("history")[1]["plans"][0]["status"] == "answered"
    proc = anna.run("apply", out["plan_id"], "--yes")
    assert "annactl rollback" not in proc.stdout


def test_no_rollback_is_offered_for_a_plan_that_changed_nothing(anna: Anna) -> None:
    plan_id = _submit(anna, "Look only", "uname -r")
    code, applied = anna.json("apply", plan_id, "--yes")
    assert code == 0 and applied["status"] == "succeeded"
    text = anna.run("show", plan_id).stdout
    assert "annactl rollback" not in text and "Nothing was changed" in text
    refused = anna.run("rollback", plan_id, "--yes")
    assert refused.returncode == 2 and "nothing to roll back" in refused.stderr
    target = anna.work / "g.txt"
    target.write_text("x\n")
    changed = _submit(anna, "Change g", f"echo y > {target}", "LOW")
    assert anna.json("apply", changed, "--yes")[0] == 0
    assert f"annactl rollback {changed}" in anna.run("show", changed).stdout


def test_history_pages_and_takes_short_ids(anna: Anna) -> None:
    ids = [_submit(anna, f"plan number {i}") for i in range(5)]
    code, first = anna.json("history", "--limit", "2")
    assert code == 0 and first["more"] is True
    assert [p["plan_id"] for p in first["plans"]] == ids[::-1][:2]
    code, second = anna.json("history", "--limit", "2", "--before", first["plans"][-1]["plan_id"])
    assert [p["plan_id"] for p in second["plans"]] == ids[::-1][2:4]
    code, every = anna.json("history", "--all")
    assert [p["plan_id"] for p in every["plans"]] == ids[::-1] and every["more"] is False
    text = anna.run("history", "--limit", "2").stdout
    assert "annactl history --before " + ids[3][-6:] in text
    assert ids[4][-6:] in text and ids[4] not in text  # short ids on screen
    code, shown = anna.json("show", ids[0][-6:])
    assert code == 0 and shown["plan_id"] == ids[0]
    assert anna.run("show", "zzzzzz").returncode == 2
    assert anna.run("history", "--limit", "-3").returncode == 2


@pytest.mark.parametrize(("word", "guess"), [("version", "--version"), ("histroy", "history"),
                                             ("stauts", "status"), ("upgrade", None)])
def test_a_one_word_mistake_never_reaches_the_model(anna: Anna, word: str,
                                                    guess: str | None) -> None:
    proc = anna.run(word)
    assert proc.returncode == 12, proc.stderr
    assert f"no such command: {word}" in proc.stderr
    if guess:
        assert f"did you mean {guess}?" in proc.stderr
    assert anna.llm.chat_bodies() == []


@pytest.mark.parametrize("args", [["-h"], ["status", "-h"], ["ask", "-h"], ["history", "-h"],
                                  ["policy", "show", "-h"]])
def test_dash_h_is_help_as_everywhere_else(anna: Anna, args: list[str]) -> None:
    short, long = anna.run(*args), anna.run(*args[:-1], "--help")
    assert short.returncode == long.returncode == 0, short.stderr
    assert short.stdout == long.stdout and "Usage: annactl" in short.stdout
    assert anna.llm.chat_bodies() == []


def _no_trailing_blanks(text: str) -> None:
    bad = [line for line in text.splitlines() if line != line.rstrip()]
    assert not bad, bad


def test_pipe_output_has_no_trailing_blanks_and_prose_is_not_wrapped(anna: Anna) -> None:
    _submit(anna, "A plan with a rather long title that would not fit a narrow column at all")
    for args in (["status"], ["doctor"], ["history"],
                 ["ask", "--dry-run", "why is my disk full?"]):
        proc = anna.run(*args)
        assert "Traceback" not in proc.stderr  # doctor may find problems: its exit says so
        assert proc.stdout.strip(), args
        _no_trailing_blanks(proc.stdout)
    notes = anna.run("ask", "--dry-run", "why is my disk full?").stdout
    line = next(x for x in notes.splitlines() if x.startswith("Notes:"))
    # one line in a pipe, never hard-wrapped at 80: the disk summary and the measured tail
    assert "Disks:" in line and len(line) > 80 and ("Measured:" in line or "measure" in line)


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("args", [["history"], ["status"], ["doctor"],
                                  ["ask", "--dry-run", "why is my disk full?"]])
def test_each_command_reads_at_80x24(anna: Anna, args: list[str]) -> None:
    _submit(anna, "Install the htop process viewer and show me how to use it")
    argv = ["bash", "-c", shlex.join([*anna.argv, *args]) + "; echo '<<done>>'; read"]
    term = Tmux(argv, anna.env, anna.work, size=(80, 24))
    try:
        screen = term.wait_for(r"<<done>>")
    finally:
        term.close()
    keep = os.environ.get("SCREEN_CAPTURE_DIR")  # the captures shown in docs/dev/screens-80x24.md
    if keep:
        (Path(keep) / ("-".join(args[:2]).strip("-") + ".txt")).write_text(screen)
    lines = screen.splitlines()
    assert all(len(line) <= 80 for line in lines)
    if args == ["history"]:
        header = next(x for x in lines if x.split()[:1] == ["id"])
        assert header.split() == ["id", "when", "status", "risk", "steps", "title"]
        assert "Install the htop" in screen  # the title gets the room
    if args[0] == "ask":
        assert "journalctl" in screen and "dry run: nothing was changed" in screen


def test_show_renders_the_json_exactly_as_the_models_would(anna: Anna) -> None:
    from rich.console import Console

    from anna_common.protocol.models import PlanRecord
    from annactl.core.wire import ShapeError, wire
    from annactl.ui import render

    target = anna.work / "h.txt"
    target.write_text("x\n")
    plan_id = _submit(anna, "Change h", f"echo y > {target}", "LOW")
    assert anna.json("apply", plan_id, "--yes")[0] == 0
    data = anna.json("show", plan_id)[1]["record"]

    def text(renderable: object) -> str:
        console = Console(width=80, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
        console.print(renderable)
        return console.export_text()

    assert text(render.record_view(wire(data))) == \
        text(render.record_view(PlanRecord.model_validate(data)))
    broken = {k: v for k, v in data.items() if k != "annotated"}
    with pytest.raises(ShapeError):
        render.record_view(wire(broken))
