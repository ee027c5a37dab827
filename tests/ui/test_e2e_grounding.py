"""Issue 14 through the real annactl, a real daemon and the fake model server.

The fake model returns the system prompt's own example, invented facts about the
machine, and a plan that ignores the request; Anna must say so, in the terminal and in
``--json``, and never exit 0 for a plan that is not one.
"""

from __future__ import annotations

import json

from annactl.planning.prompt import system_message
from tests.fakellm import plan_json

from .conftest import Anna

INVENTED = ("Your machine is fine. CPU: Intel Xeon E5-2690 with 48 cores. Memory: 100 GB of "
            "128 GB used.")


def example(index: int) -> str:
    """The system prompt's example reply, exactly as a small model copies it."""
    replies = [line.removeprefix("Reply: ") for line in system_message().splitlines()
               if line.startswith("Reply: {")]
    return replies[index]


def test_the_prompt_example_twice_is_llm_echoed_example_exit_3(anna: Anna) -> None:
    anna.llm.push(example(1), example(1))
    proc = anna.run("ask", "--no-templates", "install htop")
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith("annactl: LLM_ECHOED_EXAMPLE")
    assert "Summarise system health" not in proc.stdout
    repair = anna.llm.chat_bodies()[1]["messages"][-1]["content"]
    assert "LLM_ECHOED_EXAMPLE" in repair and "i7-9700K" in repair
    anna.llm.push(example(0), example(0))
    code, out = anna.json("ask", "--no-templates", "install htop")
    assert code == 3
    assert out["status"] == "error" and out["code"] == "LLM_ECHOED_EXAMPLE"
    assert [f["code"] for f in out["findings"]][:1] == ["LLM_ECHOED_EXAMPLE"]
    assert out["trace_id"]


def test_echo_then_a_real_plan_is_repaired(anna: Anna) -> None:
    anna.llm.push(example(1), plan_json(notes_for_user="Kernel 6.x is running.",
                                        goals=["Tell the kernel version"]))
    code, out = anna.json("ask", "--no-templates", "what kernel am I running?")
    assert code == 0 and out["status"] == "answered" and out["repairs"] == 1


def test_invented_facts_are_shown_as_contradictions(anna: Anna) -> None:
    anna.llm.push(plan_json(notes_for_user=INVENTED, goals=["Report on the machine"]))
    proc = anna.run("ask", "--no-templates", "tell me about my hardware")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "This machine (from telemetry)" in out and "The model says:" in out
    assert "not true here: memory_used" in out and "model: 100 GB of 128 GB" in out
    assert "telemetry:" in out and "Confidence lowered" in out
    anna.llm.push(plan_json(notes_for_user=INVENTED, goals=["Report on the machine"]))
    code, doc = anna.json("ask", "--no-templates", "tell me about my hardware")
    assert code == 0 and doc["status"] == "answered"
    found = {c["fact"]: c for c in doc["contradictions"]}
    assert {"memory_used", "cpu_cores"} <= set(found)
    assert found["memory_used"]["where"] == "notes_for_user"
    assert doc["confidence"] < 1.0


def test_off_request_is_repaired_once_then_exit_11(anna: Anna) -> None:
    off = plan_json(notes_for_user="Your system looks fine.", goals=["Check the system"])
    anna.llm.push(off, off)
    proc = anna.run("ask", "--no-templates", "restart nginx")
    assert proc.returncode == 11, proc.stderr
    assert "the model did not address your request" in proc.stderr
    assert proc.stderr.startswith("annactl: LLM_OFF_REQUEST")
    assert len(anna.llm.chat_bodies()) == 2
    anna.llm.push(off, off)
    code, doc = anna.json("plan", "--no-templates", "restart nginx")
    assert code == 11 and doc["code"] == "LLM_OFF_REQUEST" and doc["status"] == "error"


def test_bad_reply_prints_a_json_document_and_a_trace_hint(anna: Anna) -> None:
    anna.llm.push("not json", "still not json")
    code, doc = anna.json("ask", "--no-templates", "why is it slow")
    assert code == 3 and doc["code"] == "LLM_BAD_REPLY"
    assert doc["findings"] and doc["findings"][0]["code"] == "PARSE_ERROR"
    assert "ANNA_TRACE=1" in doc["hint"]
    anna.llm.push("not json", "still not json")
    proc = anna.run("ask", "--no-templates", "why is it slow", "--json",
                    extra_env={"ANNA_TRACE": "1"})
    doc = json.loads(proc.stdout)
    assert "ANNA_TRACE=1" not in doc["hint"] and "recorded in" in doc["hint"]
    assert doc["trace_id"] in doc["hint"]


def test_daemon_unavailable_with_json_is_a_document(anna: Anna) -> None:
    code, doc = anna.json("ask", "hello there", extra_env={"ANNA_SOCKET": "/nonexistent/s"})
    assert code == 7 and doc["status"] == "error" and doc["code"] == "DAEMON_UNAVAILABLE"
