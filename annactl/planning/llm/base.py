"""The provider interface: one chat call in, one :class:`ChatResult` out, errors coded.

A provider turns a :class:`ChatRequest` (messages, the JSON Schema the reply
must follow, deterministic options) into the model's text. Adapters exist for
Ollama (:mod:`annactl.planning.llm.ollama`) and OpenAI-compatible servers
(:mod:`annactl.planning.llm.openai_compat`); :mod:`annactl.planning.llm.cache` and
:mod:`annactl.planning.llm.replay` wrap or replace them without the planner noticing.

Every failure is an :class:`~anna_common.errors.LLMError` carrying one of the
``LLM_*`` codes and a one-line hint (:mod:`annactl.planning.llm.errors`). Nothing here
imports the HTTP transport, so importing the interface stays cheap.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

TokenCallback = Callable[[int], None]
"""Called with the number of tokens received so far while a reply streams in."""

TextCallback = Callable[[str], None]
"""Called with each piece of the reply's text as it streams in (untrusted text: whoever
shows it makes it inert, :mod:`annactl.ui.streamed`)."""

EventSink = Callable[..., None]
"""``sink(event_name, **fields)``: where providers report trace events (see trace.py)."""

DEFAULT_OPTIONS: dict[str, Any] = {"temperature": 0, "max_tokens": 2048, "num_ctx": 8192}
"""Deterministic generation options. ``num_ctx`` matters for Ollama, whose default context
(2,048 or 4,096 tokens, by version) would silently cut the system prompt."""


def no_events(_event: str, **_fields: Any) -> None:
    """An :data:`EventSink` that drops everything."""


@dataclass(frozen=True)
class ChatRequest:
    """One call to the model."""

    messages: tuple[dict[str, str], ...]
    """``{"role": "system"|"user"|"assistant", "content": ...}`` in order."""
    schema: dict[str, Any] | None
    """The JSON Schema the reply must follow (structured output), or None for free text."""
    schema_sha: str = ""
    """sha256 of the schema; part of cache keys."""
    strict_schema: dict[str, Any] | None = None
    """A stronger form of ``schema`` the decoder can enforce (per-position ids, see
    :func:`anna_common.positional.positional_schema`), tried first. A server that cannot
    convert it falls back to ``schema`` for the rest of the session, never further."""
    prompt_version: str = ""
    """Version of the prompt files that built the messages."""
    prompt_sha: str = ""
    """sha256 of those prompt files."""
    purpose: str = "plan"
    """``plan``, ``repair`` or ``refine``: for traces only, not part of the cache key."""
    options: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_OPTIONS))
    """Generation options (temperature 0, output token cap, context size)."""
    deadline: float | None = None
    """``time.monotonic()`` by which the reply must be complete (the request's time budget,
    see :mod:`annactl.planning.budget`); None: only the configured timeouts. Not part of the
    cache key: it does not change what the model says."""
    form: str = "plan"
    """The model-facing form (:mod:`annactl.planning.forms`): for traces and benches."""

    @property
    def prompt_bytes(self) -> int:
        """UTF-8 size of all message contents."""
        return sum(len(m["content"].encode("utf-8")) for m in self.messages)


@dataclass
class ChatResult:
    """What the model answered, and what it cost."""

    text: str
    """The reply text (untrusted)."""
    model: str
    """The model that answered, as the server named it."""
    finish_reason: str | None = None
    """``stop``, ``length`` (cut off: a failed reply) or what the server said."""
    prompt_tokens: int = 0
    """Tokens in the prompt, when the server reports them."""
    completion_tokens: int = 0
    """Tokens generated."""
    cached_tokens: int = 0
    """Prompt tokens the server reused from its cache."""
    server_ms: float | None = None
    """The server's own processing time (llama.cpp ``timings``, Ollama ``total_duration``)."""
    latency_s: float = 0.0
    """Wall time of the exchange as Anna measured it."""
    response_format: str = "none"
    """Structured-output form used: ``ollama_schema(_strict)``, ``json_schema_strict``,
    ``json_schema``, ``json_schema_unbounded``, ``json_object``,
    ``none``."""
    source: str = "network"
    """``network``, ``cache`` or ``replay``."""

    @property
    def truncated(self) -> bool:
        """The reply hit the token limit; a grammar does not prevent this."""
        return self.finish_reason == "length"

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (cache entries, recordings)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatResult:
        """Rebuild from :meth:`to_dict` output; unknown keys are ignored."""
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        if not isinstance(known.get("text"), str) or not isinstance(known.get("model"), str):
            raise ValueError("a stored result needs text and model")
        return cls(**known)


class Provider(Protocol):
    """A model server adapter. Implementations are not thread-safe; use one per thread."""

    name: str
    """``ollama``, ``openai`` or ``replay``."""
    model: str
    """The model name sent to the server."""

    def chat(
        self,
        request: ChatRequest,
        *,
        on_tokens: TokenCallback | None = None,
        cancel: threading.Event | None = None,
        events: EventSink = no_events,
        on_text: TextCallback | None = None,
    ) -> ChatResult:
        """Send one request; return the reply or raise a coded :class:`LLMError`."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential backoff (connection errors and 5xx only)."""

    attempts: int = 3
    """Total attempts, the first included."""
    base_s: float = 0.1
    """Delay before the second attempt."""
    cap_s: float = 5.0
    """Longest delay."""

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        return float(min(self.base_s * (2**retry), self.cap_s))
