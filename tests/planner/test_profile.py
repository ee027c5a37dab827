"""Forms chosen by what the model does (issue 39.2): the per-model profile, against the fake
server (a real HTTP server) and Anna's real planner, with the profile in a real state dir."""

from __future__ import annotations

import json

from annactl.planning import profile
from annactl.planning.planner import Planner
from annactl.planning.prompt import system_message
from tests.fakellm import Reply, plan_json


def _answer(text: str) -> str:
    return json.dumps({"necessary_checks": [], "answer": text, "command": "", "citations": []})


def test_the_choice_follows_what_the_replies_did() -> None:
    unknown = profile.Profile(key="k")
    first = profile.decide(unknown, budget=60)
    assert first.kind == "contract" and first.trial and "unknown model" in first.why
    fast = profile.Profile(key="k", plan=[{"o": "closed", "s": 12.0, "v": True}])
    assert profile.decide(fast, budget=60) == profile.Choice(
        "contract", "1 of the last 1 full plans closed valid within half the budget "
        "(median 12.0 s)")
    slow = profile.Profile(key="k", plan=[{"o": "closed", "s": 45.0, "v": True},
                                          {"o": "cut", "s": 50.0, "v": None}])
    choice = profile.decide(slow, budget=60)
    assert choice.kind == "small" and "1 cut at the token cap, 1 slow" in choice.why
    invalid = profile.Profile(key="k", plan=[{"o": "closed", "s": 5.0, "v": False}])
    assert profile.decide(invalid, budget=60).kind == "small"
    assert profile.decide(fast, pin="small").why == "pinned by llm_forms=small"
    assert profile.decide(slow, pin="contract").kind == "contract"


def test_profiles_survive_a_damaged_file_and_stay_bounded(tmp_path) -> None:
    (tmp_path / profile.FILE).write_text("{not json", encoding="utf-8")
    assert profile.load(tmp_path, "k").plan == []
    for n in range(profile.KEEP + 3):
        profile.record(tmp_path, "k", "plan", "closed", float(n))
    profile.mark_valid(tmp_path, "k", "plan", True)
    rows = profile.load(tmp_path, "k").plan
    assert len(rows) == profile.KEEP and rows[-1] == {"o": "closed", "s": 10.0, "v": True}


def test_an_unknown_model_falls_back_to_the_small_form_within_the_budget(
        fake_llm, make_settings, telemetry) -> None:
    settings = make_settings(llm_url=fake_llm.ollama_url, llm_forms="auto", llm_budget=8.0)
    # the full contract does not close within its half of the budget; the small form does
    fake_llm.push(Reply(content=plan_json(), delay=6.0), _answer("Memory is at 37.5 %."))
    planner = Planner(settings)
    outcome = planner.plan("what uses my memory?", telemetry=telemetry, use_templates=False)
    assert outcome.result.ok and outcome.plan is not None and outcome.form == "answer"
    assert outcome.elapsed_s < 8.0 + 1.0
    bodies = fake_llm.chat_bodies()
    assert bodies[0]["messages"][0]["content"] == system_message()
    assert bodies[1]["messages"][0]["content"] == system_message("answer")
    assert "unknown model" in outcome.form_why and "asked again in the answer form" in \
        outcome.form_why
    key = profile.key_of("ollama", settings.resolved_llm_url, "test-model")
    assert [r["o"] for r in profile.load(settings.state_dir, key).plan] == ["slow"]
    # learned: the next question goes straight to the small form
    fake_llm.push(_answer("Memory is at 37.5 %."))
    again = planner.plan("what uses my memory?", telemetry=telemetry, use_templates=False)
    assert again.form == "answer" and again.model_calls == 1
    assert "the small forms" in again.form_why


def test_a_model_that_closes_full_plans_gets_the_contract_for_questions_too(
        fake_llm, make_settings, telemetry) -> None:
    settings = make_settings(llm_url=fake_llm.ollama_url, llm_forms="auto", llm_budget=30.0)
    fake_llm.push(plan_json(), plan_json())
    planner = Planner(settings)
    first = planner.plan("tune my system", telemetry=telemetry, use_templates=False)
    assert first.result.ok and first.form.startswith("plan")
    second = planner.plan("what uses my memory?", telemetry=telemetry, use_templates=False)
    assert second.result.ok and second.form == "plan"
    assert "1 of the last 1 full plans closed valid" in second.form_why
    assert fake_llm.chat_bodies()[1]["messages"][0]["content"] == system_message()


def test_a_pin_keeps_the_small_forms_for_a_capable_model(fake_llm, make_settings,
                                                         telemetry) -> None:
    settings = make_settings(llm_url=fake_llm.ollama_url, llm_forms="small")
    key = profile.key_of("ollama", settings.resolved_llm_url, "test-model")
    profile.record(settings.state_dir, key, "plan", "closed", 3.0, True)
    fake_llm.push(_answer("Memory is at 37.5 %."))
    outcome = Planner(settings).plan("what uses my memory?", telemetry=telemetry,
                                     use_templates=False)
    assert outcome.form == "answer" and outcome.form_why.startswith("pinned by llm_forms=small")


def test_a_confident_template_says_no_form_was_asked(make_settings, telemetry) -> None:
    outcome = Planner(make_settings(llm_forms="auto")).plan("install htop",
                                                           telemetry=telemetry)
    assert outcome.template is not None and outcome.model_calls == 0
    assert outcome.form_why == "a template answered: the model was not asked"
