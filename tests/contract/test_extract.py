"""Strict extraction (issue 11 item 7): one complete top-level object, or PARSE_ERROR.

The class fixed here: the old scanner fell back to a *nested* object (a check, a step) when
the plan itself did not parse, and the validator then reported a dozen misleading
SCHEMA_ERRORs that misled the repair prompt. Every variant below that is not exactly one
complete plan must be PARSE_ERROR, never a nested object and never a SCHEMA_ERROR.
"""

from __future__ import annotations

import json

import pytest

from anna_common.extract import ExtractError, extract_json
from anna_common.findings import FindingCode
from anna_common.risk.assess import AssessContext
from anna_common.validate import validate_text

from .plans import STATUS, WALLPAPER

CTX = AssessContext(distro="arch", home="/home/alice")
BODY = json.dumps(WALLPAPER)
PRETTY = json.dumps(WALLPAPER, indent=2)


def _cut(text: str, at: str) -> str:
    """``text`` truncated just after the last occurrence of ``at``."""
    return text[: text.rindex(at) + len(at)]


def _commented(text: str) -> str:
    """The pretty plan with ``//`` comments after a few values (a common model habit)."""
    lines = text.splitlines()
    return "\n".join(line + ("  // why" if line.rstrip().endswith(",") and i % 3 == 0 else "")
                     for i, line in enumerate(lines))


NOT_A_PLAN = {
    # truncation at many points: inside a check, a step, a string, the last brace
    "cut after the first check": _cut(BODY, '"required": true}'),
    "cut inside a step": _cut(BODY, '"risk_level": "LOW"'),
    "cut inside a string": BODY[: BODY.index("Restore previous config") + 9],
    "cut before the last brace": BODY[:-1],
    "pretty and cut": _cut(PRETTY, '"required": true\n    }'),
    "fenced and cut": "```json\n" + _cut(BODY, '"required": true}'),
    "prose then cut": "Here is the plan:\n" + _cut(BODY, '"required": true}'),
    # comments, trailing commas, single quotes: balanced but not JSON
    "line comments": _commented(PRETTY),
    "block comment": BODY.replace('"goals"', '/* goals */ "goals"', 1),
    "trailing comma": BODY[:-1] + ",}",
    "single quotes": BODY.replace('"analysis"', "'analysis'", 1),
    "comment in fences": "```json\n" + _commented(PRETTY) + "\n```",
    # reasoning
    "unclosed think with a plan": "<think>I will answer " + BODY,
    "unclosed THINK, upper case": "<THINK>\n" + BODY + "\n",
    "think only, plan inside": "<think>" + BODY + "</think>",
    "plan inside think then prose": "<think>" + BODY + "</think> Done.",
    "prose, then unclosed think": "Sure.\n<think>" + BODY,
    # ambiguity
    "two objects": BODY + "\n" + json.dumps(STATUS),
    "two objects in prose": "First: " + json.dumps(STATUS) + " or better: " + BODY,
    "two fenced objects": f"```json\n{BODY}\n```\n```json\n{json.dumps(STATUS)}\n```",
    "plan then an empty object": BODY + " {}",
    # not an object at top level: the nested plan is never taken
    "array of plans": "[" + BODY + "]",
    "array of plans in prose": "Plans: [" + BODY + "] ok",
    "array cut": "[" + BODY + ", ",
    "string holding a plan": json.dumps(BODY),
    # byte-order marks where JSON has no whitespace
    "BOM inside the object": BODY.replace(', "goals"', ',\ufeff "goals"', 1),
    "two BOMs": "\ufeff\ufeff" + BODY.replace('{"analysis"', '{\ufeff"analysis"', 1),
    # nothing
    "empty": "",
    "prose only": "I cannot help with that.",
    "lone brace in prose then nothing": "use { here",
}


@pytest.mark.parametrize("name", sorted(NOT_A_PLAN))
def test_not_exactly_one_complete_object_is_a_parse_error(name: str) -> None:
    text = NOT_A_PLAN[name]
    with pytest.raises(ExtractError):
        extract_json(text)
    result = validate_text(text, CTX)
    assert [f.code for f in result.errors] == [FindingCode.PARSE_ERROR], result.errors
    assert result.plan is None


@pytest.mark.parametrize(("name", "text"), [
    ("plain", BODY),
    ("pretty", PRETTY),
    ("one leading BOM", "\ufeff" + BODY),
    ("BOM then fences", "\ufeff```json\n" + BODY + "\n```"),
    ("fenced", "```json\n" + BODY + "\n```"),
    ("fence without a language", "```\n" + PRETTY + "\n```"),
    ("prose around", "Sure! Here is the plan:\n" + BODY + "\nLet me know."),
    ("prose with braces and brackets", "Use {hyprpaper} [1]: " + BODY + " (see [docs])"),
    ("closed think first", "<think>maybe {x} or " + json.dumps(STATUS) + "</think>\n" + BODY),
    ("template opened the think", "reasoning {\"a\": 1} ...</think>\n" + BODY),
    ("several closed thinks", "<think>a</think><think>{b}</think>" + BODY),
    ("think words inside strings",
     json.dumps({**WALLPAPER, "analysis": "no <think> here, nor </think>"})),
    ("raw newline in a string", BODY.replace("Restore previous config", "Restore previous\nconfig", 1)),
])
def test_exactly_one_complete_object_is_taken(name: str, text: str) -> None:
    value = extract_json(text)
    assert value["goals"] == WALLPAPER["goals"] or value["analysis"].startswith("no <think>")
    assert validate_text(text, CTX).ok


@pytest.mark.parametrize(("text", "words"), [
    (_cut(BODY, '"required": true}'), "ends before"),
    (_commented(PRETTY), "not valid JSON"),
    (BODY + json.dumps(STATUS), "2 JSON objects"),
    ("<think>" + BODY, "unfinished <think>"),
    ("[" + BODY + "]", "list, not one object"),
])
def test_the_reason_names_the_problem_for_the_repair_prompt(text: str, words: str) -> None:
    with pytest.raises(ExtractError, match=words):
        extract_json(text)


def test_a_truncated_plan_never_yields_its_nested_check() -> None:
    # the exact regression: the first check is a complete object inside a cut-off plan
    check = WALLPAPER["necessary_checks"][0]
    text = _cut(BODY, '"required": true}')
    assert json.dumps(check) in text
    result = validate_text(text, CTX)
    assert not any(f.code == FindingCode.SCHEMA_ERROR for f in result.errors)
    assert "ends before" in result.errors[0].message
