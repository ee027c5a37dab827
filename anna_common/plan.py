"""The ActionPlan v3 models of Anna's JSON Runtime Contract (seed 000).

These models are the one source of truth for the plan: the JSON Schema sent to
the model as its structured-output format is generated from them
(:func:`model_json_schema`), validation parses into them, and the digest that
binds "what was shown" to "what runs" is computed from their canonical JSON.

Field names and types follow the seed exactly. Models are strict
(``extra="forbid"``): an unknown key is a schema error, never silently dropped.
Size limits (list lengths, command bytes) are *not* enforced here: they are
reported by :mod:`anna_common.validate` as ``LIMIT_EXCEEDED`` findings, so a
plan that is too big gets a precise finding instead of a generic schema error.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import sys
from functools import cache, lru_cache
from itertools import pairwise
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer
from pydantic.json_schema import SkipJsonSchema

# re-exported: pure (no pydantic), so the client reads levels and hashes JSON without
# building these models
from anna_common.levels import RiskLevel, Scope, canonical_json

__all__ = [
    "LLM_VERSION",
    "MAX_COMMAND_BYTES",
    "MAX_ID_CHARS",
    "MAX_LIST_ENTRIES",
    "MAX_PLAN_BYTES",
    "MODEL_BOUNDS",
    "PLAN_COMMANDS",
    "PLAN_ONLY_FIELDS",
    "ActionPlan",
    "CommandStep",
    "DetectionResults",
    "NecessaryCheck",
    "PlanMeta",
    "RiskLevel",
    "RollbackStep",
    "Scope",
    "VerifyCommand",
    "canonical_json",
    "model_json_schema",
    "plan_digest",
    "schema_sha256",
    "without_bounds",
]

LLM_VERSION = "anna_runtime_v3"
"""The ``meta.llm_version`` the contract names."""

MAX_LIST_ENTRIES = 50
"""At most this many entries in goals, checks, steps, rollback steps, backends."""
MAX_COMMAND_BYTES = 4096
"""At most this many UTF-8 bytes in one command."""
PLAN_COMMANDS = 256
"""Analyses of distinct commands a process keeps, per kind (risk assessment, policy subject):
every command of one plan (steps, checks and rollback: 150 at most) analysed again within a
request is found, while the memory stays bounded however many distinct commands a
long-lived daemon sees (each kept analysis ~3 kB; issue 22, bench/daemon_memory.py)."""
MAX_PLAN_BYTES = 64 * 1024
"""At most this many UTF-8 bytes of canonical JSON for a whole plan."""
MAX_ID_CHARS = 200
"""At most this many characters in an id or rollback reference."""
PLAN_ONLY_FIELDS = frozenset({"verify_commands"})
"""Optional plan fields the daemon accepts that the model-facing schema leaves out."""


def _describe_fields(schema: dict[str, Any], cls: type[Any]) -> None:
    """Field docstrings as the schema's ``description``s, read when a schema is made.

    ``use_attribute_docstrings`` read every model's source when its class was made (frames,
    ``inspect``, the tokenizer): a twentieth of answering "how is my system?" offline (issue
    23.7). Here the module is parsed once, when the first schema is generated; pydantic sorts
    the keys afterwards, so the schema is byte for byte what ``use_attribute_docstrings`` gave.
    An explicit ``Field(description=…)`` wins, as it did there.
    """
    docs = _field_docstrings(cls.__module__).get(cls.__qualname__, {})
    for name, prop in schema.get("properties", {}).items():
        if name in docs and isinstance(prop, dict):
            prop.setdefault("description", docs[name])


@lru_cache(maxsize=4)  # keyed by module name (only this one): bounded all the same
def _field_docstrings(module: str) -> dict[str, dict[str, str]]:
    """``{class: {field: docstring}}``: the string right after a class-level annotated
    assignment, cleaned like a docstring."""
    found: dict[str, dict[str, str]] = {}
    for node in ast.parse(inspect.getsource(sys.modules[module])).body:
        if isinstance(node, ast.ClassDef):
            found[node.name] = {
                before.target.id: inspect.cleandoc(after.value.value)
                for before, after in pairwise(node.body)
                if isinstance(before, ast.AnnAssign) and isinstance(before.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)}
    return found


_STRICT = ConfigDict(extra="forbid", frozen=True, defer_build=True,
                     json_schema_extra=_describe_fields)


class NecessaryCheck(BaseModel):
    """A read-only diagnostic the model wants run before planning further."""

    model_config = _STRICT

    id: str
    """Unique id among checks, steps and rollback steps."""
    description: str
    """What the check finds out, for the person."""
    command: str
    """A safe diagnostic shell command. Anna runs it only if its own assessment is INFO."""
    risk_level: RiskLevel
    """The model's label. Anna's computed floor can only raise it."""
    required: bool
    """Whether planning should stop when this check fails."""


class CommandStep(BaseModel):
    """One step of the plan: a shell command the daemon runs after approval."""

    model_config = _STRICT

    id: str
    """Unique id among checks, steps and rollback steps."""
    description: str
    """What this step does, for the person."""
    command: str
    """The exact shell command."""
    risk_level: RiskLevel
    """The model's label. Anna's computed floor can only raise it."""
    rollback_id: str | None
    """Id of the ``rollback_plan`` entry that undoes this step, or null."""
    requires_confirmation: bool
    """The model may ask for a confirmation; it can never waive one Anna requires."""


class RollbackStep(BaseModel):
    """A command that undoes one plan step."""

    model_config = _STRICT

    id: str
    """Referenced by a step's ``rollback_id``."""
    description: str
    """What this undoes."""
    command: str
    """The command that restores the previous state."""


class VerifyCommand(BaseModel):
    """A read-only command the plan's author wants run after every step succeeded: a
    non-zero exit means the plan did not do what it should (it is rolled back)."""

    model_config = _STRICT

    id: str
    """Unique id among checks, steps, rollback steps and verify commands."""
    description: str
    """What it proves, for the person."""
    command: str
    """A read-only command (INFO by Anna's own assessment); it runs confined, like a check."""


class DetectionResults(BaseModel):
    """What the model concluded about the desktop environment."""

    model_config = _STRICT

    de: str | None = None
    """Desktop environment, e.g. ``gnome``, or null."""
    wm: str | None = None
    """Window manager or compositor, e.g. ``hyprland``, or null."""
    wallpaper_backends: list[str] = Field(default_factory=list)
    """Wallpaper backends found, e.g. ``["hyprpaper"]``."""
    display_protocol: Literal["wayland", "x11"] | None = None
    """``wayland``, ``x11`` or null when unknown."""


class PlanMeta(BaseModel):
    """Metadata about how the plan was produced."""

    model_config = _STRICT

    detection_results: DetectionResults = Field(default_factory=DetectionResults)
    """The environment the plan was made for."""
    template_used: str | None = None
    """Identifier of the offline template that produced the plan, or null."""
    llm_version: str = LLM_VERSION
    """Contract version; ``anna_runtime_v3``."""


class ActionPlan(BaseModel):
    """An ActionPlan v3: the whole reply the model must give."""

    model_config = _STRICT

    analysis: str
    """High-level reasoning from the telemetry."""
    goals: list[str]
    """User-visible goals; the first is the plan's title."""
    necessary_checks: list[NecessaryCheck]
    """Read-only checks to run before the plan (may be empty)."""
    command_plan: list[CommandStep]
    """The steps, in order (may be empty for a pure answer)."""
    rollback_plan: list[RollbackStep]
    """Commands that undo steps, referenced by ``rollback_id``."""
    notes_for_user: str
    """Plain-language explanation for the person."""
    meta: PlanMeta
    """Detection results, template id, contract version."""
    verify_commands: SkipJsonSchema[list[VerifyCommand]] = Field(default_factory=list)
    """Optional read-only commands run after the plan (see :class:`VerifyCommand`). Not in
    the model-facing schema yet (:data:`PLAN_ONLY_FIELDS`); plans from templates and files
    may carry them. Left out of the canonical JSON when empty, so plans without them keep
    the digest they always had."""
    memory_patch: dict[str, str] = Field(default_factory=dict)
    """Settings the model proposes Anna remember (seed 004); usually empty. Only whitelisted
    keys are ever offered, and only the person's yes applies them; ``""`` proposes forgetting."""

    @model_serializer(mode="wrap")
    def _drop_empty_optional(self, handler: SerializerFunctionWrapHandler) -> Any:
        # empty optional fields are left out, so a plan's JSON and digest are what they were
        # before those fields existed (stored plans and recordings keep verifying)
        data = handler(self)
        if isinstance(data, dict):
            for key in ("verify_commands", "memory_patch"):
                if not data.get(key):
                    data.pop(key, None)
        return data

    def digest(self) -> str:
        """sha256 (hex) of this plan's canonical JSON."""
        return plan_digest(self.model_dump(mode="json"))


# --------------------------------------------------------------------------- canonical JSON


def plan_digest(plan: dict[str, Any] | ActionPlan) -> str:
    """sha256 hex digest of a plan's canonical JSON."""
    data = plan.model_dump(mode="json") if isinstance(plan, ActionPlan) else plan
    return hashlib.sha256(canonical_json(data)).hexdigest()


# --------------------------------------------------------------------------- JSON Schema


def _require_all(node: Any) -> None:
    """Make every property required and drop defaults (strict structured output).

    OpenAI's ``strict: true`` demands that every property is listed in
    ``required``; a grammar-constrained decoder also produces more regular
    output when no field is optional. Nullable fields stay nullable.
    """
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            node["required"] = list(props)
            for prop in props.values():
                if isinstance(prop, dict):
                    prop.pop("default", None)
        for value in node.values():
            _require_all(value)
    elif isinstance(node, list):
        for value in node:
            _require_all(value)


_MEMORY_PATCH_KEYS = 8
"""At most this many entries in a proposed memory_patch (bounded schema only)."""
MODEL_BOUNDS: dict[str, dict[str, int]] = {
    # list property -> maxItems; the validation limit stays MAX_LIST_ENTRIES
    "maxItems": {"goals": 4, "necessary_checks": 5, "command_plan": 10, "rollback_plan": 10,
                 "wallpaper_backends": 6},
    # string property -> maxLength. Prose and ids only: a command is never cut short by the
    # grammar (a truncated command could mean something else), it is capped at the contract
    # limit, which validation enforces anyway.
    "maxLength": {"analysis": 800, "notes_for_user": 1200, "description": 200, "id": 64,
                  "rollback_id": 64, "de": 40, "wm": 40, "template_used": 64,
                  "command": MAX_COMMAND_BYTES},
}
"""Bounds the model-facing schema adds so a grammar-constrained decoder must close its reply.

Measured with Gemma 3 270M under llama.cpp: without bounds the small model repeats list items
until the token cap and never closes the JSON. The bounds are tighter than the validation
limits on purpose; a server that rejects these keywords is retried without them."""
_GOAL_ITEM_CHARS = 160


def _bound(node: Any) -> None:
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            for name, prop in props.items():
                if not isinstance(prop, dict):
                    continue
                if name in MODEL_BOUNDS["maxItems"] and prop.get("type") == "array":
                    prop["maxItems"] = MODEL_BOUNDS["maxItems"][name]
                    if name == "goals" and isinstance(prop.get("items"), dict):
                        prop["items"]["maxLength"] = _GOAL_ITEM_CHARS
                if name in MODEL_BOUNDS["maxLength"]:
                    for variant in [prop, *prop.get("anyOf", [])]:
                        if isinstance(variant, dict) and variant.get("type") == "string":
                            variant["maxLength"] = MODEL_BOUNDS["maxLength"][name]
                if name == "memory_patch" and prop.get("type") == "object":
                    prop["maxProperties"] = _MEMORY_PATCH_KEYS
                if name == "llm_version" and prop.get("type") == "string":
                    prop["enum"] = [LLM_VERSION]
        for value in node.values():
            _bound(value)
    elif isinstance(node, list):
        for value in node:
            _bound(value)


@cache
def _schema_text(bounded: bool) -> str:
    schema = ActionPlan.model_json_schema(mode="validation")
    _require_all(schema)
    if bounded:
        _bound(schema)
    # key order is kept as declared: a grammar-constrained decoder emits properties in this
    # order, and "analysis, goals, checks, steps" is the order a plan is reasoned in
    return json.dumps(schema)


def model_json_schema(*, bounded: bool = True) -> dict[str, Any]:
    """The ActionPlan JSON Schema sent to the model, generated from these models.

    ``bounded`` adds :data:`MODEL_BOUNDS` (maxItems/maxLength) for grammar-constrained servers.
    """
    result: dict[str, Any] = json.loads(_schema_text(bounded))
    return result


def without_bounds(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` without maxItems/maxLength/enum-on-version (for strict servers
    that reject those keywords)."""
    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items()
                    if k not in ("maxItems", "maxLength", "maxProperties")
                    and not (k == "enum" and v == [LLM_VERSION])}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    result: dict[str, Any] = strip(schema)
    return result


def schema_sha256() -> str:
    """sha256 of the canonical schema text; part of cache keys and traces."""
    return hashlib.sha256(canonical_json(model_json_schema())).hexdigest()
