"""Hypothesis: random text and random plans never make extract_json, validate or assess raise."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anna_common.risk.assess import AssessContext, assess
from anna_common.validate import ExtractError, extract_json, validate, validate_text

CTX = AssessContext(distro="arch", home="/home/alice")
SHELLISH = st.lists(
    st.sampled_from([*"abcdefrmsh -/~$(){}[]<>|&;'\"`\\*?!#=:\n\t.,@%^+",
                     "rm", "sudo", "bash -c", "eval", "curl", "<<EOF\n", "$(", "/dev/sda",
                     "\x00", "\x1b[31m", "é", "\u202e", " | sh", "xargs", "find / -exec"]),
    max_size=40,
).map("".join)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["analysis", "goals", "necessary_checks", "command_plan", "rollback_plan",
                         "notes_for_user", "meta", "id", "command", "risk_level", "rollback_id",
                         "requires_confirmation", "description", "required", "x"]),
        children, max_size=6),
    max_leaves=25,
)
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(SHELLISH)
def test_assess_never_raises(command: str) -> None:
    verdict = assess(command, CTX)
    assert verdict.command == command
    if verdict.banned:
        assert verdict.risk.value == "HIGH"


@FAST
@given(st.text(max_size=300))
def test_extract_json_only_raises_extract_error(text: str) -> None:
    try:
        value = extract_json(text)
    except ExtractError:
        return
    assert isinstance(value, dict)


@FAST
@given(JSONISH)
def test_validate_never_raises_on_random_json(value: object) -> None:
    result = validate(value, CTX)  # type: ignore[arg-type]
    assert result.ok == (not result.errors)
    text_result = validate_text(json.dumps(value), CTX)
    assert text_result.ok == (not text_result.errors)


STEP = st.fixed_dictionaries({
    "id": st.text(min_size=1, max_size=8), "description": st.text(max_size=10),
    "command": SHELLISH, "risk_level": st.sampled_from(["INFO", "LOW", "MEDIUM", "HIGH"]),
    "rollback_id": st.none() | st.text(max_size=4), "requires_confirmation": st.booleans(),
})
PLAN = st.fixed_dictionaries({
    "analysis": st.text(max_size=20), "goals": st.lists(st.text(max_size=10), max_size=3),
    "necessary_checks": st.just([]), "command_plan": st.lists(STEP, max_size=4),
    "rollback_plan": st.just([]), "notes_for_user": st.text(max_size=20),
    "meta": st.just({"detection_results": {}, "template_used": None,
                     "llm_version": "anna_runtime_v3"}),
})


@FAST
@given(PLAN)
def test_random_plans_validate_without_raising(data: dict[str, object]) -> None:
    result = validate(data, CTX)
    if result.plan is not None:
        for annotated in result.plan.steps:
            assert annotated.final_risk >= annotated.model_risk
            assert annotated.final_risk >= annotated.floor
            if annotated.banned:
                assert not result.ok
