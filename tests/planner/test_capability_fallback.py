"""Thinking off on every provider (issue 11.6) and the schema-form fallback (issue 14.6).

The fake server plays a strict server (rejects unknown request fields, like OpenAI's API)
and llama-server (400 "JSON schema conversion failed" for keywords it cannot convert).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from anna_common.errors import ErrorCode, LLMError
from anna_common.plan import model_json_schema
from anna_common.positional import positional_schema
from annactl.planning.llm.base import ChatRequest
from annactl.planning.llm.ollama import OllamaProvider
from annactl.planning.llm.openai_compat import THINKING_OFF, OpenAIProvider
from annactl.planning.planner import Planner
from tests.fakellm import STRICT_OPENAI_FIELDS, Reply, plan_json


def _request(strict: bool = True) -> ChatRequest:
    return ChatRequest(messages=({"role": "system", "content": "S"},
                                 {"role": "user", "content": "U"}),
                       schema=model_json_schema(),
                       strict_schema=positional_schema() if strict else None)


class Events:
    """Collects provider trace events."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, name: str, **fields: Any) -> None:
        self.seen.append((name, fields))

    def names(self) -> list[str]:
        return [n for n, _ in self.seen]


def _openai(fake_llm: Any, make_settings: Any) -> OpenAIProvider:
    return OpenAIProvider(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url))


# ------------------------------------------------------------------ thinking off

def test_openai_asks_for_thinking_off_with_both_controls(fake_llm, make_settings):
    fake_llm.push(plan_json())
    _openai(fake_llm, make_settings).chat(_request())
    body = fake_llm.chat_bodies()[0]
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["reasoning_effort"] == "low"


@pytest.mark.parametrize("stream", [False, True])
def test_a_strict_server_drops_each_rejected_control_once_per_session(fake_llm, make_settings,
                                                                     stream):
    fake_llm.accepted_fields = STRICT_OPENAI_FIELDS
    fake_llm.push(plan_json(), plan_json())
    provider = _openai(fake_llm, make_settings)
    events = Events()
    on_tokens = (lambda n: None) if stream else None
    first = provider.chat(_request(), on_tokens=on_tokens, events=events)
    assert first.text == plan_json()
    dropped = [f["dropped"] for n, f in events.seen if n == "LLM_OPTION_FALLBACK"]
    assert sorted(dropped) == sorted(THINKING_OFF)
    provider.chat(_request(), on_tokens=on_tokens, events=events)
    bodies = fake_llm.chat_bodies()
    assert len(bodies) == 4  # two rejections, then one request each, never rejected again
    for body in bodies[2:]:
        assert not set(body) & set(THINKING_OFF)
        assert body["response_format"]["type"] == "json_schema"


def test_a_server_that_knows_one_control_keeps_it(fake_llm, make_settings):
    fake_llm.accepted_fields = STRICT_OPENAI_FIELDS | {"reasoning_effort"}
    fake_llm.push(plan_json())
    _openai(fake_llm, make_settings).chat(_request())
    last = fake_llm.chat_bodies()[-1]
    assert last["reasoning_effort"] == "low" and "chat_template_kwargs" not in last


def test_a_rejection_naming_no_optional_field_is_not_retried(fake_llm, make_settings):
    fake_llm.push(Reply(status=400, error="Unrecognized request argument supplied: foo"))
    with pytest.raises(LLMError) as caught:
        _openai(fake_llm, make_settings).chat(_request())
    assert caught.value.code == ErrorCode.LLM_HTTP_ERROR
    assert len(fake_llm.chat_bodies()) == 1


def test_ollama_turns_thinking_off_when_the_model_thinks(fake_llm, make_settings):
    fake_llm.push(plan_json())
    OllamaProvider(make_settings(llm_url=fake_llm.ollama_url)).chat(_request())
    assert fake_llm.chat_bodies()[0]["think"] is False


# ------------------------------------------------------------------ schema forms

def test_the_strict_form_is_sent_first(fake_llm, make_settings):
    fake_llm.push(plan_json())
    result = _openai(fake_llm, make_settings).chat(_request())
    schema = fake_llm.chat_bodies()[0]["response_format"]["json_schema"]["schema"]
    assert schema == positional_schema()
    assert result.response_format == "json_schema_strict"


def test_conversion_failed_falls_back_to_the_previous_schema_form_not_json_object(
        fake_llm, make_settings):
    fake_llm.reject_schema_words = {"prefixItems"}
    fake_llm.push(plan_json(), plan_json())
    provider = _openai(fake_llm, make_settings)
    events = Events()
    first = provider.chat(_request(), events=events)
    second = provider.chat(_request(), events=events)
    assert first.response_format == second.response_format == "json_schema"
    assert events.names() == ["LLM_RESPONSE_FORMAT_FALLBACK"]
    assert events.seen[0][1]["rejected"] == "json_schema_strict"
    assert events.seen[0][1]["next"] == "json_schema"
    assert "conversion failed" in events.seen[0][1]["server"]
    sent = [b["response_format"] for b in fake_llm.chat_bodies()]
    assert [f["type"] for f in sent] == ["json_schema"] * 3
    assert "prefixItems" in json.dumps(sent[0])
    assert sent[1]["json_schema"]["schema"] == sent[2]["json_schema"]["schema"] == \
        model_json_schema()


def test_conversion_failing_on_every_schema_form_walks_them_all_in_order(fake_llm,
                                                                          make_settings):
    # a server whose converter lacks anyOf: each schema form is tried once
    fake_llm.reject_schema_words = {"anyOf"}
    fake_llm.push(plan_json())
    events = Events()
    result = _openai(fake_llm, make_settings).chat(_request(), events=events)
    assert [f["next"] for _, f in events.seen] == ["json_schema", "json_schema_unbounded",
                                                   "json_object"]
    assert result.response_format == "json_object"


def test_a_request_without_a_strict_form_starts_at_the_plain_schema(fake_llm, make_settings):
    fake_llm.reject_formats = {"json_schema"}
    fake_llm.push(plan_json())
    events = Events()
    result = _openai(fake_llm, make_settings).chat(_request(strict=False), events=events)
    assert result.response_format == "json_object"
    assert [f["rejected"] for _, f in events.seen] == ["json_schema"]


def test_ollama_falls_back_from_the_strict_schema_once(fake_llm, make_settings):
    fake_llm.push(Reply(status=400, error="failed to load grammar from schema"),
                  plan_json(), plan_json())
    provider = OllamaProvider(make_settings(llm_url=fake_llm.ollama_url))
    events = Events()
    first = provider.chat(_request(), events=events)
    second = provider.chat(_request(), events=events)
    assert first.response_format == second.response_format == "ollama_schema"
    formats = [b["format"] for b in fake_llm.chat_bodies()]
    assert "prefixItems" in json.dumps(formats[0])
    assert formats[1] == formats[2] == model_json_schema()
    assert events.names() == ["LLM_RESPONSE_FORMAT_FALLBACK"]


def test_the_planner_sends_the_positional_form_unless_ids_are_free(fake_llm, make_settings,
                                                                    telemetry):
    for ids, expected in (("positional", "prefixItems"), ("free", None)):
        fake_llm.push(plan_json())
        settings = make_settings(llm_provider="openai", llm_url=fake_llm.openai_url,
                                 llm_ids=ids)
        planner = Planner(settings, daemon=None)
        try:
            outcome = planner.plan("tune my system", telemetry=telemetry,
                                   use_templates=False)
        finally:
            planner.close()
        assert outcome.result.ok
        schema = json.dumps(fake_llm.chat_bodies()[-1]["response_format"])
        assert (expected in schema) if expected else ("prefixItems" not in schema)


def test_the_planner_sends_memory_closed_to_the_whitelist_and_compact_on_request(
        fake_llm, make_settings):
    from annactl.planning.memory import WHITELIST
    from annactl.planning.planner import Planner

    from .conftest import make_telemetry

    for compact in (False, True):
        fake_llm.push(plan_json())
        settings = make_settings(llm_provider="openai", llm_url=fake_llm.openai_url,
                                 llm_compact=compact)
        planner = Planner(settings, daemon=None)
        planner.plan("tune my system", telemetry=make_telemetry(), use_templates=False)
        planner.close()
        schema = fake_llm.chat_bodies()[-1]["response_format"]["json_schema"]["schema"]
        memory = schema["properties"]["memory_patch"]
        assert memory["additionalProperties"] is False and set(memory["properties"]) == WHITELIST
        assert schema == positional_schema(memory_keys=tuple(sorted(WHITELIST)), compact=compact)
        assert len(schema["properties"]["command_plan"]["anyOf"]) == (5 if compact else 11)
