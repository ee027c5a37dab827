"""``annactl doctor`` against the fake model server (real HTTP, real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.fakellm import FakeLLM, Reply

ANNACTL = [sys.executable, "-m", "annactl.cli"]


def doctor(env_extra: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    import os

    env = {**os.environ, **(env_extra or {})}
    proc = subprocess.run([*ANNACTL, "doctor", "--json"], capture_output=True, text=True, check=False,
                          env=env, timeout=60)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in report["checks"]}


def test_ollama_all_model_checks_pass() -> None:
    with FakeLLM(models=("m1",)) as llm:
        llm.push(Reply('{"ok": true, "word": "anna"}'))
        code, report, _ = doctor({"ANNA_LLM_URL": llm.ollama_url, "ANNA_LLM_MODEL": "m1"})
        bodies = llm.chat_bodies()
    checks = by_name(report)
    assert checks["config"]["status"] == "ok"
    assert checks["model_server"]["status"] == "ok"
    assert checks["model"]["status"] == "ok"
    assert checks["structured_output"]["status"] == "ok"
    assert "ollama_schema" in checks["structured_output"]["detail"]
    # the probe really sent a JSON Schema as Ollama's format, at temperature 0
    assert bodies[0]["format"]["required"] == ["ok", "word"]
    assert bodies[0]["options"]["temperature"] == 0
    # no daemon in this test: the daemon check fails with its fix, and decides the status
    assert checks["daemon"]["status"] == "fail" and "annactl setup" in checks["daemon"]["fix"]
    assert code == 7 and report["status"] == "failed"


def test_missing_model_names_the_fix() -> None:
    with FakeLLM(models=("other",)) as llm:
        _, report, _ = doctor({"ANNA_LLM_URL": llm.ollama_url, "ANNA_LLM_MODEL": "wanted"})
    checks = by_name(report)
    assert checks["model"]["status"] == "fail"
    assert "ollama pull wanted" in checks["model"]["fix"]
    assert "other" in checks["model"]["detail"]
    assert checks["structured_output"]["status"] == "skip"


def test_openai_server_without_json_schema_is_a_warning() -> None:
    with FakeLLM(models=("m1",), reject_formats={"json_schema"}) as llm:
        llm.push(Reply('{"ok": true, "word": "anna"}'))
        _, report, _ = doctor({"ANNA_LLM_PROVIDER": "openai", "ANNA_LLM_URL": llm.openai_url,
                               "ANNA_LLM_MODEL": "m1"})
    checks = by_name(report)
    assert checks["model_server"]["status"] == "ok" and checks["model"]["status"] == "ok"
    assert checks["structured_output"]["status"] == "warn"
    assert "json_object" in checks["structured_output"]["detail"]


def test_reply_ignoring_the_schema_fails() -> None:
    with FakeLLM(models=("m1",)) as llm:
        llm.push(Reply("Sure! Here you go: ok"))
        _, report, _ = doctor({"ANNA_LLM_URL": llm.ollama_url, "ANNA_LLM_MODEL": "m1"})
    assert by_name(report)["structured_output"]["status"] == "fail"


def test_unreachable_server_and_bad_config(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('llm_timeout = "soon"\n')
    code, report, _ = doctor({"ANNA_CONFIG": str(config)})
    checks = by_name(report)
    assert checks["config"]["status"] == "fail" and "llm_timeout" in checks["config"]["detail"]
    assert checks["model_server"]["status"] == "fail"
    assert "ANNA_LLM_URL" in checks["model_server"]["fix"]
    assert code == 2  # the first failure (config) decides


def test_text_output_has_one_line_per_check_and_fixes() -> None:
    import os

    proc = subprocess.run([*ANNACTL, "doctor"], capture_output=True, text=True, check=False,
                          env=dict(os.environ), timeout=60)
    assert "Traceback" not in proc.stderr
    names = ("config", "daemon", "model_server", "model", "structured_output", "pacman")
    for name in names:
        assert name in proc.stdout
    assert "fix:" in proc.stdout


def test_doctor_shows_what_anna_learned_about_the_model(tmp_path: Path) -> None:
    """Issue 39.2: the per-model profile in the state dir and the forms it gives."""
    from annactl.planning import profile

    state = tmp_path / "state"
    url = "http://127.0.0.1:9/v1"
    key = profile.key_of("openai", url, "tiny")
    profile.record(state, key, "plan", "cut", 58.0)
    env = {"ANNA_STATE_DIR": str(state), "ANNA_LLM_PROVIDER": "openai", "ANNA_LLM_URL": url,
           "ANNA_LLM_MODEL": "tiny", "ANNA_LLM_FORMS": "auto"}
    _, report, _ = doctor(env)
    line = by_name(report)["model_forms"]["detail"]
    assert line.startswith("tiny: small (0 of the last 1 full plans closed valid")
    assert "1 cut at the token cap" in line
    _, report, _ = doctor({**env, "ANNA_LLM_MODEL": "other"})
    assert "unknown model" in by_name(report)["model_forms"]["detail"]
