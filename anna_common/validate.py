"""Validating a plan: findings with stable codes, and an annotated view. Never edits the plan.

``extract_json(text)`` pulls the first top-level JSON object out of a model
reply. ``validate(plan, context)`` checks the schema, the limits, ids and
references, and assesses every command (checks, steps, rollback) with
:func:`anna_common.risk.assess`. It returns findings and an
:class:`AnnotatedPlan` whose steps carry Anna's ``final_risk`` (the maximum of
the model's label and Anna's floor), ``banned``, ``scope`` and a
``requires_confirmation`` derived from the final risk: the model's flag can add
a confirmation, never remove one.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from anna_common.annotate import annotate
from anna_common.findings import (
    AnnotatedPlan,
    AnnotatedStep,
    Finding,
    FindingCode,
    ValidationResult,
)
from anna_common.plan import (
    MAX_COMMAND_BYTES,
    MAX_ID_CHARS,
    MAX_LIST_ENTRIES,
    MAX_PLAN_BYTES,
    ActionPlan,
    canonical_json,
)
from anna_common.risk import AssessContext, Assessment

# --------------------------------------------------------------------------- extract_json

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
MAX_REPLY_CHARS = 1_000_000
"""Longer model replies are refused outright."""


class ExtractError(ValueError):
    """No JSON object could be taken from the text."""


def _loads(text: str) -> Any:
    # strict=False: raw control characters inside strings are tolerated (a small model under
    # schema-constrained decoding emits raw newlines and tabs in strings; we measured it).
    return json.loads(text, strict=False)


def _first_object(text: str) -> str | None:
    """The first balanced ``{...}`` in ``text``, string- and escape-aware."""
    start = text.find("{")
    while start != -1:
        depth = 0
        in_string = False
        escape = False
        for i in range(start, len(text)):
            ch = text[i]
            if in_string:
                if escape:
                    escape = False
                elif ch == "\\":
                    escape = True
                elif ch == '"':
                    in_string = False
                continue
            if ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    candidate = text[start : i + 1]
                    try:
                        if isinstance(_loads(candidate), dict):
                            return candidate
                    except (ValueError, RecursionError):
                        pass
                    break
        start = text.find("{", start + 1)
    return None


def extract_json(text: str) -> dict[str, Any]:
    """The first top-level JSON object in a model reply.

    The whole reply is tried first. A ``<think>`` block or a code fence is
    removed only when what remains parses; otherwise the first balanced object
    in the text is taken. Raises :class:`ExtractError`.
    """
    if not isinstance(text, str):
        raise ExtractError("the reply is not text")
    if len(text) > MAX_REPLY_CHARS:
        raise ExtractError(f"the reply is longer than {MAX_REPLY_CHARS} characters")
    attempts = [text.strip()]
    without_think = _THINK.sub("", text).strip()
    if without_think != attempts[0]:
        attempts.append(without_think)
    attempts.extend(m.group(1).strip() for m in _FENCE.finditer(without_think))
    for attempt in attempts:
        try:
            value = _loads(attempt)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    for attempt in (without_think, text):
        candidate = _first_object(attempt)
        if candidate is not None:
            value = _loads(candidate)
            if isinstance(value, dict):
                return value
    raise ExtractError("no JSON object found in the reply")


# --------------------------------------------------------------------------- validate


def _limits(raw: dict[str, Any]) -> list[Finding]:
    found: list[Finding] = []
    try:
        size = len(canonical_json(raw))
    except (TypeError, ValueError):
        size = 0
    if size > MAX_PLAN_BYTES:
        found.append(Finding(code=FindingCode.LIMIT_EXCEEDED, message=f"the plan is {size} "
                             f"bytes; at most {MAX_PLAN_BYTES} are allowed"))
    for key in ("goals", "necessary_checks", "command_plan", "rollback_plan", "verify_commands"):
        value = raw.get(key)
        if isinstance(value, list) and len(value) > MAX_LIST_ENTRIES:
            found.append(Finding(code=FindingCode.LIMIT_EXCEEDED, path=key,
                                 message=f"{key} has {len(value)} entries; at most "
                                 f"{MAX_LIST_ENTRIES} are allowed"))
        if not isinstance(value, list):
            continue
        for i, entry in enumerate(value[:MAX_LIST_ENTRIES * 4]):
            if not isinstance(entry, dict):
                continue
            command = entry.get("command")
            if isinstance(command, str) and len(command.encode("utf-8", "replace")) > \
                    MAX_COMMAND_BYTES:
                found.append(Finding(code=FindingCode.LIMIT_EXCEEDED, path=f"{key}[{i}].command",
                                     message=f"the command is longer than {MAX_COMMAND_BYTES} "
                                     "bytes"))
            for field in ("id", "rollback_id"):
                ident = entry.get(field)
                if isinstance(ident, str) and len(ident) > MAX_ID_CHARS:
                    found.append(Finding(code=FindingCode.LIMIT_EXCEEDED,
                                         path=f"{key}[{i}].{field}",
                                         message=f"{field} is longer than {MAX_ID_CHARS} "
                                         "characters"))
    meta = raw.get("meta")
    backends = meta.get("detection_results", {}) if isinstance(meta, dict) else {}
    if isinstance(backends, dict) and isinstance(backends.get("wallpaper_backends"), list) and \
            len(backends["wallpaper_backends"]) > MAX_LIST_ENTRIES:
        found.append(Finding(code=FindingCode.LIMIT_EXCEEDED,
                             path="meta.detection_results.wallpaper_backends",
                             message=f"more than {MAX_LIST_ENTRIES} wallpaper backends"))
    return found


def _schema_findings(error: ValidationError) -> list[Finding]:
    out = []
    for item in error.errors(include_url=False)[:50]:
        path = ""
        for part in item.get("loc", ()):
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        out.append(Finding(code=FindingCode.SCHEMA_ERROR, path=path,
                           message=str(item.get("msg", "invalid value"))[:300]))
    return out


def validate_text(text: str, context: AssessContext | None = None) -> ValidationResult:
    """Extract the first JSON object from ``text`` and validate it."""
    try:
        raw = extract_json(text)
    except ExtractError as exc:
        finding = Finding(code=FindingCode.PARSE_ERROR, message=str(exc))
        return ValidationResult(ok=False, errors=[finding], warnings=[], plan=None)
    return validate(raw, context)


def validate(plan: ActionPlan | dict[str, Any] | Any,
             context: AssessContext | None = None) -> ValidationResult:
    """Validate a plan (model object or parsed JSON). Never raises, never edits the plan."""
    ctx = context or AssessContext()
    if isinstance(plan, ActionPlan):
        raw: Any = plan.model_dump(mode="json")
    else:
        raw = plan
    if not isinstance(raw, dict):
        finding = Finding(code=FindingCode.SCHEMA_ERROR, message="the plan must be a JSON object")
        return ValidationResult(ok=False, errors=[finding], warnings=[], plan=None)
    errors = _limits(raw)
    if errors:
        return ValidationResult(ok=False, errors=errors, warnings=[], plan=None)
    try:
        model = plan if isinstance(plan, ActionPlan) else ActionPlan.model_validate(raw)
    except ValidationError as exc:
        return ValidationResult(ok=False, errors=_schema_findings(exc), warnings=[], plan=None)
    annotated, errors, warnings = annotate(model, ctx)
    return ValidationResult(ok=not errors, errors=errors, warnings=warnings, plan=annotated)


__all__ = [
    "AnnotatedPlan",
    "AnnotatedStep",
    "Assessment",
    "ExtractError",
    "Finding",
    "FindingCode",
    "ValidationResult",
    "extract_json",
    "validate",
    "validate_text",
]
