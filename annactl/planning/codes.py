"""The one table: every way a model exchange can fail → its stable error code.

Seed 003 names ``PROMPT_JSON_INVALID``, ``PROMPT_SCHEMA_INVALID``,
``PROMPT_SEGMENT_EMPTY``, ``LLM_TIMEOUT``, ``SCOPE_VIOLATION`` and
``VERSION_CONFLICT``; Anna uses them where they apply and keeps its own
``LLM_*`` codes for the rest (``XML_PARSE_ERROR`` does not apply: Anna's
replies are JSON, whose parse failure is ``LLM_BAD_REPLY`` after one repair).
``docs/planning.md`` prints this table; a test keeps the two and
:class:`~anna_common.errors.ErrorCode` in step.
"""

from __future__ import annotations

from dataclasses import dataclass

from anna_common.errors import ErrorCode


@dataclass(frozen=True)
class ExchangeFailure:
    """One row of the table."""

    stage: str
    """``start``, ``request``, ``reply``, ``budget`` or ``memory``."""
    failure: str
    """What went wrong, in words."""
    code: ErrorCode
    """The code the error carries."""
    seed: bool
    """True when the code is one of seed 003's own."""


EXCHANGE_FAILURES: tuple[ExchangeFailure, ...] = (
    ExchangeFailure("start", "prompt registry is not valid JSON", ErrorCode.PROMPT_JSON_INVALID,
                    True),
    ExchangeFailure("start", "prompt registry lacks a field or a prompt file is missing",
                    ErrorCode.PROMPT_SCHEMA_INVALID, True),
    ExchangeFailure("start", "a prompt file is empty", ErrorCode.PROMPT_SEGMENT_EMPTY, True),
    ExchangeFailure("start", "a prompt file does not match its registered sha256",
                    ErrorCode.PROMPT_HASH_MISMATCH, False),
    ExchangeFailure("request", "model server unreachable after retries",
                    ErrorCode.LLM_UNAVAILABLE, False),
    ExchangeFailure("request", "no (complete) answer within the timeout", ErrorCode.LLM_TIMEOUT,
                    True),
    ExchangeFailure("request", "HTTP error status or a reply outside the API",
                    ErrorCode.LLM_HTTP_ERROR, False),
    ExchangeFailure("request", "the configured model is not on the server",
                    ErrorCode.LLM_MODEL_NOT_FOUND, False),
    ExchangeFailure("request", "replay mode has no recorded reply", ErrorCode.LLM_REPLAY_MISS,
                    False),
    ExchangeFailure("request", "the person pressed Ctrl-C while the model worked",
                    ErrorCode.CANCELLED, False),
    ExchangeFailure("reply", "not JSON / not the schema / cut off, even after one repair",
                    ErrorCode.LLM_BAD_REPLY, False),
    ExchangeFailure("reply", "copied the prompt's example, even after one repair",
                    ErrorCode.LLM_ECHOED_EXAMPLE, False),
    ExchangeFailure("reply", "does not address the request, even after one repair",
                    ErrorCode.LLM_OFF_REQUEST, False),
    ExchangeFailure("reply", "the plan contains a hard-banned command", ErrorCode.PLAN_BANNED,
                    False),
    ExchangeFailure("reply", "the evaluation of a finished plan is not valid (Anna's own "
                    "summary is shown instead)", ErrorCode.LLM_BAD_EVALUATION, False),
    ExchangeFailure("budget", "calls, prompt bytes or model per request; calls or tokens per "
                    "session", ErrorCode.LLM_BUDGET_EXCEEDED, False),
    ExchangeFailure("memory", "memory_patch names a key outside the whitelist (dropped, "
                    "reported)", ErrorCode.SCOPE_VIOLATION, True),
    ExchangeFailure("memory", "the memory changed between proposal and the person's yes",
                    ErrorCode.VERSION_CONFLICT, True),
)
"""Every model-exchange failure, in the order an exchange meets them."""


def code_of(failure: str) -> ErrorCode:
    """The code for a failure described exactly as in the table (KeyError otherwise)."""
    for row in EXCHANGE_FAILURES:
        if row.failure == failure:
            return row.code
    raise KeyError(failure)
