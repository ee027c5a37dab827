"""The necessary-checks loop against a real annad (subprocess, Unix socket, tmp home)."""

from __future__ import annotations

import pytest

from annactl.planning.planner import Planner
from annactl.planning.prompt import system_message
from tests.fakellm import Reply, plan_json


def _plan_with_check(image: str, *, check: bool = True, also: str = "") -> str:
    checks = [{"id": "check_file", "description": "image exists",
               "command": f"test -f {image} && echo exists || echo missing{also}",
               "risk_level": "INFO", "required": True}] if check else []
    return plan_json(
        goals=["Set the wallpaper"], necessary_checks=checks,
        command_plan=[{"id": "apply", "description": "show it", "command":
                       f"swww img {image}", "risk_level": "LOW", "rollback_id": None,
                       "requires_confirmation": True}])


def test_checks_run_on_the_daemon_and_feed_one_refined_plan(fake_llm, make_settings,
                                                            user_daemon):
    image = user_daemon.home / "fjord.png"
    image.write_bytes(b"\x89PNG fake")
    fake_llm.push(_plan_with_check(str(image)), _plan_with_check(str(image), check=False))
    client = user_daemon.client()
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url), daemon=client)
    outcome = planner.plan(f"put {image} on my desktop", use_templates=False)
    assert outcome.result.ok and outcome.plan is not None
    assert outcome.rounds == 1 and outcome.model_calls == 2
    assert [(c.id, c.ran, c.exit_code) for c in outcome.checks] == [("check_file", True, 0)]
    assert "exists" in outcome.checks[0].output
    refine = fake_llm.chat_bodies()[1]["messages"]
    assert [m["role"] for m in refine] == ["system", "user", "assistant", "user"]
    assert refine[0]["content"] == system_message()
    assert '<check_results trust="untrusted">' in refine[3]["content"]
    assert "exists" in refine[3]["content"]
    assert outcome.plan.necessary_checks == []
    # the checks ran; nothing was executed: the daemon only holds submitted plans
    assert {p.status for p in client.list_plans().plans} == {"submitted"}


@pytest.mark.shared_daemon
def test_checks_rounds_are_bounded(fake_llm, make_settings, user_daemon):
    image = user_daemon.home / "missing.png"
    fake_llm.push(*[_plan_with_check(str(image), also=f" {n}") for n in range(4)])
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url), daemon=user_daemon.client())
    outcome = planner.plan("wallpaper please", use_templates=False)
    assert outcome.rounds == 2 and outcome.model_calls == 3
    assert [c.output.strip() for c in outcome.checks] == ["missing 0", "missing 1"]
    assert fake_llm.pending() == 1


def test_a_refined_plan_that_keeps_its_checks_ends_the_rounds(fake_llm, make_settings,
                                                               user_daemon):
    """Issue 22 item 7: the same checks again would give the same results and a third,
    byte-identical request (and a third stored plan): the refined plan is the answer."""
    image = user_daemon.home / "missing.png"
    fake_llm.push(*[_plan_with_check(str(image))] * 4)
    client = user_daemon.client()
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url), daemon=client)
    outcome = planner.plan("wallpaper please", use_templates=False)
    assert outcome.result.ok and outcome.rounds == 1 and outcome.model_calls == 2
    assert [c.output.strip() for c in outcome.checks] == ["missing"]
    assert fake_llm.pending() == 2
    assert len(client.list_plans().plans) == 1  # one plan stored for the one checks round


@pytest.mark.shared_daemon
def test_telemetry_comes_from_the_daemon_when_not_given(fake_llm, make_settings, user_daemon):
    fake_llm.push(plan_json())
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url), daemon=user_daemon.client())
    planner.plan("what runs?")
    user = fake_llm.chat_bodies()[0]["messages"][1]["content"]
    hostname = user_daemon.client().telemetry().telemetry.system.hostname
    assert hostname and f'"hostname":"{hostname[:40]}"' in user


@pytest.mark.parametrize("budget", [1])
@pytest.mark.shared_daemon
def test_refinement_stops_when_the_call_budget_is_spent(fake_llm, make_settings, user_daemon,
                                                        budget):
    fake_llm.push(_plan_with_check(str(user_daemon.home / "a.png")))
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url, max_model_calls=budget),
                      daemon=user_daemon.client())
    outcome = planner.plan("wallpaper please", use_templates=False)
    assert outcome.result.ok and outcome.rounds == 0 and outcome.model_calls == 1


@pytest.mark.shared_daemon
def test_a_refinement_the_budget_cuts_leaves_the_plan_from_before(fake_llm, make_settings,
                                                                  user_daemon):
    """Issue 24.1: the time budget spans checks and refinement; running out there keeps the
    valid plan the checks came from instead of turning it into an error."""
    first = _plan_with_check(str(user_daemon.home / "a.png"))
    fake_llm.push(first, Reply(first, delay=120.0))
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url, llm_budget=8.0,
                                    llm_timeout=300.0), daemon=user_daemon.client())
    outcome = planner.plan("wallpaper please", use_templates=False)
    assert outcome.result.ok and outcome.plan is not None and outcome.rounds == 1
    assert outcome.plan.necessary_checks and outcome.llm_s < 60


@pytest.mark.shared_daemon
def test_a_question_gets_the_templates_check_results_and_may_cite_them(fake_llm, make_settings,
                                                                      user_daemon):
    """Issue 25.2: check results are documents of the request packet, given to the answer
    form; a citation of a check by its id is verified against its stored result."""
    import json

    from tests.planner.conftest import make_telemetry

    snapshot = make_telemetry()
    snapshot.disks[0].mountpoint = str(user_daemon.home)
    fake_llm.push(json.dumps({"answer": "The biggest directories are listed.", "citations": [
        {"doc": "check:biggest_dirs", "quote": "ran:true"},
        {"doc": "check:biggest_dirs", "quote": "/nowhere/else"}]}))
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url), daemon=user_daemon.client())
    outcome = planner.plan("why is my disk so full lately", telemetry=snapshot)
    assert outcome.form == "answer" and outcome.plan is not None and outcome.template is None
    user = fake_llm.chat_bodies()[0]["messages"][1]["content"]
    assert '<checks trust="untrusted">' in user and "biggest_dirs" in user
    docs = [d["kind"] for d in outcome.packet["context"]["documents"]]
    assert "check_results" in docs
    assert [c.verified for c in outcome.citations] == [True, False]
    assert any(c.fact == "citation check:biggest_dirs" for c in outcome.contradictions)


def test_a_request_keeps_one_stored_plan_through_its_rounds(fake_llm, make_settings,
                                                             user_daemon):
    """Issue 22 item 7: each round's plan revises the one stored for the request; the
    checks of both rounds are events of it, and the plan offered (the final one, its own
    digest) is that same plan."""
    import sqlite3

    from annactl.commands.flow import Flow
    from tests.waiting import WAIT_S

    image = user_daemon.home / "missing.png"
    fake_llm.push(_plan_with_check(str(image), also=" 0"), _plan_with_check(str(image), also=" 1"),
                  _plan_with_check(str(image), check=False))
    client = user_daemon.client()
    flow = Flow(make_settings(llm_url=fake_llm.ollama_url), client)
    prepared = flow.plan_text("wallpaper please", use_templates=False)
    assert prepared.outcome is not None and prepared.outcome.rounds == 2
    assert [p.plan_id for p in client.list_plans(limit=0).plans] == [prepared.plan_id]
    record = client.get_plan(prepared.plan_id)
    assert record.digest == prepared.digest and not record.annotated.checks
    with sqlite3.connect(user_daemon.state / "journal.sqlite3", timeout=WAIT_S) as db:
        kinds = [k for (k,) in db.execute("SELECT kind FROM events WHERE plan_id=? ORDER BY id",
                                          (prepared.plan_id,))]
    assert kinds.count("checks_run") == 2 and kinds.count("plan_revised") == 2, kinds
    assert kinds[0] == "plan_submitted"
    events = list(client.execute(prepared.plan_id, prepared.digest, confirmed=True,
                                 high_confirmed=False))
    assert events[-1].type == "plan_finished"
