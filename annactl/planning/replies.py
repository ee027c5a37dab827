"""What one model request carries (the schema forms) and what a reply still invalid after its
repair becomes (the final error code).

Split from :mod:`annactl.planning.planner_run`, which drives the request.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from anna_common.errors import ErrorCode
from anna_common.findings import FindingCode
from anna_common.plan import canonical_json, model_json_schema, schema_sha256
from annactl.planning import prompt
from annactl.planning.forms import SMALL_FORMS
from annactl.planning.forms import schema as form_schema
from annactl.planning.llm.base import DEFAULT_OPTIONS, ChatRequest
from annactl.planning.memory import WHITELIST

if TYPE_CHECKING:
    from annactl.core.config import ClientSettings

GROUNDING_FAILURES = {
    FindingCode.LLM_ECHOED_EXAMPLE: (
        ErrorCode.LLM_ECHOED_EXAMPLE,
        "the model copied the prompt's example instead of planning your request, even after "
        "one repair"),
    FindingCode.LLM_OFF_REQUEST: (
        ErrorCode.LLM_OFF_REQUEST,
        "the model did not address your request, even after one repair"),
}
"""Final errors when only grounding findings remain (echo first: a copy is never on topic)."""

MEMORY_KEYS = tuple(sorted(WHITELIST))
"""The keys a proposed ``memory_patch`` may hold in the decoder's schema (the whitelist)."""


def failure(codes: list[str]) -> tuple[ErrorCode, str]:
    """The error code and message for a reply still invalid after its repair."""
    grounding = {str(c) for c in GROUNDING_FAILURES}
    if codes and set(codes) <= grounding:
        for finding, (code, message) in GROUNDING_FAILURES.items():
            if str(finding) in codes:
                return code, message
    return ErrorCode.LLM_BAD_REPLY, (f"the model's reply was not a valid plan, even after one "
                                     f"repair ({', '.join(codes)})")


SMALL_MAX_TOKENS = {"answer": 512, "package": 96, "service": 96, "wallpaper": 128}
"""Output token caps of the small forms: what their schema can hold, with room to spare (a
reply is never cut inside what the schema allows; a runaway ends sooner)."""


def chat_request(settings: ClientSettings, messages: list[dict[str, str]],
                 purpose: str, *, form: str = "plan", compact: bool = False,
                 deadline: float | None = None) -> ChatRequest:
    """The request for ``messages`` in request form ``form`` (:mod:`annactl.planning.forms`).

    The full plan: the bounded schema, and the positional form (compact when configured,
    or when ``compact`` asks for it after a reply was cut at the cap) the decoder tries
    first (anna_common/positional.py). A small form: its own small schema only."""
    prompts = prompt.prompts()
    if form in SMALL_FORMS:
        small = form_schema(form)
        options = {**DEFAULT_OPTIONS, "max_tokens": SMALL_MAX_TOKENS[form]}
        return ChatRequest(messages=tuple(dict(m) for m in messages), schema=small,
                           schema_sha=hashlib.sha256(canonical_json(small)).hexdigest()
                           + f"+{form}", prompt_version=prompts.version,
                           prompt_sha=prompts.sha256, purpose=purpose, options=options,
                           deadline=deadline, form=form)
    positional = settings.llm_ids == "positional"
    compact = positional and (settings.llm_compact or compact)
    tag = ("+positional" if positional else "") + ("+compact" if compact else "")
    # imported here: only a model request needs it, not the offline answer (issue 23.7)
    from anna_common.positional import positional_schema

    strict = positional_schema(memory_keys=MEMORY_KEYS, compact=compact)
    return ChatRequest(messages=tuple(dict(m) for m in messages),
                       schema=model_json_schema(),
                       schema_sha=schema_sha256() + tag,
                       strict_schema=strict if positional else None,
                       prompt_version=prompts.version, prompt_sha=prompts.sha256,
                       purpose=purpose, deadline=deadline,
                       form="plan+compact" if compact else "plan")
