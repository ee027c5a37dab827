"""Validating a plan: findings with stable codes, and an annotated view. Never edits the plan.

``extract_json(text)`` (:mod:`anna_common.extract`) takes the one top-level JSON
object out of a model reply. ``validate(plan, context)`` checks the schema, the limits, ids and
references, and assesses every command (checks, steps, rollback) with
:func:`anna_common.risk.assess.assess`. It returns findings and an
:class:`AnnotatedPlan` whose steps carry Anna's ``final_risk`` (the maximum of
the model's label and Anna's floor), ``banned``, ``scope`` and a
``requires_confirmation`` derived from the final risk: the model's flag can add
a confirmation, never remove one.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from anna_common.annotate import annotate
from anna_common.extract import MAX_REPLY_CHARS, ExtractError, extract_json
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
from anna_common.risk.rules.base import AssessContext

# --------------------------------------------------------------------------- validate


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
"""C0 controls but tab and newline, and DEL: a NUL cuts the command short where the kernel
reads it, an ESC repaints the terminal showing it, a carriage return hides what precedes it."""


def _limits(raw: dict[str, Any]) -> list[Finding]:
    found: list[Finding] = []
    try:
        size = len(canonical_json(raw))
    except UnicodeEncodeError:
        # a lone surrogate ("\ud800" is valid JSON, not valid Unicode): no digest, no UTF-8
        # output can hold it; refused as what it is, never a crash further on
        return [Finding(code=FindingCode.SCHEMA_ERROR, message="the plan holds text that is "
                        "not valid Unicode (a lone surrogate such as \\ud800)")]
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
            bad = _CONTROL.search(command) if isinstance(command, str) else None
            if bad is not None:
                found.append(Finding(code=FindingCode.CONTROL_CHARACTER,
                                     path=f"{key}[{i}].command",
                                     message=f"the command holds the control character "
                                     f"U+{ord(bad.group()):04X}; only tab and newline may appear"))
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
    "MAX_REPLY_CHARS",
    "AnnotatedPlan",
    "AnnotatedStep",
    "ExtractError",
    "Finding",
    "FindingCode",
    "ValidationResult",
    "extract_json",
    "validate",
    "validate_text",
]
