"""Ollama adapter: ``POST /api/chat`` with the plan's JSON Schema as ``format``.

The request streams (NDJSON, one object per token or so) so progress can be
shown, sets ``options.temperature`` 0 and a context large enough for the
system prompt, keeps the model loaded (``keep_alive``) and, for models whose
``/api/show`` lists the ``thinking`` capability, sends ``think: false`` so no
``<think>`` block precedes the JSON.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from anna_common.errors import ErrorCode, LLMError
from annactl.planning.llm.base import (
    ChatRequest,
    ChatResult,
    EventSink,
    TextCallback,
    TokenCallback,
    no_events,
)
from annactl.planning.llm.errors import check_cancel, llm_error
from annactl.planning.llm.http import HttpProvider, parse_json_line

if TYPE_CHECKING:
    from annactl.core.config import ClientSettings
    from annactl.planning.llm.transport import Response

CHAT = "/api/chat"
SHOW = "/api/show"


class OllamaProvider(HttpProvider):
    """Talks to an Ollama server."""

    name = "ollama"

    def __init__(self, settings: ClientSettings, **kwargs: Any) -> None:
        super().__init__(settings, **kwargs)
        self.keep_alive = settings.llm_keep_alive
        self._capabilities: frozenset[str] | None = None
        self.strict_ok = True
        """False once the server failed to convert a request's ``strict_schema``."""

    def model_not_found(self, text: str) -> LLMError:
        """Ollama names the fix: pull the model."""
        return llm_error(ErrorCode.LLM_MODEL_NOT_FOUND,
                         f"the model {self.model!r} is not on the Ollama server at "
                         f"{self.where}", f"run `ollama pull {self.model}` or set ANNA_LLM_MODEL",
                         server=text)

    def capabilities(self, *, cancel: threading.Event | None = None,
                     events: EventSink = no_events) -> frozenset[str]:
        """The model's capabilities from ``/api/show`` (asked once per provider)."""
        if self._capabilities is None:
            def read(response: Response) -> frozenset[str]:
                response.read()
                body = parse_json_line(response.text)
                caps = body.get("capabilities") if isinstance(body, dict) else None
                # Older servers do not report capabilities: then we cannot know the model
                # thinks, and sending ``think`` to them would be an error.
                return frozenset(str(c) for c in caps) if isinstance(caps, list) else frozenset()
            try:
                self._capabilities = self.post(SHOW, {"model": self.model}, read, cancel=cancel,
                                               events=events)
            except LLMError as exc:
                if exc.code == ErrorCode.LLM_HTTP_ERROR and exc.detail.get("status") == 404:
                    raise self.model_not_found(exc.message) from None
                raise
        return self._capabilities

    def body(self, request: ChatRequest, *, think_capable: bool) -> dict[str, Any]:
        """The ``/api/chat`` request body."""
        options = request.options
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in request.messages],
            "stream": True,
            "options": {"temperature": options.get("temperature", 0),
                        "num_ctx": options.get("num_ctx", 8192),
                        "num_predict": options.get("max_tokens", 2048)},
            "keep_alive": self.keep_alive,
        }
        if request.schema is not None:
            strict = request.strict_schema if self.strict_ok else None
            body["format"] = strict if strict is not None else request.schema
        if think_capable:
            body["think"] = False
        return body

    def chat(self, request: ChatRequest, *, on_tokens: TokenCallback | None = None,
             cancel: threading.Event | None = None, events: EventSink = no_events,
             on_text: TextCallback | None = None) -> ChatResult:
        """Send one chat request and gather the streamed reply (each piece to ``on_text``)."""
        self.begin(request.deadline, request.options)
        caps = self.capabilities(cancel=cancel, events=events)
        body = self.body(request, think_capable="thinking" in caps)
        started = time.monotonic()

        def read(response: Response) -> ChatResult:
            return self._read_stream(response, started, on_tokens, cancel, events, on_text)

        try:
            result = self.post(CHAT, body, read, cancel=cancel, events=events)
        except LLMError as exc:
            if not self._strict_rejected(request, exc):
                raise
            # the previous schema form, for the rest of the session (never no format)
            self.strict_ok = False
            events("LLM_RESPONSE_FORMAT_FALLBACK", rejected="ollama_schema_strict",
                   next="ollama_schema", status=exc.detail.get("status"),
                   server=str(exc.detail.get("server", ""))[:200])
            return self.chat(request, on_tokens=on_tokens, cancel=cancel, events=events,
                             on_text=on_text)
        strict = self.strict_ok and request.strict_schema is not None
        result.response_format = ("none" if request.schema is None else
                                  "ollama_schema_strict" if strict else "ollama_schema")
        result.latency_s = time.monotonic() - started
        return result

    def _strict_rejected(self, request: ChatRequest, exc: LLMError) -> bool:
        """The server could not turn the strict schema into a grammar."""
        if not self.strict_ok or request.strict_schema is None or request.schema is None:
            return False
        text = str(exc.detail.get("server", exc.message)).lower()
        return exc.code == ErrorCode.LLM_HTTP_ERROR and any(
            word in text for word in ("schema", "grammar", "format"))

    def _read_stream(self, response: Response, started: float,
                     on_tokens: TokenCallback | None, cancel: threading.Event | None,
                     events: EventSink, on_text: TextCallback | None) -> ChatResult:
        parts: list[str] = []
        chunks = 0
        for line in response.iter_lines():
            check_cancel(cancel)
            self.deadline_check(started, events, CHAT)
            if not line.strip():
                continue
            obj = parse_json_line(line)
            if not isinstance(obj, dict):
                raise self.bad_stream("a line that is not a JSON object")
            if "error" in obj:
                text = str(obj["error"])
                if "not found" in text.lower():
                    raise self.model_not_found(text)
                raise llm_error(ErrorCode.LLM_HTTP_ERROR, f"the Ollama server failed: "
                                f"{text[:200]}", "see the Ollama server's log")
            message = obj.get("message")
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                parts.append(message["content"])
                if on_text is not None and message["content"]:
                    on_text(message["content"])
            chunks += 1
            if on_tokens is not None and not obj.get("done"):
                on_tokens(chunks)
            if obj.get("done"):
                return self._final(obj, "".join(parts))
        raise llm_error(ErrorCode.LLM_UNAVAILABLE, "the Ollama stream ended before the reply "
                        "was complete", "the server may have restarted; try again")

    def _final(self, obj: dict[str, Any], text: str) -> ChatResult:
        total_ns = obj.get("total_duration")
        return ChatResult(
            text=text,
            model=str(obj.get("model") or self.model),
            finish_reason=str(obj.get("done_reason") or "stop"),
            prompt_tokens=_int(obj.get("prompt_eval_count")),
            completion_tokens=_int(obj.get("eval_count")),
            server_ms=total_ns / 1e6 if isinstance(total_ns, int | float) else None,
        )


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) else 0
