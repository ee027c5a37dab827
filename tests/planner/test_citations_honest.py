"""Issue 39.7: an uncited claim about the machine is marked unverified, a citation of a
field Anna never sent is a contradiction, a paraphrase of a true value is not (the real
planner, the fake LLM server, the answer form)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from annactl.planning.planner import Planner
from tests.planner.conftest import make_telemetry

QUESTION = "how much memory is free?"
"""Answer form; no template answers it."""


def _ask(fake_llm: Any, make_settings: Any, answer: str,
         citations: list[dict[str, str]]) -> Any:
    telemetry = make_telemetry()  # memory 37.5 % → sent and shown as 38
    telemetry.system.distro_name = "Debian GNU/Linux 12 (bookworm)"
    fake_llm.push(json.dumps({"answer": answer, "citations": citations}))
    outcome = Planner(make_settings(llm_url=fake_llm.ollama_url), daemon=None).plan(
        QUESTION, telemetry=telemetry)
    assert outcome.form == "answer" and outcome.template is None and outcome.result.ok
    return outcome


def test_an_uncited_claim_is_marked_unverified(fake_llm: Any, make_settings: Any) -> None:
    outcome = _ask(fake_llm, make_settings, "Only alice is logged in.", [])
    marks = [c for c in outcome.contradictions if c.fact == "uncited"]
    assert len(marks) == 1 and marks[0].telemetry == "cites no document: unverified"
    assert outcome.confidence == 0.75


def test_saying_the_documents_do_not_show_it_claims_nothing(fake_llm: Any,
                                                            make_settings: Any) -> None:
    outcome = _ask(fake_llm, make_settings, "The documents I was given do not show this.", [])
    assert outcome.contradictions == [] and outcome.confidence == 1.0


def test_a_field_anna_never_sent_is_a_contradiction(fake_llm: Any, make_settings: Any) -> None:
    outcome = _ask(fake_llm, make_settings, "Memory is 38 % used.",
                   [{"doc": "telemetry:memory.free_percent", "quote": "62"}])
    assert [(c.fact, c.telemetry) for c in outcome.contradictions] == [
        ("citation telemetry:memory.free_percent", "no such telemetry field was sent")]


@pytest.mark.parametrize(("doc", "quote", "verified"), [
    ("telemetry:system.distro_name", "Debian 12", True),
    ("telemetry:memory.percent", "38 percent", True),
    ("telemetry:memory.percent", "38%", True),
    ("telemetry:memory.percent", "45%", False),
    ("telemetry:system.distro_name", "Ubuntu 12", False),
])
def test_a_paraphrase_of_a_true_value_is_not_flagged(fake_llm: Any, make_settings: Any,
                                                     doc: str, quote: str,
                                                     verified: bool) -> None:
    outcome = _ask(fake_llm, make_settings, "Memory and system as cited.",
                   [{"doc": doc, "quote": quote}])
    assert [c.verified for c in outcome.citations] == [verified]
    assert bool(outcome.contradictions) is not verified
