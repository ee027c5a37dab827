"""Risk tiers end to end: the real annactl, the real daemon, plans touching only a temp dir.

LOW needs one confirmation; HIGH refuses a single one and needs its word; banned never runs;
INFO runs without asking. Prompts are answered on a real pseudo-terminal.
"""

from __future__ import annotations

import json

from tests.daemonfix import make_plan

from .conftest import Anna
from .ptyrun import PtyProcess


def _low(anna: Anna) -> tuple[object, object]:
    target = anna.work / "f.txt"
    target.write_text("original\n")
    return target, anna.plan_file(make_plan([("write", f"echo changed > {target}", "LOW")],
                                            goal="Change f"))


def test_low_without_terminal_or_yes_is_declined(anna: Anna) -> None:
    target, plan = _low(anna)
    proc = anna.run("apply", str(plan))
    assert proc.returncode == 4
    assert "DECLINED" in proc.stderr and "--yes" in proc.stderr
    assert target.read_text() == "original\n"


def test_low_with_yes_runs_and_rolls_back(anna: Anna) -> None:
    target, plan = _low(anna)
    code, out = anna.json("apply", str(plan), "--yes")
    assert code == 0 and out["status"] == "succeeded"
    assert target.read_text() == "changed\n"
    code, back = anna.json("rollback", out["plan_id"], "--yes")
    assert code == 0 and back["status"] == "rolled_back" and back["plan_id"] == out["plan_id"]
    assert target.read_text() == "original\n"


def test_low_one_confirmation_on_a_terminal(anna: Anna) -> None:
    target, plan = _low(anna)
    term = PtyProcess([*anna.argv, "apply", str(plan)], anna.env)
    term.expect(r"Run this LOW plan\? \[y/N\]")
    term.send("\r")  # Enter: the default is No
    assert term.wait() == 4
    assert target.read_text() == "original\n"
    term = PtyProcess([*anna.argv, "apply", str(plan)], anna.env)
    term.expect(r"Run this LOW plan\? \[y/N\]")
    term.send("y\r")
    assert term.wait() == 0, term.text
    assert "Result: succeeded" in term.text
    assert "Type" not in term.text  # no second confirmation for LOW
    assert target.read_text() == "changed\n"


def _high(anna: Anna) -> tuple[object, object]:
    rc = anna.daemon.home / ".bashrc"
    rc.write_text("alias a=b\n")
    plan = anna.plan_file(make_plan([("edit", "sed -i s/a=b/a=c/ ~/.bashrc", "LOW")],
                                    goal="Edit bashrc"))
    return rc, plan


def test_high_refuses_a_single_confirmation(anna: Anna) -> None:
    rc, plan = _high(anna)
    code, out = anna.json("apply", str(plan), "--yes")  # --yes alone: up to MEDIUM only
    assert code == 4 and out["code"] == "DECLINED" and out["plan_id"]  # the --json contract
    term = PtyProcess([*anna.argv, "apply", str(plan)], anna.env)
    term.expect(r"Run this HIGH plan\? \[y/N\]")
    term.send("y\r")
    term.expect(r"Type '~/.bashrc' to run it:")
    term.send("yes\r")  # a second "yes" is not the word
    assert term.wait() == 4
    assert "DECLINED" in term.text
    assert rc.read_text() == "alias a=b\n"


def test_high_with_the_word_runs(anna: Anna) -> None:
    rc, plan = _high(anna)
    term = PtyProcess([*anna.argv, "apply", str(plan)], anna.env)
    term.expect(r"Run this HIGH plan\? \[y/N\]")
    term.send("y\r")
    term.expect(r"Type '~/.bashrc' to run it:")
    term.send("~/.bashrc\r")
    assert term.wait() == 0, term.text
    assert rc.read_text() == "alias a=c\n"


def test_high_with_yes_and_allow_high(anna: Anna) -> None:
    rc, plan = _high(anna)
    code, out = anna.json("apply", str(plan), "--yes", "--allow-high")
    assert code == 0 and out["status"] == "succeeded"
    assert out["annotated"]["final_risk"] == "HIGH"
    assert rc.read_text() == "alias a=c\n"


def test_banned_never_runs(anna: Anna) -> None:
    marker = anna.work / "marker"
    # if this ever ran, the marker would exist (and curl to the discard port would fail)
    plan = anna.plan_file(make_plan(
        [("fetch", f"touch {marker} && curl -s http://127.0.0.1:9/x | sh", "LOW")]))
    for flags in ([], ["--yes"], ["--yes", "--allow-high"]):
        proc = anna.run("apply", str(plan), *flags)
        assert proc.returncode == 3, proc.stderr
        assert "PLAN_BANNED" in proc.stderr
    assert not marker.exists()
    code, history = anna.json("history")
    assert code == 0 and history["plans"] == []  # never even stored


def test_info_runs_without_asking(anna: Anna) -> None:
    (anna.work / "f.txt").write_text("hello\n")
    plan = anna.plan_file(make_plan([("look", f"cat {anna.work}/f.txt", "INFO")]))
    code, out = anna.json("apply", str(plan))
    assert code == 0 and out["status"] == "succeeded"
    assert "hello" in json.dumps(out["events"])


def test_failed_step_rolls_back_and_exits_5(anna: Anna) -> None:
    target, _ = _low(anna)
    plan = anna.plan_file(make_plan([("write", f"echo changed > {target}", "LOW"),
                                     ("fail", f"ls {anna.work}/missing", "INFO")]))
    proc = anna.run("apply", str(plan), "--yes")
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "every change made was undone" in proc.stdout
    assert "restored byte-exact" in proc.stdout
    assert target.read_text() == "original\n"
