"""Questions that look (issue 39.1), with a scripted model that answers what it is shown.

The fake server (a real HTTP server) plays a model that, asked a question, names the
read-only command that would answer it; shown that command's output (the check results
Anna sends in the second call), it answers from the output and cites the check. Anna's real
planner, a real annad (subprocess, Unix socket, temporary home) runs the checks confined;
nothing is executed. Before issue 39 all of these printed "the documents I was given do not
show this".
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from annactl.planning.planner import Planner
from tests.fakellm import Reply

LOOKS = {
    "is ssh running?": "systemctl is-active sshd.service",
    "what's listening on the network?": "ss -tln",
    "show my ip address": "ip -brief addr",
    "who is logged in?": "who",
    "list big files in my home": "du -a ~ | sort -rn | head -n 5",
}
"""The read-only command the scripted model asks for, per question."""
_RESULTS = re.compile(r'<check_results trust="untrusted">\s*(.*?)\s*</check_results>', re.S)


def _reply(obj: dict[str, Any]) -> Reply:
    full = {"necessary_checks": [], "answer": "", "command": "", "citations": []}
    return Reply(content=json.dumps({**full, **obj}))


def answers_what_it_is_shown(body: dict[str, Any]) -> Reply:
    """The scripted model: asks to look, then answers from what the look printed."""
    messages = body["messages"]
    asked = re.search(r"REQUEST: (.*)", messages[1]["content"])
    request = asked.group(1).strip() if asked else ""
    shown = _RESULTS.search(messages[-1]["content"]) if len(messages) > 2 else None
    if request.startswith("how do I"):
        return _reply({"answer": "tar unpacks it: x extracts, z reads gzip, f names the file.",
                       "command": "tar -xzf archive.tar.gz"})
    if shown is None:
        return _reply({"necessary_checks": [LOOKS[request]]})
    rows = json.loads(shown.group(1).replace("\\u003c", "<").replace("\\u003e", ">"))
    lines = [line.strip() for line in str(rows[0]["output"]).splitlines() if line.strip()]
    if not lines:
        # a claim about the machine cites what it rests on, even "nothing" (an uncited claim
        # is marked unverified, issue 39.7)
        code = str(rows[0]["exit_code"])
        return _reply({"answer": f"The check printed nothing (exit code {code}).",
                       "citations": [{"doc": "check:c1", "quote": code}]})
    return _reply({"answer": "The check shows: " + "; ".join(lines[:3]),
                   "citations": [{"doc": "check:c1", "quote": lines[0][:100]}]})


@pytest.fixture
def looking_model(fake_llm: Any) -> Any:
    fake_llm.responder = answers_what_it_is_shown
    return fake_llm


@pytest.mark.shared_daemon
@pytest.mark.parametrize("question", sorted(LOOKS))
def test_a_question_looks_and_is_answered_from_what_it_saw(question, looking_model,
                                                           make_settings, user_daemon):
    (user_daemon.home / "disk.img").write_bytes(b"\0" * 3_000_000)
    client = user_daemon.client()
    planner = Planner(make_settings(llm_url=looking_model.ollama_url), daemon=client)
    outcome = planner.plan(question, use_templates=False)
    assert outcome.result.ok and outcome.plan is not None, outcome.result.errors
    assert outcome.form == "answer" and outcome.model_calls == 2 and outcome.rounds == 1
    [check] = outcome.checks
    assert check.id == "c1" and check.ran, check.reason
    # the second call was shown the check's output, and the answer is that output
    second = looking_model.chat_bodies()[1]["messages"]
    assert '<check_results trust="untrusted">' in second[-1]["content"]
    notes = outcome.plan.notes_for_user
    first_line = next((ln.strip() for ln in check.output.splitlines() if ln.strip()), "")
    if first_line:
        assert first_line in notes
        assert [(c.doc, c.verified) for c in outcome.citations] == [("check:c1", True)], \
            outcome.citations
    else:
        assert "printed nothing" in notes
    assert "do not show" not in notes
    assert outcome.plan.command_plan == [] and outcome.contradictions == []
    # looked, never changed: the daemon holds the one submitted plan, nothing ran as a step
    assert {str(p.status) for p in client.list_plans().plans} <= {"submitted", "answered"}
    if question == "list big files in my home":
        assert "disk.img" in notes


@pytest.mark.shared_daemon
def test_how_do_i_gets_a_command_and_annas_reading_never_run(looking_model, make_settings,
                                                            user_daemon):
    client = user_daemon.client()
    planner = Planner(make_settings(llm_url=looking_model.ollama_url), daemon=client)
    outcome = planner.plan("how do I extract a tar.gz?", use_templates=False)
    assert outcome.result.ok and outcome.plan is not None
    assert outcome.model_calls == 1 and outcome.checks == []
    notes = outcome.plan.notes_for_user
    assert "tar -xzf archive.tar.gz" in notes and "not run" in notes
    assert "Anna's reading: runs tar" in notes and "risk LOW" in notes
    assert outcome.plan.command_plan == [] and outcome.plan.necessary_checks == []
    # nothing stored, nothing run
    assert not [p for p in client.list_plans().plans if "tar" in p.title]


@pytest.mark.shared_daemon
def test_a_check_that_would_change_the_machine_is_never_run(fake_llm, make_settings,
                                                           user_daemon):
    victim = user_daemon.home / "keep.txt"
    victim.write_text("precious")
    fake_llm.push(json.dumps({"necessary_checks": [f"rm -f {victim}", "whoami"],
                              "answer": "", "command": "", "citations": []}),
                  json.dumps({"necessary_checks": [], "answer": "You are the user.",
                              "command": "", "citations": []}))
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url), daemon=user_daemon.client())
    outcome = planner.plan("who am I?", use_templates=False)
    assert victim.read_text() == "precious"
    assert [c.command for c in outcome.checks] == ["whoami"]
    assert outcome.plan is not None and outcome.plan.notes_for_user == "You are the user."


def test_without_a_daemon_the_answer_says_what_it_would_look_at(looking_model, make_settings):
    planner = Planner(make_settings(llm_url=looking_model.ollama_url), daemon=None)
    outcome = planner.plan("who is logged in?", use_templates=False)
    assert outcome.result.ok and outcome.plan is not None and outcome.model_calls == 1
    assert outcome.plan.notes_for_user == "Anna needs to look first: who."
    assert [c.command for c in outcome.plan.necessary_checks] == ["who"]


def test_a_banned_suggestion_is_not_shown(fake_llm, make_settings):
    fake_llm.push(json.dumps({"necessary_checks": [], "answer": "Wipe it.",
                              "command": "rm -rf --no-preserve-root /", "citations": []}))
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url), daemon=None)
    outcome = planner.plan("how do I free space?", use_templates=False)
    assert outcome.plan is not None
    assert "no-preserve-root" not in outcome.plan.notes_for_user
    assert "Anna bans" in outcome.plan.notes_for_user
