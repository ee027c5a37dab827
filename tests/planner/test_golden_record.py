"""bench/golden.py records how each task ended, so a replay ends the same way (issue 24.5).

Found with the real Gemma 3 270M (2026-11-27): a task whose repair call ran into the time
budget left no trace in the recording, and its replay ended in ``LLM_REPLAY_MISS`` instead
of the ``LLM_TIMEOUT`` the person got; a task whose first call failed was not replayed at
all. Now a failed call is recorded with its coded error, and every task with how it ended.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.fakellm import FakeLLM, Reply

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "bench" / "golden.py"


def golden(*args: str) -> dict[str, Any]:
    """bench/golden.py as a subprocess; its JSON summary."""
    done = subprocess.run([sys.executable, str(GOLDEN), "--json", *args], capture_output=True,
                          text=True, timeout=300, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def by_task(summary: dict[str, Any]) -> dict[str, tuple[bool, bool, str]]:
    """Per task: valid, accepted, coded error."""
    return {t["id"]: (t["valid"], t["accepted"], t["code"]) for t in summary["per_task"]}


def test_a_failed_call_is_recorded_and_replays_as_the_same_error(tmp_path: Path) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        schema = body["response_format"]["json_schema"]["schema"]
        if "package" in schema.get("properties", {}):
            return Reply(json.dumps({"action": "install", "package": "htop"}))
        return Reply(status=500, error="does not match the expected peg-native format")

    record = tmp_path / "rec.jsonl"
    with FakeLLM(models=("m",)) as fake:
        fake.responder = respond
        live = golden("--provider", "openai", "--url", fake.openai_url, "--model", "m",
                      "--only", "install-htop", "restart-nginx", "--record", str(record),
                      "--forms", "small")
    lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    errors = [e for e in lines if "error" in e]
    assert [e["task"] for e in errors] == ["restart-nginx"]
    assert errors[0]["error"]["code"] == live["per_task"][1]["code"] != ""
    assert {e["task"]: e["end"]["code"] for e in lines if "end" in e} == {
        "install-htop": "", "restart-nginx": errors[0]["error"]["code"]}

    replayed = golden("--replay", str(record))
    assert by_task(replayed) == by_task(live)
    assert by_task(live)["install-htop"][:2] == (True, True)


def test_a_task_the_planner_ended_before_a_call_replays_as_its_recorded_end(
        tmp_path: Path) -> None:
    # live: the first reply was unusable, and the deadline had passed before the repair,
    # so the planner raised LLM_TIMEOUT without calling the model again
    first = {"text": json.dumps({"action": "install", "package": "htop; rm -rf /"}),
             "model": "m", "finish_reason": "stop", "latency_s": 59.5}
    record = tmp_path / "rec.jsonl"
    record.write_text("\n".join(json.dumps(e) for e in (
        {"golden": 1, "model": "m"},
        {"task": "install-htop", "call": 0, "purpose": "plan", "result": first},
        {"task": "install-htop", "end": {"code": "LLM_TIMEOUT", "latency_s": 60.4}},
    )) + "\n", encoding="utf-8")
    replayed = golden("--replay", str(record))
    assert by_task(replayed) == {"install-htop": (False, False, "LLM_TIMEOUT")}

    # the same recording without its end line: the missing reply is reported as such
    record.write_text("\n".join(record.read_text(encoding="utf-8").splitlines()[:2]) + "\n",
                      encoding="utf-8")
    assert by_task(golden("--replay", str(record)))["install-htop"][2] == "LLM_REPLAY_MISS"
