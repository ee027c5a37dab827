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

Two more bounds close the reply sooner (measured with Gemma 3 270M, docs/golden.md):

* ``memory_keys``: ``memory_patch`` becomes an object of exactly those optional keys with
  short string values. Under the open ``{string: string}`` form the decoder may invent
  keys without end, and the 270M model did, in every reply that got that far.
* ``compact``: fewer entries and shorter prose (:data:`COMPACT_BOUNDS`), for small models
  under a small output budget, which otherwise repeat list entries until the token cap.
  Commands are never shortened by it: a command cut short by the grammar could mean
  something else.

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
COMPACT_BOUNDS: dict[str, dict[str, int]] = {
    "maxItems": {"goals": 2, "necessary_checks": 3, "command_plan": 4, "rollback_plan": 4},
    "maxLength": {"analysis": 300, "notes_for_user": 400, "description": 100, "goals": 100},
}
"""The compact form's limits (entries per list; characters per prose string)."""
MEMORY_VALUE_CHARS = 200
"""Longest remembered value the decoder may write (the client's memory rule is the same)."""


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


def _cap_prose(node: Any, caps: dict[str, int]) -> None:
    """Lower the ``maxLength`` of the prose strings named in ``caps``, wherever they are."""
    if isinstance(node, list):
        for value in node:
            _cap_prose(value, caps)
        return
    if not isinstance(node, dict):
        return
    props = node.get("properties")
    if isinstance(props, dict):
        for name, prop in props.items():
            if name not in caps or not isinstance(prop, dict):
                continue
            target = prop.get("items") if prop.get("type") == "array" else prop
            for variant in [target, *(target or {}).get("anyOf", [])]:
                if isinstance(variant, dict) and variant.get("type") == "string":
                    variant["maxLength"] = min(variant.get("maxLength", caps[name]), caps[name])
    for value in node.values():
        _cap_prose(value, caps)


def _memory(keys: tuple[str, ...]) -> dict[str, Any]:
    """``memory_patch`` as a closed object: only ``keys``, each optional, values bounded."""
    return {"type": "object", "additionalProperties": False,
            "properties": {key: {"type": "string", "maxLength": MEMORY_VALUE_CHARS}
                           for key in keys}}


@cache
def _positional_text(command_chars: int | None, memory_keys: tuple[str, ...],
                     compact: bool) -> str:
    schema = _lean(model_json_schema())
    props = schema["properties"]
    counts = {**MODEL_BOUNDS["maxItems"], **(COMPACT_BOUNDS["maxItems"] if compact else {})}
    rollback_ids = [f"r{n}" for n in range(1, counts["rollback_plan"] + 1)]
    if compact:
        props["goals"]["maxItems"] = counts["goals"]
        _cap_prose(schema, COMPACT_BOUNDS["maxLength"])
    if memory_keys and "memory_patch" in props:
        props["memory_patch"] = _memory(memory_keys)
    for name, prefix in LISTS.items():
        item = _resolve(schema, props[name]["items"])
        props[name] = _tuples(item, prefix, counts[name],
                              rollback_ids if name == "command_plan" else None, command_chars)
    # keep every definition: PlanMeta refers to DetectionResults (llama-server answers 400
    # "cannot resolve $ref" when a definition reachable only through another is dropped)
    return json.dumps(schema)


def positional_schema(*, command_chars: int | None = None, memory_keys: tuple[str, ...] = (),
                      compact: bool = False) -> dict[str, Any]:
    """The bounded ActionPlan schema with per-position ids (see the module docstring).

    ``command_chars`` additionally caps every command (measured: a runaway command is the
    other way a small model never closes its reply); None keeps the contract's cap.
    ``memory_keys`` closes ``memory_patch`` to those keys (empty: the open form);
    ``compact`` applies :data:`COMPACT_BOUNDS`.
    """
    result: dict[str, Any] = json.loads(_positional_text(command_chars, tuple(memory_keys),
                                                         compact))
    return result
