"""The budget holds against a busy server (issue 39.8), against the fake server speaking
llama.cpp's ``/slots`` (a real HTTP server) and Anna's real planner and OpenAI adapter."""

from __future__ import annotations

import json
import time

import pytest

from anna_common.errors import ErrorCode, LLMError
from annactl.planning.planner import Planner


def _answer(text: str) -> str:
    return json.dumps({"necessary_checks": [], "answer": text, "command": "", "citations": []})


def _chat_posts(fake) -> int:  # type: ignore[no-untyped-def]
    return sum(1 for r in fake.requests if r.path.endswith("/chat/completions"))


def test_a_server_busy_with_an_earlier_request_is_said_not_queued_behind(
        fake_llm, make_settings, telemetry) -> None:
    fake_llm.slots = [{"id": 0, "is_processing": True}]
    settings = make_settings(llm_provider="openai", llm_url=fake_llm.openai_url,
                             llm_budget=60.0)
    began = time.monotonic()
    with pytest.raises(LLMError) as info:
        Planner(settings).plan("what uses my memory?", telemetry=telemetry,
                               use_templates=False)
    assert info.value.code == ErrorCode.LLM_TIMEOUT and info.value.detail["busy"]
    assert "still busy with an earlier request" in info.value.message
    assert time.monotonic() - began < 10  # a few seconds of looking, not the 60 s budget
    assert _chat_posts(fake_llm) == 0  # nothing was queued behind the server's work


def test_a_slot_that_frees_soon_is_waited_for(fake_llm, make_settings, telemetry) -> None:
    fake_llm.slots = [{"id": 0, "is_processing": False}]
    fake_llm.busy_polls = 2  # finishing something: busy for two looks, then free
    fake_llm.push(_answer("Memory is at 37.5 %."))
    settings = make_settings(llm_provider="openai", llm_url=fake_llm.openai_url)
    outcome = Planner(settings).plan("what uses my memory?", telemetry=telemetry,
                                     use_templates=False)
    assert outcome.result.ok and outcome.plan is not None
    assert sum(1 for r in fake_llm.requests if r.path == "/slots") == 3


def test_a_weak_template_answers_and_says_the_server_was_busy(fake_llm, make_settings,
                                                              telemetry) -> None:
    fake_llm.slots = [{"id": 0, "is_processing": True}]
    settings = make_settings(llm_provider="openai", llm_url=fake_llm.openai_url)
    # a request the system-status template matches only weakly: the model is asked first
    outcome = Planner(settings).plan("tell me about my system health", telemetry=telemetry)
    assert outcome.template is not None and outcome.plan is not None
    assert outcome.offline_reason is not None
    assert outcome.offline_reason.startswith("the model server was still busy")


def test_a_server_without_slots_is_asked_once(fake_llm, make_settings, telemetry) -> None:
    fake_llm.push(_answer("Memory is at 37.5 %."), _answer("Still 37.5 %."))
    planner = Planner(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url))
    for _ in range(2):
        planner.plan("what uses my memory?", telemetry=telemetry, use_templates=False)
    assert sum(1 for r in fake_llm.requests if r.path == "/slots") == 1


def test_the_budget_counts_annas_work_before_the_first_call(fake_llm, make_settings,
                                                            telemetry) -> None:
    """The deadline is the request's start plus the budget, not the first call's start."""
    fake_llm.push(_answer("Memory is at 37.5 %."))
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url, llm_budget=30.0))
    seen: list[float] = []

    def progress(p) -> None:  # type: ignore[no-untyped-def]
        if p.deadline is not None:
            seen.append(p.deadline - (time.monotonic() - p.elapsed_s))

    planner.plan("what uses my memory?", telemetry=telemetry, use_templates=False,
                 on_progress=progress)
    assert seen and all(abs(s - 30.0) < 0.5 for s in seen)


def test_after_the_contract_trial_the_small_form_waits_for_the_slot_it_left_busy(
        fake_llm, make_settings, telemetry) -> None:
    """An unknown model's contract did not close within its half of the budget; the server
    goes on with it for a moment (one prompt batch), and the small form waits for that slot
    (up to half the time left) instead of calling the server busy after 3 s."""
    from tests.fakellm import Reply, plan_json

    fake_llm.slots = [{"id": 0, "is_processing": False}]
    fake_llm.push(Reply(content=plan_json(), delay=7.0), _answer("Memory is at 37.5 %."))
    settings = make_settings(llm_provider="openai", llm_url=fake_llm.openai_url,
                             llm_forms="auto", llm_budget=12.0)
    planner = Planner(settings)
    real_chat = planner.provider.chat

    def chat(request, **kwargs):  # type: ignore[no-untyped-def]
        if request.form == "answer":
            fake_llm.busy_polls = 8  # ~2 s of "still processing" after the trial's cut
        return real_chat(request, **kwargs)

    planner.provider.chat = chat  # type: ignore[method-assign]
    outcome = planner.plan("what uses my memory?", telemetry=telemetry, use_templates=False)
    assert outcome.result.ok and outcome.form == "answer"
    assert outcome.plan is not None and outcome.plan.notes_for_user == "Memory is at 37.5 %."


def test_a_slot_with_a_long_prompt_left_is_not_waited_for(fake_llm, make_settings,
                                                          telemetry) -> None:
    """Minutes of another request's prompt still to read: said at once, not after 3 s."""
    fake_llm.slots = [{"id": 0, "is_processing": True, "n_prompt_tokens": 2514,
                       "n_prompt_tokens_processed": 256}]
    settings = make_settings(llm_provider="openai", llm_url=fake_llm.openai_url)
    with pytest.raises(LLMError) as info:
        Planner(settings).plan("what uses my memory?", telemetry=telemetry,
                               use_templates=False)
    assert info.value.detail["busy"]
    assert sum(1 for r in fake_llm.requests if r.path == "/slots") == 1
