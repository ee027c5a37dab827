"""Issue 14 item 2: the model's claims about the machine, checked against the telemetry."""

from __future__ import annotations

import json

import pytest

from anna_common.plan import ActionPlan
from anna_common.telemetry import DesktopInfo
from annactl.planning.facts import confidence, contradictions, telemetry_facts
from annactl.planning.history import History
from annactl.planning.planner import Planner
from tests.fakellm import plan_json
from tests.planner.conftest import make_telemetry

# the shape of the prompt's second example, on a machine it does not describe
INVENTED = ("Your system is healthy. CPU: Intel Core i7-9700K, 8 cores, load 1.2. Memory: "
            "14.4 GB of 32 GB used (45%). Disk /: 61% full. No failed services.")
# the same sentences, true for make_telemetry(): Test CPU, 4 threads, 6 of 16 GiB, / 93 %
TRUE = ("Your system is busy on disk. CPU: Test CPU, 4 threads, load 0.5. Memory: 6 GB of "
        "16 GB used (37%). Disk /: 93% full. 1 failed unit: bluetooth.service.")


def plan(**fields: object) -> ActionPlan:
    return ActionPlan.model_validate(json.loads(plan_json(**fields)))


def facts(text: str, **telemetry: object) -> set[str]:
    found = contradictions(plan(notes_for_user=text), make_telemetry(**telemetry))  # type: ignore[arg-type]
    return {c.fact for c in found}


def test_invented_facts_are_each_contradicted() -> None:
    assert facts(INVENTED) == {"cpu_model", "cpu_cores", "memory_used", "disk", "load",
                               "failed_units"}


def test_true_facts_are_not_flagged() -> None:
    assert facts(TRUE) == set()


@pytest.mark.parametrize("text,fact", [
    ("You have 64 GB of RAM.", "memory_total"),
    ("Memory is 90% used.", "memory_percent"),
    ("/home is 20% full.", "disk"),
    ("htop is not installed.", "package"),
    ("neovim-nightly is already installed.", "package"),
    ("You are running GNOME on this machine.", "desktop"),
    ("There are 3 failed units.", "failed_units"),
    ("The load average is 7.5.", "load"),
    ("An AMD Ryzen 9 5950X with 16 cores.", "cpu_model"),
])
def test_each_kind_of_claim(text: str, fact: str) -> None:
    assert fact in facts(text)


@pytest.mark.parametrize("text", [
    "You have 16 GB of RAM.", "Memory: 6.4 GB of 17 GB used.", "htop is installed.",
    "You are running Hyprland on Wayland.", "Everything is installed already.", "Install it with pacman -S htop; it needs 10% "
    "of nothing.", "The load is 0.4.", "I found 1 failed unit.", "Nothing is wrong.",
])
def test_consistent_or_vague_claims_are_not_flagged(text: str) -> None:
    assert facts(text) == set()


def test_meta_detection_results_are_checked() -> None:
    meta = {"detection_results": {"de": "gnome", "wm": None, "wallpaper_backends": [],
                                  "display_protocol": "x11"},
            "template_used": None, "llm_version": "anna_runtime_v3"}
    found = contradictions(plan(meta=meta), make_telemetry())
    assert {c.where for c in found} == {"meta"} and len(found) == 2
    headless = make_telemetry(desktop=DesktopInfo())
    assert "no desktop" in contradictions(plan(meta=meta), headless)[0].telemetry


def test_confidence_drops_per_contradiction_and_telemetry_facts_render() -> None:
    assert confidence([]) == 1.0
    found = contradictions(plan(notes_for_user=INVENTED), make_telemetry())
    assert confidence(found) == 0.0
    rows = dict(telemetry_facts(make_telemetry()))
    assert rows["CPU"].startswith("Test CPU, 4 threads")
    assert rows["Failed units"] == "bluetooth.service"


def test_planner_outcome_carries_contradictions(fake_llm, make_settings, tmp_path) -> None:
    # invented, but not the prompt's example (that would be LLM_ECHOED_EXAMPLE first)
    made_up = "Your CPU is an Intel Xeon E5-2690 with 48 cores; 100 GB of 128 GB memory used."
    fake_llm.push(plan_json(notes_for_user=made_up, goals=["Report on health"]))
    history = History(tmp_path / "state")
    outcome = Planner(make_settings(llm_url=fake_llm.ollama_url), history=history).plan(
        "how is my system?", telemetry=make_telemetry(), use_templates=False)
    assert outcome.plan is not None
    summary = outcome.summary()
    assert {c["fact"] for c in summary["contradictions"]} >= {"cpu_model", "memory_used"}
    assert summary["confidence"] < 1.0
    _request, response = history.packets()
    assert response["contradictions"] == summary["contradictions"]
    assert response["confidence"] == summary["confidence"]
