"""Per-position ids the decoder enforces: the strongest model-facing schema form (issue 11.9).

A small model under the plain schema repeats ids (measured with Gemma 3 270M: 0 of 8 replies
schema-valid, all ``DUPLICATE_ID``). Here each list becomes a choice of fixed-length tuples
(``prefixItems``) whose entries carry a ``const`` id by position: checks ``c1…``, steps
``s1…``, rollback steps ``r1…``. Ids cannot repeat because the grammar writes them, and a
step's ``rollback_id`` can only name a rollback id (or be null).

Why tuples in an ``anyOf`` and not ``prefixItems`` plus ``maxItems``: llama.cpp's schema
converter accepts ``prefixItems`` only as a fixed-length tuple (``maxItems`` is ignored, and
``"items": false`` beside it is a 400 "JSON schema conversion failed"; measured, see
shared/real-llm.md). Servers that cannot convert this form get the plain schema instead
(:mod:`annactl.planning.llm.openai_compat` falls back one schema form, never to ``json_object``).

The reply is still a contract ActionPlan: validation, digests and the daemon see nothing new.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

from anna_common.plan import MODEL_BOUNDS, model_json_schema

LISTS = {"necessary_checks": "c", "command_plan": "s", "rollback_plan": "r"}
"""List property -> id prefix of its entries."""


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with a local ``$ref`` replaced by a copy of its definition."""
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return copy.deepcopy(schema["$defs"][ref.rsplit("/", 1)[1]])
    return copy.deepcopy(node)


def _entry(item: dict[str, Any], ident: str, rollback_ids: list[str] | None,
           command_chars: int | None) -> dict[str, Any]:
    entry = copy.deepcopy(item)
    props = entry["properties"]
    props["id"] = {"const": ident}
    if rollback_ids is not None and "rollback_id" in props:
        props["rollback_id"] = {"anyOf": [{"enum": rollback_ids}, {"type": "null"}]}
    if command_chars is not None and isinstance(props.get("command"), dict):
        props["command"] = {**props["command"], "maxLength": command_chars}
    return entry


def _tuples(item: dict[str, Any], prefix: str, count: int, rollback_ids: list[str] | None,
            command_chars: int | None) -> dict[str, Any]:
    """A choice between the empty list and tuples of 1..count entries with fixed ids."""
    choices: list[dict[str, Any]] = [{"type": "array", "items": item, "maxItems": 0}]
    for length in range(1, count + 1):
        choices.append({"type": "array", "prefixItems": [
            _entry(item, f"{prefix}{n}", rollback_ids, command_chars)
            for n in range(1, length + 1)]})
    return {"anyOf": choices}


def _lean(node: Any) -> Any:
    """``node`` without annotation keywords (titles, descriptions): they do not shape the
    grammar, and the tuples repeat every entry up to ten times."""
    if isinstance(node, list):
        return [_lean(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _lean(prop) for name, prop in value.items()}
        elif key not in ("title", "description") or not isinstance(value, str):
            out[key] = _lean(value)
    return out


@cache
def _positional_text(command_chars: int | None) -> str:
    schema = _lean(model_json_schema())
    props = schema["properties"]
    rollback_ids = [f"r{n}" for n in range(1, MODEL_BOUNDS["maxItems"]["rollback_plan"] + 1)]
    for name, prefix in LISTS.items():
        item = _resolve(schema, props[name]["items"])
        count = MODEL_BOUNDS["maxItems"][name]
        props[name] = _tuples(item, prefix, count,
                              rollback_ids if name == "command_plan" else None, command_chars)
    # keep every definition: PlanMeta refers to DetectionResults (llama-server answers 400
    # "cannot resolve $ref" when a definition reachable only through another is dropped)
    return json.dumps(schema)


def positional_schema(*, command_chars: int | None = None) -> dict[str, Any]:
    """The bounded ActionPlan schema with per-position ids (see the module docstring).

    ``command_chars`` additionally caps every command (measured: a runaway command is the
    other way a small model never closes its reply); None keeps the contract's cap.
    """
    result: dict[str, Any] = json.loads(_positional_text(command_chars))
    return result
