"""The agent loop end to end: plan → execute → a step fails → rolled back → evaluation →
fix plan → approval → success (real annactl, real per-user daemon, real subprocesses in a
temporary home, the fake model server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.daemonfix import make_plan
from tests.fakellm import Reply, plan_json

from .conftest import Anna
from .ptyrun import PtyProcess


def _failing(anna: Anna) -> tuple[Path, Path, str]:
    """A plan whose first step changes a file and whose second fails (the source is missing)."""
    note, target = anna.work / "note.txt", anna.work / "app.conf"
    note.write_text("original\n")
    plan = make_plan([("mark", f"echo changed > {note}", "LOW"),
                      ("copy", f"cp {anna.work}/app.conf.new {target}", "LOW")],
                     goal="Install the new app.conf")
    return note, target, json.dumps(plan)


def _fix(anna: Anna, target: Path, risk: str = "LOW") -> str:
    plan = make_plan([("write", f"echo 'port = 8080' > {target}", risk)],
                     goal="Install the new app.conf")
    return json.dumps(plan)


def _verdict(met: bool, why: str = "step copy exited 1: no such file") -> str:
    return json.dumps({"goals_met": met, "goals": [
        {"goal": "Install the new app.conf", "met": met, "why": why}],
        "summary": "Done." if met else "The copy failed because app.conf.new does not exist.",
        "suggestion": "" if met else "Write the file directly."})


def _user_turns(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def test_transcript_fail_rollback_evaluate_fix_approve_succeed(anna: Anna) -> None:
    note, target, failing = _failing(anna)
    anna.llm.push(failing, _verdict(False), _fix(anna, target), _verdict(True))
    term = PtyProcess([*anna.argv, "ask", "--no-templates", "replace app.conf with the new one"],
                      anna.env)
    # its copy step failed in the preview: never a plain yes (issue 36.6)
    term.expect(r"Type 'run anyway' to run")
    term.send("run anyway\r")
    term.expect(r"Evaluation: goals not met")
    term.expect(r"Ask for a fix\? \[y/N\]")
    assert note.read_text() == "original\n"  # the failed plan was rolled back
    term.send("y\r")
    term.expect(r"(?s)port = 8080.*Run this LOW plan\? \[y/N\]")  # the fix: its own approval
    assert not target.exists()
    term.send("y\r")
    assert term.wait() == 0, term.text
    text = term.text
    assert text.index("Result: failed") < text.index("goals not met") < text.index(
        "Ask for a fix?") < text.index("Result: succeeded") < text.index("Evaluation: goals met")
    assert "by the model" in text and "app.conf.new does not exist" in text
    assert target.read_text() == "port = 8080\n" and note.read_text() == "original\n"

    _plan, evaluate_call, fix_call, evaluate_fix = anna.llm.chat_bodies()
    systems = {b["messages"][0]["content"] for b in anna.llm.chat_bodies()}
    assert len(systems) == 1  # the system message is byte-identical in every call
    results = _user_turns(evaluate_call)[-1]
    assert results.count('<execution_results trust="untrusted">') == 1
    assert '"exit_code":1' in results and "No such file" in results
    assert '"undo":[' in results and '"step_id":"mark"' in results
    assert evaluate_call["format"]["title"] == "Evaluation"
    # the fix continues the conversation: the failed plan as the model's turn, then the results
    assert [m["role"] for m in fix_call["messages"]] == ["system", "user", "assistant", "user"]
    assert "Install the new app.conf" in fix_call["messages"][2]["content"]
    assert "<execution_results" in _user_turns(fix_call)[-1]
    assert fix_call["format"] == _plan["format"]  # the fix is asked for in the plan schema
    assert evaluate_fix["format"]["title"] == "Evaluation"


def test_fix_with_yes_and_fix_flag_runs_and_nests_in_json(anna: Anna) -> None:
    note, target, failing = _failing(anna)
    anna.llm.push(failing, _verdict(False), _fix(anna, target), _verdict(True))
    code, doc = anna.json("ask", "--no-templates", "--yes", "--fix", "replace app.conf with the new one")
    assert code == 0, doc
    assert doc["status"] == "failed" and doc["evaluation"]["goals_met"] is False
    assert doc["evaluation"]["source"] == "model"
    assert doc["fix"]["status"] == "succeeded" and doc["fix"]["source"] == "fix"
    assert doc["fix"]["evaluation"]["goals_met"] is True
    assert doc["fix"]["plan_id"] != doc["plan_id"]
    assert target.read_text() == "port = 8080\n" and note.read_text() == "original\n"


def test_yes_alone_never_approves_a_fix(anna: Anna) -> None:
    note, target, failing = _failing(anna)
    anna.llm.push(failing, _verdict(False))
    proc = anna.run("ask", "--no-templates", "--yes", "replace app.conf with the new one")
    assert proc.returncode == 5, proc.stderr
    assert "goals not met" in proc.stdout and "annactl ask --fix" in proc.stdout
    assert len(anna.llm.chat_bodies()) == 2  # the plan and its evaluation; no fix asked
    assert not target.exists() and note.read_text() == "original\n"


def test_a_high_fix_always_needs_the_typed_word(anna: Anna) -> None:
    rc = anna.daemon.home / ".bashrc"
    rc.write_text("alias a=b\n")
    _note, _target, failing = _failing(anna)
    high = json.dumps(make_plan([("edit", "sed -i s/a=b/a=c/ ~/.bashrc", "HIGH")],
                                goal="Install the new app.conf"))
    anna.llm.push(failing, _verdict(False), high)
    code, doc = anna.json("ask", "--no-templates", "--yes", "--allow-high", "--fix",
                          "replace app.conf with the new one")
    assert code == 5, doc  # the original failure stands
    assert doc["fix"]["code"] == "DECLINED" and doc["fix"]["status"] == "error"
    assert rc.read_text() == "alias a=b\n"


def test_at_most_two_fix_rounds(anna: Anna) -> None:
    _note, _target, failing = _failing(anna)
    anna.llm.push(failing, _verdict(False), failing, _verdict(False), failing, _verdict(False))
    code, doc = anna.json("ask", "--no-templates", "--yes", "--fix", "replace app.conf with the new one")
    assert code == 5, doc
    assert doc["fix"]["status"] == "failed" and doc["fix"]["fix"]["status"] == "failed"
    assert "fix" not in doc["fix"]["fix"]  # no third round
    assert len(anna.llm.chat_bodies()) == 6 and anna.llm.pending() == 0


def test_model_down_after_execution_gives_annas_own_summary(anna: Anna) -> None:
    _note, _target, failing = _failing(anna)
    anna.llm.push(failing, Reply(status=500), Reply(status=500), Reply(status=500))
    code, doc = anna.json("ask", "--no-templates", "--yes", "replace app.conf with the new one")
    assert code == 5, doc
    evaluation = doc["evaluation"]
    assert evaluation["source"] == "anna" and evaluation["goals_met"] is False
    assert evaluation["error_code"] == "LLM_HTTP_ERROR"
    assert "copy failed with exit code 1" in evaluation["goals"][0]["why"]


def test_a_bad_evaluation_is_coded_and_cannot_claim_success(anna: Anna) -> None:
    _note, _target, failing = _failing(anna)
    anna.llm.push(failing, _verdict(True))  # the model claims the failed plan worked
    code, doc = anna.json("ask", "--no-templates", "--yes", "replace app.conf with the new one")
    assert code == 5, doc
    evaluation = doc["evaluation"]
    assert evaluation["source"] == "anna" and evaluation["goals_met"] is False
    assert evaluation["error_code"] == "LLM_BAD_EVALUATION"
    assert any(f.startswith("CONTRADICTS_RECORD") for f in evaluation["findings"])


def test_evaluation_is_stored_in_history(anna: Anna) -> None:
    from annactl.planning.history import History

    _note, _target, failing = _failing(anna)
    anna.llm.push(failing, _verdict(False))
    anna.run("ask", "--no-templates", "--yes", "replace app.conf with the new one")
    state = Path(anna.env.get("XDG_STATE_HOME", Path(anna.env["HOME"]) / ".local/state"))
    store = History(state / "anna")
    stored = [p for c in store.conversations() for p in store.packets(c["id"])
              if p.get("evaluation") or (p.get("input") or {}).get("task") == "evaluate"]
    assert [p["type"] for p in stored] == ["request", "response"]
    document = stored[0]["context"]["documents"][0]
    assert document["trust"] == "untrusted" and document["kind"] == "anna.execution_results.v1"
    assert stored[1]["evaluation"]["goals_met"] is False


def test_repl_fix_after_a_failed_plan(anna: Anna) -> None:
    note, target, failing = _failing(anna)
    anna.llm.push(failing, _verdict(False), _fix(anna, target), _verdict(True))
    term = PtyProcess([*anna.argv, "repl", "--no-templates"],
                      {**anna.env, "PROMPT_TOOLKIT_NO_CPR": "1"})
    term.expect(r"anna>")
    term.send("fix\r")  # nothing ran yet
    term.expect(r"no fix to ask for: no plan has run yet")
    term.send("replace app.conf with the new one\r")
    term.expect(r"Type 'run anyway' to run")  # its copy step failed in the preview
    term.send("run anyway\r")
    term.expect(r"Type fix to ask the model for a new plan")
    assert "Ask for a fix?" not in term.text  # the REPL waits for `fix`
    assert note.read_text() == "original\n"
    term.send("fix\r")
    term.expect(r"(?s)port = 8080.*Run this LOW plan\? \[y/N\]")
    assert not target.exists()
    term.send("y\r")
    term.expect(r"Evaluation: goals met")
    term.send("/fix\r")
    term.expect(r"no fix to ask for: the last plan reached its goals\s+anna>")
    anna.llm.push(plan_json(notes_for_user="It holds port = 8080."))
    term.send("what is in app.conf now?\r")
    term.expect(r"It holds port = 8080\.(?s:.*)anna>")
    term.send("\x04")
    assert term.wait(timeout=20) == 0
    assert target.read_text() == "port = 8080\n"
    bodies = anna.llm.chat_bodies()
    assert len(bodies) == 5
    # the next request sees how the last one went (as untrusted earlier turns)
    assert "Ran it: succeeded, goals met" in _user_turns(bodies[-1])[0]


def test_a_plan_file_gets_annas_evaluation_and_no_fix(anna: Anna) -> None:
    note, _target, failing = _failing(anna)
    path = anna.work / "plan.json"
    path.write_text(failing)
    code, doc = anna.json("apply", str(path), "--yes")
    assert code == 5, doc
    assert doc["evaluation"]["source"] == "anna" and not doc["evaluation"]["goals_met"]
    assert "fix" not in doc and anna.llm.chat_bodies() == []  # no model for a file's plan
    proc = anna.run("apply", str(path), "--yes")
    assert "by Anna (from exit codes)" in proc.stdout and "--fix" not in proc.stdout
    assert note.read_text() == "original\n"


def test_the_evaluation_is_traced(anna: Anna) -> None:
    _note, _target, failing = _failing(anna)
    anna.llm.push(failing, _verdict(False))
    code, doc = anna.json("ask", "--no-templates", "--yes", "replace app.conf with the new one",
                          extra_env={"ANNA_TRACE": "1"})
    assert code == 5 and doc["evaluation"]["source"] == "model"
    traces = Path(anna.env["XDG_STATE_HOME"]) / "anna" / "traces"
    docs = [json.loads(p.read_text()) for p in traces.glob("*.json")]
    evaluated = [d for d in docs if "evaluate" in d]
    assert len(evaluated) == 1 and evaluated[0]["evaluate"]["plan_id"] == doc["plan_id"]
    assert evaluated[0]["evaluate"]["planned_in"] == doc["trace_id"]
    assert [e["event"] for e in evaluated[0]["events"]][-1] == "LLM_RESPONSE_OK"
    assert evaluated[0]["outcome"]["goals_met"] is False


def test_ctrl_c_while_a_fix_is_planned_exits_130(anna: Anna) -> None:
    _note, target, failing = _failing(anna)
    anna.llm.push(failing, _verdict(False), Reply(_fix(anna, target), delay=60))
    term = PtyProcess([*anna.argv, "ask", "--no-templates", "--yes", "--fix",
                       "replace app.conf with the new one"], anna.env)
    # the fix's own spinner, waiting on the model (the whole output is searched)
    term.expect(r"(?s)Asking the model for a fix \(round 1 of 2\).*Planning… model")
    term.interrupt()
    assert term.wait() == 130, term.text
    assert "CANCELLED" in term.text and not target.exists()


def test_an_evaluation_that_contradicts_the_journal_is_shown_so(anna: Anna) -> None:
    note, _target, failing = _failing(anna)
    wrong = json.dumps({"goals_met": False, "goals": [
        {"goal": "Install the new app.conf", "met": False, "why": "copy exited with code 2"}],
        "summary": "The plan was not executed.", "suggestion": "Run it again."})
    anna.llm.push(failing, wrong)
    proc = anna.run("ask", "--no-templates", "--yes", "replace app.conf with the new one")
    assert proc.returncode == 5, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "not true here: not_run" in out and "step mark ran, exit code 0" in out
    assert "not true here: exit_code" in out and "step copy ran, exit code 1" in out
    assert "contradict the daemon's journal" in out
    anna.llm.push(failing, wrong)
    code, doc = anna.json("ask", "--no-templates", "--yes", "replace app.conf with the new one")
    assert code == 5, doc
    claims = doc["evaluation"]["contradictions"]
    assert [(c["fact"], c["where"]) for c in claims] == [("not_run", "summary"),
                                                        ("exit_code", "goals[0].why")]
    assert doc["evaluation"]["source"] == "model" and note.read_text() == "original\n"
