"""Cache, record/replay and traces, through the real planner and the fake server."""

from __future__ import annotations

import json

import pytest

from anna_common.errors import ErrorCode, LLMError
from annactl.planning.llm import make_provider
from annactl.planning.llm.base import ChatRequest
from annactl.planning.llm.cache import StoredProvider
from annactl.planning.llm.keys import request_key
from annactl.planning.llm.replay import ReplayProvider
from annactl.planning.llm.trace import mask
from annactl.planning.planner import Planner
from tests.fakellm import FakeLLM, plan_json


def _plan(settings, telemetry, text="explain my uptime"):
    planner = Planner(settings, daemon=None)
    try:
        return planner.plan(text, telemetry=telemetry)
    finally:
        planner.close()


def test_record_then_replay_works_offline(make_settings, telemetry, tmp_path):
    recording = tmp_path / "rec.jsonl"
    with FakeLLM() as fake:
        fake.push("garbage first", plan_json(notes_for_user="recorded answer"))
        recorded = _plan(make_settings(llm_url=fake.ollama_url, llm_record=recording), telemetry)
    assert recorded.repairs == 1
    lines = [json.loads(line) for line in recording.read_text().splitlines()]
    assert len(lines) == 2 and all(len(line["key"]) == 64 for line in lines)
    # the server is gone: replay must not need it (and must not try: URL points nowhere)
    settings = make_settings(llm_url="http://127.0.0.1:9", llm_replay=recording)
    assert isinstance(make_provider(settings), ReplayProvider)
    replayed = _plan(settings, telemetry)
    assert replayed.plan is not None and replayed.plan.notes_for_user == "recorded answer"
    assert replayed.repairs == 1 and replayed.model_calls == 2


def test_replay_misses_loudly(make_settings, telemetry, tmp_path):
    recording = tmp_path / "rec.jsonl"
    with FakeLLM() as fake:
        fake.push(plan_json())
        _plan(make_settings(llm_url=fake.ollama_url, llm_record=recording), telemetry)
    with FakeLLM() as fake:
        settings = make_settings(llm_url=fake.ollama_url, llm_replay=recording)
        with pytest.raises(LLMError) as info:
            _plan(settings, telemetry, text="a different request")
        assert info.value.code == ErrorCode.LLM_REPLAY_MISS
        assert fake.requests == []  # never fell back to the network


def test_replay_file_that_cannot_be_read_is_a_usage_error(make_settings, tmp_path):
    from anna_common.errors import UsageError

    with pytest.raises(UsageError):
        make_provider(make_settings(llm_replay=tmp_path / "missing.jsonl"))


def test_cache_readwrite_serves_the_second_request(fake_llm, make_settings, telemetry):
    settings = make_settings(llm_url=fake_llm.ollama_url, llm_cache="readwrite")
    fake_llm.push(plan_json(notes_for_user="from the server"))
    first = _plan(settings, telemetry)
    second = _plan(settings, telemetry)
    assert len(fake_llm.chat_bodies()) == 1
    assert second.plan == first.plan
    entries = list((settings.state_dir / "llm_cache").glob("*.json"))
    assert len(entries) == 1


def test_cache_modes_read_and_write(fake_llm, make_settings, telemetry):
    fake_llm.push(plan_json(), plan_json(), plan_json())
    read_only = make_settings(llm_url=fake_llm.ollama_url, llm_cache="read")
    _plan(read_only, telemetry)
    assert not (read_only.state_dir / "llm_cache").exists()  # read never writes
    write = make_settings(llm_url=fake_llm.ollama_url, llm_cache="write")
    _plan(write, telemetry)
    _plan(write, telemetry)
    assert len(fake_llm.chat_bodies()) == 3  # write always asks
    _plan(read_only, telemetry)
    assert len(fake_llm.chat_bodies()) == 3  # and read now hits


def test_cache_key_covers_model_prompt_schema_and_options():
    base = ChatRequest(messages=({"role": "user", "content": "x"},), schema=None,
                       schema_sha="s1", prompt_version="v1", prompt_sha="p1")
    key = request_key("ollama", "m", base)
    assert key == request_key("ollama", "m", ChatRequest(
        messages=({"role": "user", "content": "x"},), schema=None, schema_sha="s1",
        prompt_version="v1", prompt_sha="p1", purpose="repair"))
    variants = [
        request_key("openai", "m", base),
        request_key("ollama", "m2", base),
        request_key("ollama", "m", ChatRequest(messages=({"role": "user", "content": "y"},),
                                               schema=None, schema_sha="s1",
                                               prompt_version="v1", prompt_sha="p1")),
        request_key("ollama", "m", ChatRequest(messages=base.messages, schema=None,
                                               schema_sha="s2", prompt_version="v1",
                                               prompt_sha="p1")),
        request_key("ollama", "m", ChatRequest(messages=base.messages, schema=None,
                                               schema_sha="s1", prompt_version="v1",
                                               prompt_sha="p2")),
        request_key("ollama", "m", ChatRequest(messages=base.messages, schema=None,
                                               schema_sha="s1", prompt_version="v1",
                                               prompt_sha="p1", options={"temperature": 1})),
    ]
    assert len({key, *variants}) == len(variants) + 1


def test_a_corrupt_cache_entry_is_a_miss(fake_llm, make_settings, telemetry):
    settings = make_settings(llm_url=fake_llm.ollama_url, llm_cache="readwrite")
    fake_llm.push(plan_json(), plan_json())
    _plan(settings, telemetry)
    for entry in (settings.state_dir / "llm_cache").glob("*.json"):
        entry.write_text("{not json")
    assert _plan(settings, telemetry).result.ok
    assert len(fake_llm.chat_bodies()) == 2


def test_stored_provider_is_used_only_when_asked(make_settings):
    assert not isinstance(make_provider(make_settings()), StoredProvider)
    assert isinstance(make_provider(make_settings(llm_cache="read")), StoredProvider)


def test_traces_record_events_and_mask_secrets(fake_llm, make_settings, telemetry):
    key = "sk-test-abcdefghijklmnop"
    settings = make_settings(llm_url=fake_llm.ollama_url.replace("http://", "http://u:hunter2@"),
                             llm_api_key=key, trace=True)
    fake_llm.push("junk with Bearer abc.def.ghi", plan_json(notes_for_user=f"token {key}"))
    outcome = _plan(settings, telemetry)
    text = (settings.state_dir / "traces" / f"{outcome.trace_id}.json").read_text()
    trace = json.loads(text)
    names = [e["event"] for e in trace["events"]]
    for expected in ("LLM_REQUEST_SENT", "LLM_RESPONSE_OK", "VALIDATION_FAILED",
                     "REPAIR_ATTEMPT"):
        assert expected in names
    sent = next(e for e in trace["events"] if e["event"] == "LLM_REQUEST_SENT")
    assert sent["prompt_bytes"] > 1000 and len(sent["prompt_sha"]) == 64
    ok = next(e for e in trace["events"] if e["event"] == "LLM_RESPONSE_OK")
    assert "latency_s" in ok and "tokens_out" in ok
    assert "raw" not in ok  # raw text only with ANNA_TRACE_RAW
    assert "hunter2" not in text and "abcdefghijklmnop" not in text
    assert trace["prompt"]["sha256"] and trace["prompt"]["version"]


def test_raw_traces_keep_model_text_with_secrets_masked(fake_llm, make_settings, telemetry):
    settings = make_settings(llm_url=fake_llm.ollama_url, trace=True, trace_raw=True)
    fake_llm.push(plan_json(notes_for_user="use Bearer abcdef123456 and sk-zzzzzzzzzzzz"))
    outcome = _plan(settings, telemetry)
    trace = json.loads((settings.state_dir / "traces" / f"{outcome.trace_id}.json").read_text())
    raw = next(e for e in trace["events"] if e["event"] == "LLM_RESPONSE_OK")["raw"]
    assert "notes_for_user" in raw
    assert "abcdef123456" not in raw and "zzzzzzzzzzzz" not in raw


def test_trace_timeout_event(fake_llm, make_settings, telemetry):
    from tests.fakellm import Reply

    fake_llm.push(Reply(plan_json(), delay=3.0))
    settings = make_settings(llm_url=fake_llm.ollama_url, trace=True, llm_timeout=0.3)
    planner = Planner(settings, daemon=None)
    with pytest.raises(LLMError) as info:
        planner.plan("compose a haiku about systemd", telemetry=telemetry)
    assert info.value.code == ErrorCode.LLM_TIMEOUT
    traces = list((settings.state_dir / "traces").glob("*.json"))
    events = [e["event"] for e in json.loads(traces[0].read_text())["events"]]
    assert "LLM_REQUEST_TIMEOUT" in events and "PLAN_FAILED" in events


@pytest.mark.parametrize(("text", "secret"), [
    ("Authorization: Bearer eyJhbGciOi.abc", "eyJhbGciOi"),
    ("key sk-proj-1234567890abcdef", "1234567890abcdef"),
    ("http://admin:s3cret@host:8080/v1", "s3cret"),
    ('{"api_key": "zzz-top-secret"}', "zzz-top-secret"),
    ("password=letmein&x=1", "letmein"),
])
def test_mask(text, secret):
    assert secret not in mask(text)
