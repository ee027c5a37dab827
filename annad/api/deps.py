"""What routes read from a request beyond their body: the caller's session header."""

from __future__ import annotations

from pydantic import ValidationError

from anna_common.errors import AnnaError, ErrorCode
from anna_common.protocol.models import SESSION_HEADER, SessionEnv
from annad.api.routing import Call

MAX_SESSION_HEADER = 8192
"""Longest X-Anna-Session header accepted."""


def session(call: Call) -> SessionEnv | None:
    """The caller's session environment from the ``X-Anna-Session`` header (JSON)."""
    raw = call.request.headers.get(SESSION_HEADER)
    if raw is None or not raw.strip():
        return None
    if len(raw) > MAX_SESSION_HEADER:
        raise AnnaError(f"{SESSION_HEADER} is too long", code=ErrorCode.BAD_REQUEST)
    try:
        return SessionEnv.model_validate_json(raw)
    except ValidationError as exc:
        raise AnnaError(f"{SESSION_HEADER} is not a session object", code=ErrorCode.BAD_REQUEST,
                        detail={"errors": [str(e.get("msg", ""))[:200]
                                           for e in exc.errors()[:10]]}) from None
