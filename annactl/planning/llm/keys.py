"""The cache key of a model request: what decides the reply, in canonical JSON, hashed.

Shared by the response cache and the replay provider (its own module so neither imports the
other)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from anna_common.plan import canonical_json

if TYPE_CHECKING:
    from annactl.planning.llm.base import ChatRequest


def canonical_request(provider: str, model: str, request: ChatRequest) -> dict[str, Any]:
    """What the cache key covers (``purpose`` is left out: it does not change the reply)."""
    return {
        "provider": provider,
        "model": model,
        "messages": [dict(m) for m in request.messages],
        "schema_sha": request.schema_sha,
        "prompt_version": request.prompt_version,
        "prompt_sha": request.prompt_sha,
        "options": dict(request.options),
    }


def request_key(provider: str, model: str, request: ChatRequest) -> str:
    """sha256 (hex) of the canonical request."""
    return hashlib.sha256(canonical_json(canonical_request(provider, model, request))).hexdigest()
