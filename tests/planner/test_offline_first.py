"""Issue 24.1: a weak template's answer is handed over before the model is asked (the REPL
and the TUI show it while the model works); the planner itself, through the fake LLM server."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from anna_common.errors import DaemonError
from annactl.planning.outcome import PlanOutcome
from annactl.planning.planner import Planner
from tests.fakellm import plan_json
from tests.planner.conftest import make_telemetry

WEAK = "free up space"
"""The disk usage template matches a keyword only: the model is still asked."""


def _plan(settings: Any, request: str, *, bodies: Callable[[], list[Any]],
          **kwargs: Any) -> tuple[PlanOutcome, list[tuple[PlanOutcome, int]]]:
    """Plan ``request``; every early answer with the number of model calls made before it."""
    seen: list[tuple[PlanOutcome, int]] = []

    def offline(outcome: PlanOutcome) -> None:
        seen.append((outcome, len(bodies())))

    outcome = Planner(settings, daemon=None).plan(request, telemetry=make_telemetry(),
                                                  on_offline=offline, **kwargs)
    return outcome, seen


def test_the_weak_answer_comes_before_the_model_is_asked(fake_llm, make_settings) -> None:
    fake_llm.push(plan_json(goals=["The model's way"]))
    outcome, seen = _plan(make_settings(llm_url=fake_llm.ollama_url), WEAK,
                          bodies=fake_llm.chat_bodies)
    assert len(seen) == 1
    first, asked_before = seen[0]
    assert asked_before == 0  # handed over before any model call
    assert first.template == "disk_usage_v1" and not first.template_confident
    assert first.plan is not None and first.result.ok and first.offline_reason is None
    assert first.telemetry is not None and first.trace_id == outcome.trace_id
    assert outcome.template is None and outcome.plan is not None
    assert outcome.plan.goals == ["The model's way"]


@pytest.mark.parametrize(("request_text", "templates"), [("how is my system", True),
                                                          (WEAK, False)])
def test_no_early_answer_without_a_weak_template(fake_llm, make_settings, request_text: str,
                                                 templates: bool) -> None:
    """A confident template answers alone; with templates off nothing is offered."""
    fake_llm.push(json.dumps({"answer": "Fine.", "citations": []}), plan_json())
    _, seen = _plan(make_settings(llm_url=fake_llm.ollama_url), request_text,
                    bodies=fake_llm.chat_bodies, use_templates=templates)
    assert seen == []


def test_a_front_end_that_cannot_show_it_never_stops_the_model(fake_llm, make_settings) -> None:
    fake_llm.push(plan_json(goals=["The model's way"]))

    def broken(_outcome: PlanOutcome) -> None:
        raise DaemonError("the daemon went away")

    outcome = Planner(make_settings(llm_url=fake_llm.ollama_url), daemon=None).plan(
        WEAK, telemetry=make_telemetry(), on_offline=broken)
    assert outcome.plan is not None and outcome.plan.goals == ["The model's way"]
    assert len(fake_llm.chat_bodies()) == 1
