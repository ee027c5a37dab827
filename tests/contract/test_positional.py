"""The per-position-id schema form (issue 11 item 9): what the decoder is made to write."""

from __future__ import annotations

import json
from typing import Any

import pytest

from anna_common.plan import MODEL_BOUNDS
from anna_common.positional import COMPACT_BOUNDS, LISTS, MEMORY_VALUE_CHARS, positional_schema
from anna_common.validate import validate

from .plans import WALLPAPER


def _walk(node: Any) -> list[Any]:
    out = [node]
    if isinstance(node, dict):
        for value in node.values():
            out += _walk(value)
    elif isinstance(node, list):
        for value in node:
            out += _walk(value)
    return out


def _positional(plan: dict[str, Any]) -> dict[str, Any]:
    """``plan`` with the ids the grammar would write."""
    out = json.loads(json.dumps(plan))
    renames = {}
    for name, prefix in LISTS.items():
        for i, entry in enumerate(out[name], start=1):
            renames[entry["id"]] = f"{prefix}{i}"
            entry["id"] = f"{prefix}{i}"
    for step in out["command_plan"]:
        if step["rollback_id"] is not None:
            step["rollback_id"] = renames[step["rollback_id"]]
    return out


def test_each_list_is_a_choice_of_tuples_with_fixed_ids() -> None:
    schema = positional_schema()
    for name, prefix in LISTS.items():
        choices = schema["properties"][name]["anyOf"]
        assert len(choices) == MODEL_BOUNDS["maxItems"][name] + 1
        assert choices[0]["maxItems"] == 0
        for length, choice in enumerate(choices[1:], start=1):
            ids = [entry["properties"]["id"] for entry in choice["prefixItems"]]
            assert ids == [{"const": f"{prefix}{n}"} for n in range(1, length + 1)]


def test_rollback_references_can_only_name_rollback_ids_or_null() -> None:
    schema = positional_schema()
    for choice in schema["properties"]["command_plan"]["anyOf"][1:]:
        for step in choice["prefixItems"]:
            ref = step["properties"]["rollback_id"]["anyOf"]
            assert ref[0]["enum"] == [f"r{n}" for n in range(1, 11)]
            assert ref[1] == {"type": "null"}


def test_every_reference_resolves() -> None:
    # llama-server: 400 "cannot resolve $ref" (measured when a nested definition was dropped)
    schema = positional_schema()
    refs = {n["$ref"] for n in _walk(schema) if isinstance(n, dict) and "$ref" in n}
    assert refs
    for ref in refs:
        assert ref.rsplit("/", 1)[1] in schema["$defs"], ref


def test_no_form_llama_server_rejects() -> None:
    # "items": false beside prefixItems is a 400 "JSON schema conversion failed"
    for node in _walk(positional_schema()):
        if isinstance(node, dict) and "prefixItems" in node:
            assert "items" not in node


def _fits(plan: dict[str, Any], schema: dict[str, Any]) -> bool:
    """Does ``plan`` take a path through the tuples (ids, references, command caps)?"""
    for name in LISTS:
        entries = plan[name]
        choices = schema["properties"][name]["anyOf"]
        if len(entries) >= len(choices):
            return False
        for entry, spec in zip(entries, choices[len(entries)].get("prefixItems", []),
                               strict=True):
            props = spec["properties"]
            if entry["id"] != props["id"]["const"]:
                return False
            ref = props.get("rollback_id")
            if ref is not None and entry["rollback_id"] not in [*ref["anyOf"][0]["enum"], None]:
                return False
            cap = props["command"].get("maxLength")
            if cap is not None and len(entry["command"]) > cap:
                return False
    return True


@pytest.mark.parametrize("chars", [None, 256])
def test_a_plan_in_the_positional_form_fits_it_and_the_contract(chars: int | None) -> None:
    plan = _positional(WALLPAPER)
    assert _fits(plan, positional_schema(command_chars=chars))
    assert validate(plan).ok


def test_duplicate_ids_and_long_commands_do_not_fit() -> None:
    plan = _positional(WALLPAPER)
    plan["command_plan"][1]["id"] = "s1"
    assert not _fits(plan, positional_schema())
    assert not validate(plan).ok  # DUPLICATE_ID: the plain form cannot prevent it
    long = _positional(WALLPAPER)
    long["command_plan"][0]["command"] += " #" + "x" * 300
    assert _fits(long, positional_schema()) and not _fits(long, positional_schema(
        command_chars=256))


def test_memory_patch_is_closed_to_the_given_keys_with_bounded_values() -> None:
    # the open {string: string} form let the 270M model invent keys until the token cap
    open_form = positional_schema()["properties"]["memory_patch"]
    assert open_form.get("additionalProperties") is not False
    closed = positional_schema(memory_keys=("editor", "shell"))["properties"]["memory_patch"]
    assert closed["additionalProperties"] is False
    assert set(closed["properties"]) == {"editor", "shell"}
    assert all(p["maxLength"] == MEMORY_VALUE_CHARS for p in closed["properties"].values())
    assert not closed.get("required")


def test_compact_form_has_fewer_entries_and_shorter_prose_but_full_commands() -> None:
    full, compact = positional_schema(), positional_schema(compact=True)
    for name in LISTS:
        assert len(compact["properties"][name]["anyOf"]) == \
            COMPACT_BOUNDS["maxItems"][name] + 1
    assert compact["properties"]["goals"]["maxItems"] == COMPACT_BOUNDS["maxItems"]["goals"]
    assert compact["properties"]["goals"]["items"]["maxLength"] == \
        COMPACT_BOUNDS["maxLength"]["goals"]
    assert compact["properties"]["analysis"]["maxLength"] == 300
    assert full["properties"]["analysis"]["maxLength"] > 300
    refs = compact["properties"]["command_plan"]["anyOf"][1]["prefixItems"][0]["properties"]
    assert refs["rollback_id"]["anyOf"][0]["enum"] == ["r1", "r2", "r3", "r4"]
    # a command is never shortened by the compact form (a cut command could mean another)
    assert refs["command"].get("maxLength") == \
        full["properties"]["command_plan"]["anyOf"][1]["prefixItems"][0]["properties"][
            "command"].get("maxLength")
    descriptions = [n["properties"]["description"]["maxLength"] for n in _walk(compact)
                    if isinstance(n, dict) and isinstance(n.get("properties"), dict)
                    and "description" in n["properties"]
                    and isinstance(n["properties"]["description"], dict)
                    and "maxLength" in n["properties"]["description"]]
    assert descriptions and set(descriptions) == {100}


def test_a_short_plan_fits_the_compact_form_and_a_long_one_does_not() -> None:
    plan = _positional(WALLPAPER)
    compact = positional_schema(compact=True)
    assert len(plan["command_plan"]) <= 4 and _fits(plan, compact)
    long = json.loads(json.dumps(plan))
    for n in range(len(long["command_plan"]) + 1, 6):
        long["command_plan"].append({**long["command_plan"][0], "id": f"s{n}"})
    assert _fits(long, positional_schema()) and not _fits(long, compact)
