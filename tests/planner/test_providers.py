"""The provider adapters against the fake server: request shape, retries, timeouts, fallbacks."""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
import time
from typing import Any

import pytest

from anna_common.errors import AnnaError, ErrorCode, LLMError
from anna_common.plan import model_json_schema, without_bounds
from anna_common.positional import positional_schema
from annactl.planning.llm.base import DEFAULT_OPTIONS, ChatRequest, RetryPolicy
from annactl.planning.llm.ollama import OllamaProvider
from annactl.planning.llm.openai_compat import OpenAIProvider
from tests.fakellm import FakeLLM, Reply, plan_json


def _request() -> ChatRequest:
    return ChatRequest(messages=({"role": "system", "content": "S"},
                                 {"role": "user", "content": "U"}),
                       schema=model_json_schema())


class Events:
    """Collects provider trace events."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, name: str, **fields: Any) -> None:
        self.seen.append((name, fields))

    def names(self) -> list[str]:
        return [n for n, _ in self.seen]


def test_ollama_request_carries_schema_temperature_zero_and_think_false(fake_llm, make_settings):
    fake_llm.push(plan_json())
    provider = OllamaProvider(make_settings(llm_url=fake_llm.ollama_url, llm_keep_alive="7m"))
    counts: list[int] = []
    result = provider.chat(_request(), on_tokens=counts.append)
    body = fake_llm.chat_bodies()[0]
    assert body["format"] == model_json_schema()
    assert body["options"]["temperature"] == 0
    assert body["options"]["num_ctx"] >= 8192
    assert body["think"] is False
    assert body["stream"] is True
    assert body["keep_alive"] == "7m"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert result.text == plan_json()
    assert counts and counts == sorted(counts) and counts[-1] == result.completion_tokens
    assert result.server_ms == pytest.approx(50.0)
    assert result.response_format == "ollama_schema"
    assert fake_llm.requests[0].path == "/api/show"


def test_ollama_sends_no_think_to_a_model_that_cannot_think(make_settings):
    with FakeLLM(capabilities=("completion",)) as fake:
        fake.push(plan_json())
        OllamaProvider(make_settings(llm_url=fake.ollama_url)).chat(_request())
        assert "think" not in fake.chat_bodies()[0]


def test_ollama_unknown_model_is_model_not_found(fake_llm, make_settings):
    provider = OllamaProvider(make_settings(llm_url=fake_llm.ollama_url, llm_model="nope:1b"))
    with pytest.raises(LLMError) as info:
        provider.chat(_request())
    assert info.value.code == ErrorCode.LLM_MODEL_NOT_FOUND
    assert "ollama pull nope:1b" in (info.value.hint or "")
    assert fake_llm.chat_bodies() == []


@pytest.mark.parametrize("stream", [False, True])
def test_openai_request_uses_strict_json_schema_and_reads_usage(fake_llm, make_settings, stream):
    fake_llm.push(plan_json())
    provider = OpenAIProvider(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url))
    result = provider.chat(_request(), on_tokens=(lambda n: None) if stream else None)
    body = fake_llm.chat_bodies()[0]
    assert body["temperature"] == 0
    assert body["stream"] is stream
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"] == model_json_schema()
    assert fmt["json_schema"]["name"]
    assert result.text == plan_json()
    assert result.prompt_tokens == 100 and result.completion_tokens > 0
    assert result.server_ms == pytest.approx(50.0)
    assert result.finish_reason == "stop"


def test_schema_bounds_rejected_falls_back_to_the_unbounded_schema(fake_llm, make_settings):
    fake_llm.reject_bounds = True
    fake_llm.push(plan_json())
    provider = OpenAIProvider(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url))
    events = Events()
    result = provider.chat(_request(), events=events)
    assert result.response_format == "json_schema_unbounded"
    assert events.seen[0][1]["next"] == "json_schema_unbounded"
    sent = [b["response_format"] for b in fake_llm.chat_bodies()]
    assert '"maxItems"' in json.dumps(sent[0]) and '"maxItems"' not in json.dumps(sent[1])
    assert sent[1]["json_schema"]["schema"] == without_bounds(model_json_schema())


def test_openai_falls_back_to_json_object_records_it_and_remembers(fake_llm, make_settings):
    fake_llm.reject_formats = {"json_schema"}
    fake_llm.push(plan_json(), plan_json())
    provider = OpenAIProvider(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url))
    events = Events()
    first = provider.chat(_request(), events=events)
    assert first.response_format == "json_object"
    assert events.names() == ["LLM_RESPONSE_FORMAT_FALLBACK"]
    assert events.seen[0][1]["rejected"] == "json_schema"
    assert events.seen[0][1]["next"] == "json_object"
    second = provider.chat(_request(), events=events)
    assert second.response_format == "json_object"
    formats = [b["response_format"]["type"] for b in fake_llm.chat_bodies()]
    # json_schema was tried once, then never again in this session
    assert formats == ["json_schema", "json_object", "json_object"]


def test_openai_falls_back_to_prompt_only_when_both_forms_are_rejected(fake_llm, make_settings):
    fake_llm.reject_formats = {"json_schema", "json_object"}
    fake_llm.push(plan_json())
    provider = OpenAIProvider(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url))
    events = Events()
    result = provider.chat(_request(), events=events)
    assert result.response_format == "none"
    assert events.names() == ["LLM_RESPONSE_FORMAT_FALLBACK"] * 2
    assert "response_format" not in fake_llm.chat_bodies()[-1]


def test_openai_length_finish_is_marked_truncated(fake_llm, make_settings):
    fake_llm.push(Reply('{"analysis": "cut', finish_reason="length"))
    provider = OpenAIProvider(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url))
    assert provider.chat(_request()).truncated


@pytest.mark.parametrize("provider_name", ["ollama", "openai"])
def test_repeated_503s_give_a_coded_error_after_three_attempts(fake_llm, make_settings,
                                                               provider_name):
    # 503: the request never reached the model (loading, busy), so the same bytes may pass
    fake_llm.push(*[Reply(status=503, error="loading model")] * 5)
    settings = make_settings(llm_provider=provider_name, llm_url=fake_llm.base_url + (
        "/v1" if provider_name == "openai" else ""))
    provider = (OpenAIProvider if provider_name == "openai" else OllamaProvider)(settings)
    events = Events()
    started = time.monotonic()
    with pytest.raises(LLMError) as info:
        provider.chat(_request(), events=events)
    assert info.value.code == ErrorCode.LLM_HTTP_ERROR
    assert info.value.detail["attempts"] == 3
    assert len(fake_llm.chat_bodies()) == 3
    assert fake_llm.pending() == 2
    assert events.names().count("LLM_RETRY") == 2
    assert time.monotonic() - started >= 0.1 + 0.2  # backoff really waited


@pytest.mark.parametrize("provider_name", ["ollama", "openai"])
def test_a_500_at_temperature_0_is_never_resent_unchanged(fake_llm, make_settings,
                                                          provider_name):
    """Issue 24.2: at temperature 0 the same bytes give the same failure."""
    fake_llm.push(*[Reply(status=500, error="does not match the expected peg-native format")]
                  * 5)
    settings = make_settings(llm_provider=provider_name, llm_url=fake_llm.base_url + (
        "/v1" if provider_name == "openai" else ""))
    provider = (OpenAIProvider if provider_name == "openai" else OllamaProvider)(settings)
    request = _request()
    with pytest.raises(LLMError) as info:
        provider.chat(dataclasses.replace(request, strict_schema=positional_schema()),
                      events=Events())
    assert info.value.code == ErrorCode.LLM_HTTP_ERROR
    bodies = [json.dumps(b, sort_keys=True) for b in fake_llm.chat_bodies()]
    assert len(bodies) == len(set(bodies)), "a byte-identical request was sent again"
    # each retry is a weaker schema form (openai: strict, bounded, unbounded; ollama: strict,
    # then its one plain form)
    assert len(bodies) == (2 if provider_name == "ollama" else 3)


def test_a_500_at_a_nonzero_temperature_is_retried(fake_llm, make_settings):
    fake_llm.push(Reply(status=500), plan_json())
    provider = OllamaProvider(make_settings(llm_url=fake_llm.ollama_url))
    request = dataclasses.replace(_request(), options={**DEFAULT_OPTIONS, "temperature": 0.7})
    assert provider.chat(request).text == plan_json()
    assert len(fake_llm.chat_bodies()) == 2


def test_a_500_then_success_is_retried(fake_llm, make_settings):
    fake_llm.push(Reply(status=503), plan_json())
    provider = OllamaProvider(make_settings(llm_url=fake_llm.ollama_url))
    assert provider.chat(_request()).text == plan_json()
    assert len(fake_llm.chat_bodies()) == 2


def test_a_4xx_is_never_retried(fake_llm, make_settings):
    fake_llm.push(Reply(status=400, error="bad request"), plan_json())
    provider = OpenAIProvider(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url))
    with pytest.raises(LLMError) as info:
        provider.chat(_request())
    assert info.value.code == ErrorCode.LLM_HTTP_ERROR
    assert len(fake_llm.chat_bodies()) == 1


def test_dropped_connections_are_retried_then_unavailable(fake_llm, make_settings):
    fake_llm.push(Reply(drop=True), Reply(drop=True), Reply(drop=True))
    provider = OpenAIProvider(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url))
    with pytest.raises(LLMError) as info:
        provider.chat(_request())
    assert info.value.code == ErrorCode.LLM_UNAVAILABLE
    assert len(fake_llm.chat_bodies()) == 3


def test_nothing_listening_is_unavailable_with_a_hint(make_settings):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before the request: connection refused
    provider = OllamaProvider(make_settings(llm_url=f"http://127.0.0.1:{port}"),
                              retry=RetryPolicy(base_s=0.01))
    with pytest.raises(LLMError) as info:
        provider.chat(_request())
    assert info.value.code == ErrorCode.LLM_UNAVAILABLE
    assert "ANNA_LLM_URL" in (info.value.hint or "")


def test_a_slow_server_hits_the_timeout_once(fake_llm, make_settings):
    fake_llm.push(Reply(plan_json(), delay=5.0))
    provider = OpenAIProvider(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url,
                                            llm_timeout=0.4))
    events = Events()
    started = time.monotonic()
    with pytest.raises(LLMError) as info:
        provider.chat(_request(), events=events)
    assert info.value.code == ErrorCode.LLM_TIMEOUT
    assert time.monotonic() - started < 3.0
    assert len(fake_llm.chat_bodies()) == 1  # a timeout is not retried
    assert "LLM_REQUEST_TIMEOUT" in events.names()


def test_a_trickling_stream_ends_at_the_timeout(fake_llm, make_settings):
    fake_llm.push(Reply(plan_json(), chunk_delay=0.05))  # each chunk in time, the whole not
    provider = OllamaProvider(make_settings(llm_url=fake_llm.ollama_url, llm_timeout=0.5))
    with pytest.raises(LLMError) as info:
        provider.chat(_request())
    assert info.value.code == ErrorCode.LLM_TIMEOUT


def test_api_key_is_sent_as_bearer_and_never_in_errors(fake_llm, make_settings):
    fake_llm.push(Reply(status=401, error="invalid api key sk-live-abcdef123456"))
    provider = OpenAIProvider(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url,
                                            llm_api_key="sk-live-abcdef123456"))
    with pytest.raises(LLMError) as info:
        provider.chat(_request())
    assert fake_llm.requests[0].headers["authorization"] == "Bearer sk-live-abcdef123456"
    assert "abcdef123456" not in str(info.value.to_dict())
    assert "ANNA_LLM_API_KEY" in (info.value.hint or "")


def test_cancel_during_streaming_stops_the_call(fake_llm, make_settings):
    fake_llm.push(Reply(plan_json(), chunk_delay=0.02))
    provider = OllamaProvider(make_settings(llm_url=fake_llm.ollama_url))
    cancel = threading.Event()

    def on_tokens(count: int) -> None:
        if count >= 3:
            cancel.set()

    with pytest.raises(AnnaError) as info:
        provider.chat(_request(), on_tokens=on_tokens, cancel=cancel)
    assert info.value.code == ErrorCode.CANCELLED


def test_backoff_doubles_from_100ms_and_is_capped():
    policy = RetryPolicy()
    assert [policy.delay(i) for i in range(8)] == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]
    assert policy.attempts == 3


def test_wrong_api_is_reported_not_crashed(fake_llm, make_settings):
    # An Ollama client pointed at the OpenAI path gets a 404 page, not a traceback.
    provider = OllamaProvider(make_settings(llm_url=fake_llm.openai_url))
    with pytest.raises(LLMError) as info:
        provider.chat(_request())
    assert info.value.code in (ErrorCode.LLM_HTTP_ERROR, ErrorCode.LLM_MODEL_NOT_FOUND)


@pytest.mark.parametrize("url", ["http://[::1", "ftp://example.org", "not a url"])
def test_an_unusable_url_is_a_configuration_error(make_settings, url):
    with pytest.raises(AnnaError) as info:
        OllamaProvider(make_settings(llm_url=url)).chat(_request())
    assert info.value.code == ErrorCode.CONFIG_INVALID
    assert "ANNA_LLM_URL" in (info.value.hint or "")


def test_a_plain_http_server_loads_no_certificates_and_https_still_verifies(fake_llm,
                                                                           make_settings):
    import ssl

    from annactl.planning.llm import transport

    # a loopback Ollama: a plain connection, no CA store read (~45 ms of every planning
    # command's CPU); an https server: the system's CA store, certificate and name checked
    plain = transport.Client("http://127.0.0.1:9", timeout=transport.Timeout(1, connect=1))
    with pytest.raises(transport.ConnectError), plain.stream("GET", "/"):
        pass
    secure = transport._TLSConnection("example.org", None, transport.Timeout(1, connect=1))
    context = secure._context  # type: ignore[attr-defined]
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 0
    # https to a server that does not speak TLS (the fake's plain port) fails to connect,
    # coded, instead of falling back to plain text
    url = fake_llm.openai_url.replace("http://", "https://")
    provider = OpenAIProvider(make_settings(llm_provider="openai", llm_url=url))
    with pytest.raises(LLMError) as info:
        provider.chat(_request())
    assert info.value.code == ErrorCode.LLM_UNAVAILABLE
