"""``-m``/``--model`` and ``--profile`` on the commands that ask a model, ``annactl models``,
and ``doctor`` on a server that ignores model names (llama-server) — real annactl processes
against the fake model server speaking both APIs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.fakellm import FakeLLM, Reply

from .conftest import Anna

ANNACTL = [sys.executable, "-m", "annactl.cli"]
ANSWER = json.dumps({"answer": "Memory is mostly used by the page cache.", "citations": []})


def _config(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return {"ANNA_CONFIG": str(path)}


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.lower().startswith("anna_")}
    proc = subprocess.run([*ANNACTL, *args], capture_output=True, text=True, check=False,
                          env={**base, **env}, timeout=60, stdin=subprocess.DEVNULL)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_model_flag_is_the_name_sent_anywhere_on_the_line(anna: Anna) -> None:
    anna.llm.models = ("test-model", "other")
    anna.llm.push(Reply(ANSWER), Reply(ANSWER))
    first = anna.run("-m", "other", "what uses my memory?", "--no-templates")
    second = anna.run("ask", "--no-templates", "what uses my memory?", "--model=test-model")
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert [b["model"] for b in anna.llm.chat_bodies()] == ["other", "test-model"]
    # the option's value is never part of the request
    assert "other" not in anna.llm.chat_bodies()[0]["messages"][-1]["content"].split()


def test_model_flag_without_a_name_is_a_usage_error(anna: Anna) -> None:
    proc = anna.run("ask", "what uses my memory?", "--model")
    assert proc.returncode == 2 and "--model needs a name" in proc.stderr
    assert anna.llm.chat_bodies() == []


def test_a_profile_chooses_provider_url_model_and_budget(anna: Anna, tmp_path: Path) -> None:
    anna.llm.models = ("test-model", "small")
    anna.llm.push(Reply(ANSWER))
    env = _config(tmp_path, f'[profiles.fast]\nllm_provider = "openai"\n'
                  f'llm_url = "{anna.llm.openai_url}"\nllm_model = "small"\nllm_budget = 30\n')
    proc = anna.run("--profile", "fast", "what uses my memory?", "--no-templates",
                    extra_env=env)
    assert proc.returncode == 0, proc.stderr
    chats = [s for s in anna.llm.requests if s.path.endswith("/completions")]
    assert [s.body["model"] for s in chats] == ["small"]  # the OpenAI API, the profile's model
    # --model wins over the profile's model, the profile's server stays
    anna.llm.push(Reply(ANSWER))
    proc = anna.run("--profile=fast", "-m", "test-model", "what uses my memory?",
                    "--no-templates", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    chats = [s for s in anna.llm.requests if s.path.endswith("/completions")]
    assert chats[-1].body["model"] == "test-model"
    assert not [s for s in anna.llm.requests if s.path == "/api/chat"]


def test_an_unknown_profile_names_the_known_ones(tmp_path: Path) -> None:
    env = _config(tmp_path, '[profiles.fast]\nllm_model = "small"\n')
    proc = _run(["--profile", "big", "models"], env)
    assert proc.returncode == 2
    assert "CONFIG_INVALID" in proc.stderr and "profiles: fast" in proc.stderr
    env = _config(tmp_path, '[profiles.fast]\nllm_modle = "small"\n')  # a typo is refused
    proc = _run(["models", "--json"], env)
    assert proc.returncode == 2 and "CONFIG_INVALID" in proc.stderr


def test_models_lists_what_each_api_has(tmp_path: Path) -> None:
    with FakeLLM(models=("qwen3:1.7b", "gemma3:270m")) as llm:
        ollama = _run(["models", "--json"], {"ANNA_LLM_URL": llm.ollama_url,
                                             "ANNA_LLM_MODEL": "gemma3:270m"})
        env = {**_config(tmp_path, f'profile = "served"\n[profiles.served]\nllm_provider = '
                                   f'"openai"\nllm_url = "{llm.openai_url}"\nllm_api_key = '
                                   f'"sk-hidden"\n'), "ANNA_LLM_MODEL": "elsewhere"}
        openai = _run(["models", "--json"], env)
        text = _run(["models"], env)
        paths = [s.path for s in llm.requests]
    assert ollama.returncode == 0 and openai.returncode == 0, ollama.stderr + openai.stderr
    doc: dict[str, Any] = json.loads(ollama.stdout)
    assert [m["name"] for m in doc["models"]] == ["qwen3:1.7b", "gemma3:270m"]
    assert doc["provider"] == "ollama" and doc["listed"] is True
    doc = json.loads(openai.stdout)
    assert doc["provider"] == "openai" and doc["profile"] == "served"
    assert doc["model"] == "elsewhere" and doc["listed"] is False
    assert "sk-hidden" not in openai.stdout + text.stdout  # a profile's key is never shown
    assert paths == ["/api/tags", "/v1/models", "/v1/models"]
    assert "qwen3:1.7b" in text.stdout and "does not list" in text.stdout


def test_models_says_when_the_server_is_not_there(tmp_path: Path) -> None:
    with FakeLLM() as llm:
        url = llm.ollama_url
    proc = _run(["models", "--json"], {"ANNA_LLM_URL": url})
    assert proc.returncode == 8
    assert json.loads(proc.stdout)["code"] == "LLM_UNAVAILABLE"


def _doctor(env: dict[str, str]) -> dict[str, dict[str, Any]]:
    proc = _run(["doctor", "--json"], env)
    return {c["name"]: c for c in json.loads(proc.stdout)["checks"]}


def test_doctor_passes_a_server_that_ignores_model_names() -> None:
    with FakeLLM(models=("/models/qwen3-1.7b-q8_0.gguf",)) as llm:
        llm.any_model = True  # llama-server: one model, whatever name is asked for
        llm.push(Reply('{"ok": true, "word": "anna"}'))
        checks = _doctor({"ANNA_LLM_PROVIDER": "openai", "ANNA_LLM_URL": llm.openai_url})
        sent = llm.chat_bodies()[0]["model"]
    assert sent == "qwen2.5:7b-instruct"  # the default name, not the server's
    assert checks["model"]["status"] == "ok", checks["model"]
    assert "does not check model names" in checks["model"]["detail"]
    assert checks["structured_output"]["status"] == "ok"


def test_doctor_fails_a_name_a_server_enforces() -> None:
    with FakeLLM(models=("served",)) as llm:  # vLLM-like: a 404 for any other name
        openai = _doctor({"ANNA_LLM_PROVIDER": "openai", "ANNA_LLM_URL": llm.openai_url,
                          "ANNA_LLM_MODEL": "wanted"})
        ollama = _doctor({"ANNA_LLM_URL": llm.ollama_url, "ANNA_LLM_MODEL": "wanted"})
    assert openai["model"]["status"] == "fail" and "served" in openai["model"]["detail"]
    assert openai["structured_output"]["status"] == "fail"
    assert ollama["model"]["status"] == "fail" and "ollama pull wanted" in ollama["model"]["fix"]
    assert ollama["structured_output"]["status"] == "skip"  # Ollama enforces: no probe sent
