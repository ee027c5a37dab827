"""What one model request carries (the schema forms) and what a reply still invalid after its
repair becomes (the final error code).

Split from :mod:`annactl.planning.planner_run`, which drives the request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.errors import ErrorCode
from anna_common.findings import FindingCode
from anna_common.plan import model_json_schema, schema_sha256
from anna_common.positional import positional_schema
from annactl.planning import prompt
from annactl.planning.llm.base import ChatRequest
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


def chat_request(settings: ClientSettings, messages: list[dict[str, str]],
                 purpose: str) -> ChatRequest:
    """The request for ``messages``: the bounded schema, and the positional form (compact
    when configured) the decoder tries first (anna_common/positional.py)."""
    prompts = prompt.prompts()
    positional = settings.llm_ids == "positional"
    compact = positional and settings.llm_compact
    form = ("+positional" if positional else "") + ("+compact" if compact else "")
    strict = positional_schema(memory_keys=MEMORY_KEYS, compact=compact)
    return ChatRequest(messages=tuple(dict(m) for m in messages),
                       schema=model_json_schema(),
                       schema_sha=schema_sha256() + form,
                       strict_schema=strict if positional else None,
                       prompt_version=prompts.version, prompt_sha=prompts.sha256,
                       purpose=purpose)
