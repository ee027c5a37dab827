"""extract_json and validate: every finding code, and the rule that validation never edits."""

from __future__ import annotations

import copy
import json

import pytest

from anna_common.findings import FindingCode
from anna_common.plan import (
    PLAN_ONLY_FIELDS,
    ActionPlan,
    RiskLevel,
    model_json_schema,
    plan_digest,
)
from anna_common.risk.assess import AssessContext, Scope
from anna_common.validate import ExtractError, extract_json, validate, validate_text

from .plans import STATUS, WALLPAPER, plan, step

CTX = AssessContext(distro="arch", home="/home/alice")


def codes(result: object, kind: str = "errors") -> list[str]:
    return [f.code.value for f in getattr(result, kind)]


# ------------------------------------------------------------------ extract_json

def test_extract_plain_object() -> None:
    assert extract_json(json.dumps(WALLPAPER)) == WALLPAPER


@pytest.mark.parametrize("wrapper", [
    "```json\n{body}\n```",
    "Sure! Here is the plan:\n{body}\nLet me know.",
    "<think>I should use {{hyprpaper}} here.</think>\n{body}",
    "<think>{{\"not\": \"this\"}}</think>```\n{body}\n```",
    "  \n{body}\n\n",
])
def test_extract_strips_fences_think_and_prose(wrapper: str) -> None:
    text = wrapper.replace("{{", "{").replace("}}", "}").replace("{body}", json.dumps(WALLPAPER))
    assert extract_json(text) == WALLPAPER


def test_extract_refuses_two_top_level_objects() -> None:
    # which one is the plan? ambiguous, so neither (tests/contract/test_extract.py has variants)
    text = json.dumps(STATUS) + "\n" + json.dumps(WALLPAPER)
    with pytest.raises(ExtractError, match="2 JSON objects"):
        extract_json("noise " + text)


def test_extract_tolerates_raw_control_characters_in_strings() -> None:
    raw = json.dumps(STATUS).replace("healthy.", "healthy.\n\tReally.")
    assert "\n\t" in raw
    assert extract_json(raw)["notes_for_user"].endswith("\n\tReally.")


def test_an_object_inside_reasoning_is_not_a_plan() -> None:
    text = "<think>" + json.dumps(STATUS) + "</think> no json here"
    with pytest.raises(ExtractError, match="no JSON object"):
        extract_json(text)


@pytest.mark.parametrize("text", ["", "no json", "[1, 2]", "{broken", "{'single': 1}", "null"])
def test_extract_errors(text: str) -> None:
    with pytest.raises(ExtractError):
        extract_json(text)


# ------------------------------------------------------------------ schema and model

def test_schema_is_generated_from_the_models_and_strict() -> None:
    schema = model_json_schema()
    # fields the daemon accepts but the model is not asked for (yet) stay out of its schema
    assert set(schema["required"]) == set(ActionPlan.model_fields) - PLAN_ONLY_FIELDS
    assert schema["additionalProperties"] is False
    step_schema = schema["$defs"]["CommandStep"]
    assert set(step_schema["required"]) == {"id", "description", "command", "risk_level",
                                            "rollback_id", "requires_confirmation"}
    assert schema["$defs"]["RiskLevel"]["enum"] == ["INFO", "LOW", "MEDIUM", "HIGH"]


def test_every_schema_property_is_described_by_its_field_docstring() -> None:
    """The docstrings reach the model's schema when it is generated (not when the classes are
    made, issue 23.7): pydantic's own reader of attribute docstrings is the oracle."""
    from pydantic._internal._docs_extraction import extract_docstrings_from_cls

    import anna_common.plan as plan_models

    schema = model_json_schema(bounded=False)
    models = {"ActionPlan": schema, **schema["$defs"]}
    described = 0
    for name, node in models.items():
        if "properties" not in node:
            continue  # an enum
        docs = extract_docstrings_from_cls(getattr(plan_models, name), use_inspect=True)
        assert docs, name
        for field, prop in node["properties"].items():
            assert prop["description"] == docs[field], (name, field)
            described += 1
    assert described == 29  # every field of the seven models but verify_commands (not sent)
    assert schema["$defs"]["CommandStep"]["properties"]["command"]["description"] == \
        "The exact shell command."


def test_risk_levels_are_ordered() -> None:
    assert RiskLevel.INFO < RiskLevel.LOW < RiskLevel.MEDIUM < RiskLevel.HIGH
    assert RiskLevel.max_of(RiskLevel.LOW, RiskLevel.HIGH, RiskLevel.INFO) == RiskLevel.HIGH
    assert RiskLevel.max_of() == RiskLevel.INFO


def test_digest_is_canonical() -> None:
    shuffled = dict(reversed(list(WALLPAPER.items())))
    assert plan_digest(shuffled) == plan_digest(WALLPAPER)
    nfd = plan(notes_for_user="Cafe\u0301")  # e + combining acute
    nfc = plan(notes_for_user="Caf\u00e9")
    # exact bytes, no normalisation: NFC/NFD twins run different bytes, so differ
    assert plan_digest(nfd) != plan_digest(nfc)
    assert plan_digest(plan(notes_for_user="x")) != plan_digest(WALLPAPER)
    assert ActionPlan.model_validate(WALLPAPER).digest() == plan_digest(WALLPAPER)


# ------------------------------------------------------------------ validate

def test_valid_plan_is_annotated() -> None:
    result = validate(WALLPAPER, CTX)
    assert result.ok, result.errors
    annotated = result.plan
    assert annotated is not None
    assert [s.final_risk for s in annotated.checks] == [RiskLevel.INFO, RiskLevel.INFO]
    assert [s.final_risk for s in annotated.steps] == [RiskLevel.LOW, RiskLevel.LOW]
    assert annotated.final_risk == RiskLevel.LOW
    assert annotated.confirmations == 1
    assert annotated.scope == Scope.USER
    assert annotated.digest == plan_digest(WALLPAPER)
    # the config edit has its rollback; the live hyprctl call has none and the daemon records
    # nothing of it (tests/contract/test_rollback_claims.py): only part of the plan undoes
    assert annotated.rollback_status == "partial"
    # the model said no confirmation for step 2; Anna requires one (LOW)
    assert annotated.steps[1].requires_confirmation
    assert "CONFIRMATION_ADDED" in codes(result, "warnings")


def test_status_plan_needs_no_confirmation() -> None:
    result = validate(STATUS, CTX)
    assert result.ok and result.plan is not None
    assert result.plan.final_risk == RiskLevel.INFO
    assert result.plan.confirmations == 0


def test_validation_never_edits_the_plan() -> None:
    data = plan(command_plan=[step("s1", "sudo pacman -S docker", risk="INFO", confirm=False)],
                rollback_plan=[])
    before = copy.deepcopy(data)
    result = validate(data, CTX)
    assert data == before
    assert result.plan is not None
    assert result.plan.plan.model_dump(mode="json") == before
    assert result.plan.steps[0].model_risk == RiskLevel.INFO
    assert result.plan.steps[0].final_risk == RiskLevel.MEDIUM
    assert "RISK_RAISED" in codes(result, "warnings")


def test_model_flag_can_add_a_confirmation_but_not_remove_one() -> None:
    data = plan(command_plan=[step("s1", "ls -la", risk="INFO", confirm=True)], rollback_plan=[])
    result = validate(data, CTX)
    assert result.plan is not None
    assert result.plan.steps[0].final_risk == RiskLevel.INFO
    assert result.plan.steps[0].requires_confirmation
    assert result.plan.confirmations == 1


def test_high_plan_needs_two_confirmations_and_names_a_word() -> None:
    data = plan(command_plan=[step("s1", "sudo systemctl restart sshd", risk="LOW")],
                rollback_plan=[])
    result = validate(data, CTX)
    assert result.ok and result.plan is not None
    assert result.plan.final_risk == RiskLevel.HIGH
    assert result.plan.confirmations == 2
    assert result.plan.confirm_word == "sshd"


@pytest.mark.parametrize(("mutate", "code"), [
    (lambda d: d.pop("goals"), FindingCode.SCHEMA_ERROR),
    (lambda d: d.update(extra="x"), FindingCode.SCHEMA_ERROR),
    (lambda d: d["command_plan"][0].update(risk_level="CRITICAL"), FindingCode.SCHEMA_ERROR),
    (lambda d: d["command_plan"][1].update(id="update_config"), FindingCode.DUPLICATE_ID),
    (lambda d: d["rollback_plan"][0].update(id="check_file"), FindingCode.DUPLICATE_ID),
    (lambda d: d["command_plan"][0].update(rollback_id="nope"), FindingCode.UNKNOWN_ROLLBACK_REF),
    (lambda d: d["command_plan"][0].update(command="   "), FindingCode.EMPTY_COMMAND),
    (lambda d: d["command_plan"][0].update(command="sudo rm -rf /"), FindingCode.BANNED_COMMAND),
    (lambda d: d["rollback_plan"][0].update(command="rm -rf ~"), FindingCode.BANNED_COMMAND),
    (lambda d: d["necessary_checks"][0].update(command="curl x | sh"),
     FindingCode.BANNED_COMMAND),
    (lambda d: d["necessary_checks"][0].update(command="touch /tmp/x"),
     FindingCode.CHECK_NOT_READ_ONLY),
    (lambda d: d["necessary_checks"][0].update(command="sudo pacman -Syu"),
     FindingCode.CHECK_NOT_READ_ONLY),
    (lambda d: d["command_plan"][0].update(command="sudo apt install hyprpaper"),
     FindingCode.NOT_NATIVE),
    (lambda d: d.update(goals=["g"] * 51), FindingCode.LIMIT_EXCEEDED),
    (lambda d: d["command_plan"][0].update(command="echo " + "x" * 5000),
     FindingCode.LIMIT_EXCEEDED),
    (lambda d: d["command_plan"][0].update(id="i" * 201), FindingCode.LIMIT_EXCEEDED),
    (lambda d: d.update(notes_for_user="n" * 70000), FindingCode.LIMIT_EXCEEDED),
])
def test_error_codes(mutate: object, code: FindingCode) -> None:
    data = copy.deepcopy(WALLPAPER)
    mutate(data)  # type: ignore[operator]
    result = validate(data, CTX)
    assert not result.ok
    assert code.value in codes(result), result.errors
    for finding in result.errors:
        assert finding.message


def test_paths_point_at_the_problem() -> None:
    data = copy.deepcopy(WALLPAPER)
    data["command_plan"][1]["command"] = "mkfs.ext4 /dev/sda1"
    result = validate(data, CTX)
    banned = [f for f in result.errors if f.code == FindingCode.BANNED_COMMAND]
    assert banned[0].path == "command_plan[1].command"
    assert result.plan is not None and result.plan.banned


def test_parse_error_from_text() -> None:
    result = validate_text("I cannot help with that.", CTX)
    assert not result.ok and codes(result) == ["PARSE_ERROR"] and result.plan is None


def test_opaque_command_is_a_warning_and_high() -> None:
    data = plan(command_plan=[step("s1", "echo 'unterminated", risk="LOW")], rollback_plan=[])
    result = validate(data, CTX)
    assert "OPAQUE_COMMAND" in codes(result, "warnings")
    assert result.plan is not None and result.plan.steps[0].final_risk == RiskLevel.HIGH


def test_not_native_follows_the_distro() -> None:
    data = plan(command_plan=[step("s1", "sudo apt install nginx", "MEDIUM")], rollback_plan=[])
    assert validate(data, AssessContext(distro="debian")).ok
    assert not validate(data, AssessContext(distro="arch")).ok
    assert validate(data, AssessContext(distro=None)).ok


def test_model_schema_keeps_field_order_and_bounds_lists_and_prose() -> None:
    from anna_common.plan import MODEL_BOUNDS, without_bounds

    schema = model_json_schema()
    # a grammar-constrained decoder emits properties in schema order: plan order, not a-z
    assert list(schema["properties"]) == ["analysis", "goals", "necessary_checks",
                                          "command_plan", "rollback_plan", "notes_for_user",
                                          "meta", "memory_patch"]
    assert schema["properties"]["memory_patch"]["maxProperties"] == 8
    assert schema["properties"]["command_plan"]["maxItems"] == MODEL_BOUNDS["maxItems"][
        "command_plan"]
    step_props = schema["$defs"]["CommandStep"]["properties"]
    assert step_props["description"]["maxLength"] == 200
    # commands are never cut short by the grammar beyond the contract's own limit
    assert step_props["command"]["maxLength"] == 4096
    plain = without_bounds(schema)
    assert "maxItems" not in json.dumps(plain) and "maxLength" not in json.dumps(plain)
    assert "maxProperties" not in json.dumps(plain)
    assert plain == model_json_schema(bounded=False)
