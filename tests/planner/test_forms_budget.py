"""Issue 24: request forms sized to the request, the time budget, fallbacks and repairs
that can help — end to end through the planner and the fake LLM server (real HTTP)."""

from __future__ import annotations

import json
import re
import time

import pytest

from anna_common.errors import ErrorCode, LLMError
from annactl.planning import forms
from annactl.planning.planner import Planner
from annactl.planning.prompt import system_message
from tests.fakellm import Reply, plan_json
from tests.planner.conftest import make_telemetry

EVERYDAY = {
    "how is my system": "answer",
    "install htop": "package",
    "why is my disk full": "answer",
    "change my wallpaper to ~/sea.png": "wallpaper",
    "restart ssh": "service",
    "show me failed services": "answer",
    "free up space": "plan",
    "what uses my memory": "answer",
    "add an alias ll='ls -la' to my .bashrc": "plan",
    "enable the firewall": "service",
    "could you put the htop program on this box please": "plan",
    "please uninstall nano": "package",
}


@pytest.mark.parametrize(("request_text", "form"), sorted(EVERYDAY.items()))
def test_each_everyday_request_gets_a_form_sized_to_it(request_text: str, form: str) -> None:
    assert forms.choose(request_text) == form


def test_the_small_system_messages_are_short_and_static() -> None:
    for form in forms.SMALL_FORMS:
        text = system_message(form)
        assert len(text) < 4000  # ~1,000 tokens at the least favourable 4 chars a token
        assert text == system_message(form)
    assert len(system_message("answer")) * 5 < len(system_message("plan"))


def _planner(settings, **kwargs) -> Planner:
    return Planner(settings, daemon=None, **kwargs)


def test_a_question_gets_the_answer_form_and_its_citations_are_verified(
        fake_llm, make_settings):
    telemetry = make_telemetry()
    fake_llm.push(json.dumps({"answer": "Memory is at 38 % and / is 93 % full.", "citations": [
        {"doc": "telemetry:memory.percent", "quote": "38%"},
        {"doc": "telemetry:disks.0.percent", "quote": "12"},
        {"doc": "telemetry:cpu.flux", "quote": "1"}]}))
    outcome = _planner(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url)).plan(
        "how much memory is free?", telemetry=telemetry)
    body = fake_llm.chat_bodies()[0]
    assert body["messages"][0]["content"] == system_message("answer")
    schema = body["response_format"]["json_schema"]["schema"]
    assert set(schema["properties"]) == {"necessary_checks", "answer", "command", "citations"}
    assert body["max_tokens"] <= 512
    assert outcome.result.ok and outcome.plan is not None and outcome.form == "answer"
    assert outcome.plan.notes_for_user.startswith("Memory is at 38")
    assert not outcome.plan.command_plan and not outcome.plan.necessary_checks
    verdicts = {c.doc: c.verified for c in outcome.citations}
    assert verdicts == {"telemetry:memory.percent": True, "telemetry:disks.0.percent": False,
                        "telemetry:cpu.flux": False}
    flagged = [c for c in outcome.contradictions if c.fact.startswith("citation")]
    assert {c.fact for c in flagged} == {"citation telemetry:disks.0.percent",
                                        "citation telemetry:cpu.flux"}
    assert next(c for c in flagged if "disks" in c.fact).telemetry == "93"  # whole percent, as the person sees it
    assert outcome.summary()["citations"][0]["verified"] is True


def test_a_family_request_lets_the_model_fill_values_and_anna_writes_the_commands(
        fake_llm, make_settings):
    fake_llm.push(json.dumps({"action": "install", "package": "ripgrep"}))
    outcome = _planner(make_settings(llm_url=fake_llm.ollama_url)).plan(
        "please install ripgrep, the fast grep tool", telemetry=make_telemetry())
    body = fake_llm.chat_bodies()[0]
    assert body["messages"][0]["content"] == system_message("package")
    assert set(body["format"]["properties"]) == {"action", "package"}
    assert outcome.result.ok and outcome.plan is not None and outcome.form == "package"
    assert [s.command for s in outcome.plan.command_plan] == [
        "pacman -S --needed --noconfirm ripgrep"]
    assert outcome.plan.rollback_plan and outcome.template is None


def test_a_family_value_the_template_refuses_is_repaired_like_a_schema_error(
        fake_llm, make_settings):
    fake_llm.push(json.dumps({"action": "install", "package": "rip grep; rm -rf ~"}),
                  json.dumps({"action": "install", "package": "ripgrep"}))
    outcome = _planner(make_settings(llm_url=fake_llm.ollama_url)).plan(
        "please install ripgrep, the fast grep tool", telemetry=make_telemetry())
    assert outcome.repairs == 1 and outcome.plan is not None
    assert "one name" in fake_llm.chat_bodies()[1]["messages"][-1]["content"]


WEAK = "tell me about my system health"
"""A request the system-status template matches only weakly: the model is asked first."""


def test_the_budget_ends_a_slow_model_and_the_template_answers_with_a_note(
        fake_llm, make_settings):
    fake_llm.push(Reply(plan_json(), delay=60.0))
    started = time.monotonic()
    outcome = _planner(make_settings(llm_url=fake_llm.ollama_url, llm_budget=1.0,
                                     llm_timeout=120.0)).plan(WEAK, telemetry=make_telemetry())
    waited = time.monotonic() - started
    assert outcome.template is not None and outcome.plan is not None
    assert "1 s budget" in (outcome.offline_reason or "")
    assert waited < 30  # by construction ~1 s; the scripted reply would take 60 s


def test_the_budget_without_a_template_is_a_coded_timeout(fake_llm, make_settings):
    fake_llm.push(Reply(plan_json(), delay=60.0))
    with pytest.raises(LLMError) as info:
        _planner(make_settings(llm_url=fake_llm.ollama_url, llm_budget=1.0)).plan(
            "tune my system", telemetry=make_telemetry())
    assert info.value.code == ErrorCode.LLM_TIMEOUT and info.value.detail.get("budget")
    assert "ANNA_LLM_BUDGET" in (info.value.hint or "")


def test_the_budget_ends_a_reply_that_trickles_in(fake_llm, make_settings):
    fake_llm.push(Reply(runaway=True, chunk_delay=0.05))
    started = time.monotonic()
    outcome = _planner(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url,
                                     llm_budget=1.0)).plan(WEAK, telemetry=make_telemetry())
    assert outcome.template is not None and "budget" in (outcome.offline_reason or "")
    assert time.monotonic() - started < 30


def test_a_reply_cut_at_the_cap_is_not_repaired_when_a_template_fits(fake_llm, make_settings):
    fake_llm.cap_tokens = True
    fake_llm.push(Reply(runaway=True))
    outcome = _planner(make_settings(llm_url=fake_llm.ollama_url)).plan(
        WEAK, telemetry=make_telemetry())
    assert outcome.model_calls == 1 and outcome.template is not None
    assert "cut at the token cap" in (outcome.offline_reason or "")
    assert outcome.finish_reasons == ["length"]


def test_a_small_form_cut_at_the_cap_without_a_template_is_not_repaired(
        fake_llm, make_settings):
    fake_llm.cap_tokens = True
    fake_llm.push(Reply(runaway=True), plan_json())
    with pytest.raises(LLMError) as info:
        _planner(make_settings(llm_url=fake_llm.ollama_url)).plan(
            "why is my fan loud?", telemetry=make_telemetry())
    assert info.value.code == ErrorCode.LLM_BAD_REPLY and info.value.detail.get("truncated")
    assert len(fake_llm.chat_bodies()) == 1 and fake_llm.pending() == 1


def test_a_bad_reply_with_a_template_ends_in_the_template_not_an_error(fake_llm, make_settings):
    fake_llm.push("not json", "still not json")
    outcome = _planner(make_settings(llm_url=fake_llm.ollama_url)).plan(
        WEAK, telemetry=make_telemetry())
    assert outcome.template is not None and outcome.repairs == 1
    assert "could not be used (LLM_BAD_REPLY)" in (outcome.offline_reason or "")


def test_a_500_at_temperature_0_falls_to_the_template_without_an_identical_resend(
        fake_llm, make_settings):
    fake_llm.push(*[Reply(status=500, error="does not match the expected peg-native format")]
                  * 4)
    outcome = _planner(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url)).plan(
        WEAK, telemetry=make_telemetry())
    bodies = [json.dumps(b, sort_keys=True) for b in fake_llm.chat_bodies()]
    assert outcome.template is not None and len(bodies) == len(set(bodies))


def test_the_same_request_a_minute_later_is_served_from_the_cache(fake_llm, make_settings):
    """Issue 25.3: live telemetry jitters between the two; the rounded key does not."""
    settings = make_settings(llm_url=fake_llm.ollama_url, llm_cache="readwrite")
    fake_llm.push(json.dumps({"answer": "Fine.", "citations": []}))
    first, later = make_telemetry(), make_telemetry()
    later.cpu.load_1 = 0.61
    later.memory.percent = 38.2
    later.system.uptime_seconds += 60
    later.processes.top_cpu.reverse()
    one = _planner(settings).plan("how are my fans doing?", telemetry=first)
    two = _planner(settings).plan("how are my fans doing?", telemetry=later)
    assert len(fake_llm.chat_bodies()) == 1
    assert one.plan is not None and two.plan is not None
    assert two.plan.notes_for_user == "Fine."


def test_a_family_answer_that_needs_no_step_is_the_answer(fake_llm, make_settings):
    """"install htop" when htop is installed: the family template says so; that is no
    off-request reply (the golden sim found it refused after a useless repair)."""
    fake_llm.push(json.dumps({"action": "install", "package": "htop"}))
    outcome = _planner(make_settings(llm_url=fake_llm.ollama_url)).plan(
        "install htop", telemetry=make_telemetry(), use_templates=False)
    assert outcome.plan is not None and not outcome.plan.command_plan
    assert "already installed" in outcome.plan.notes_for_user and outcome.model_calls == 1


def test_the_budget_left_is_shown_while_waiting(fake_llm, make_settings):
    from annactl.commands.spinner import _spinner_text

    fake_llm.push(json.dumps({"answer": "Fine.", "citations": []}))
    seen = []
    _planner(make_settings(llm_url=fake_llm.ollama_url, llm_budget=45.0)).plan(
        "how much memory is free?", telemetry=make_telemetry(), on_progress=seen.append)
    model = [p for p in seen if p.stage == "model"]
    assert model and all(p.budget_s == 45.0 and p.deadline is not None for p in model)
    # the CLI spinner shows the time used of the budget, as the TUI does (annactl.ui.waiting)
    assert re.search(r"model budget \d+ / 45 s", str(_spinner_text(model[-1],
                                                                    time.monotonic())))
    telemetry = [p for p in seen if p.stage == "telemetry"]
    assert telemetry and telemetry[0].deadline is None  # no budget shown before the model


@pytest.mark.parametrize("reply", [{"path": "/etc/passwd"}, {"path": ""}, {"path": 7}, {},
                                   {"answer": "x"}, {"path": "~/a.png; rm -rf ~"}])
def test_a_family_value_the_template_refuses_is_a_finding_never_a_crash(
        fake_llm, make_settings, reply):
    """Found by the golden sim: a refused value without a field name crashed the planner."""
    fake_llm.push(json.dumps(reply), json.dumps(reply))
    with pytest.raises(LLMError) as info:
        _planner(make_settings(llm_url=fake_llm.ollama_url)).plan(
            "set my wallpaper to the lake picture", telemetry=make_telemetry(),
            use_templates=False)
    assert info.value.code == ErrorCode.LLM_BAD_REPLY
    assert len(fake_llm.chat_bodies()) == 2


def test_the_response_packet_carries_the_verified_citations(fake_llm, make_settings, tmp_path):
    from annactl.planning.history import History

    fake_llm.push(json.dumps({"answer": "Memory is at 38 %.", "citations": [
        {"doc": "telemetry:memory.percent", "quote": "38"}]}))
    history = History(tmp_path / "history")
    _planner(make_settings(llm_url=fake_llm.ollama_url), history=history).plan(
        "how much memory is free?", telemetry=make_telemetry())
    _request, response = history.packets()
    cited = response["assistant"]["citations"]
    assert [(c["doc"], c["verified"], c["value"]) for c in cited] == [
        ("telemetry:memory.percent", True, "38")]


def test_cited_facts_are_shown_beside_the_answer_and_false_ones_flagged(fake_llm, make_settings):
    from rich.console import Console

    from annactl.ui.render_plan import notes_only

    fake_llm.push(json.dumps({"answer": "Memory is at 38 %; / is 12 % full.", "citations": [
        {"doc": "telemetry:memory.percent", "quote": "38"},
        {"doc": "telemetry:disks.0.percent", "quote": "12"}]}))
    telemetry = make_telemetry()
    outcome = _planner(make_settings(llm_url=fake_llm.ollama_url)).plan(
        "how much memory is free?", telemetry=telemetry)
    assert outcome.result.plan is not None
    console = Console(record=True, width=160)
    console.print(notes_only(outcome.result.plan, telemetry=telemetry,
                             contradictions=outcome.contradictions,
                             citations=outcome.citations))
    text = console.export_text()
    assert "✔ cited: telemetry:memory.percent = 38" in text
    assert "not true here: citation telemetry:disks.0.percent" in text and "93" in text


@pytest.mark.parametrize("overrides", [{"llm_compact": True}, {"llm_ids": "free"}])
def test_a_cut_plan_with_no_smaller_form_left_is_not_repaired(fake_llm, make_settings,
                                                               overrides):
    fake_llm.push(Reply(plan_json(), finish_reason="length"), plan_json())
    with pytest.raises(LLMError) as info:
        _planner(make_settings(llm_url=fake_llm.ollama_url, **overrides)).plan(
            "tune my system", telemetry=make_telemetry())
    assert info.value.detail.get("truncated") and len(fake_llm.chat_bodies()) == 1


@pytest.mark.parametrize("placeholder", ["...", "…", " - ", "?!"])
def test_an_answer_that_copies_the_forms_placeholder_is_repaired_not_shown(
        fake_llm, make_settings, placeholder):
    """Measured with the real Gemma 3 270M (2026-11-27, docs/golden.md): every closed answer
    was {"answer": "...", "citations": [{"doc": "memory:memory.percent", "quote": "..."}]},
    the system message's own placeholder, and it was a valid plan shown to the person."""
    copied = {"answer": placeholder,
              "citations": [{"doc": "memory:memory.percent", "quote": placeholder}]}
    fake_llm.push(json.dumps(copied), json.dumps(copied))
    with pytest.raises(LLMError) as info:
        _planner(make_settings(llm_url=fake_llm.ollama_url)).plan(
            "what uses my memory?", telemetry=make_telemetry(), use_templates=False)
    assert info.value.code == ErrorCode.LLM_BAD_REPLY
    bodies = fake_llm.chat_bodies()
    assert len(bodies) == 2 and "placeholder" in bodies[1]["messages"][-1]["content"]


def test_an_answer_in_any_script_is_an_answer(fake_llm, make_settings):
    fake_llm.push(json.dumps({"answer": "Память: 40 %.", "citations": []}))
    outcome = _planner(make_settings(llm_url=fake_llm.ollama_url)).plan(
        "what uses my memory?", telemetry=make_telemetry(), use_templates=False)
    assert outcome.result.ok and outcome.plan is not None
    assert outcome.plan.notes_for_user == "Память: 40 %."
