"""OpenAI-compatible adapter: ``POST {url}/chat/completions`` (llama.cpp, LM Studio, vLLM, ...).

Structured output is asked for with ``response_format: {type: "json_schema",
json_schema: {name, schema, strict: true}}``, in up to three schema forms, strongest first:
the request's ``strict_schema`` (per-position ids), its ``schema`` (bounded), and the schema
without bounds. Not every server accepts every form. A 4xx that complains about the *schema*
(llama-server's "JSON schema conversion failed", a keyword it lacks) steps to the previous
schema form; only a rejection of the ``json_schema`` *type* itself falls back to
``{"type": "json_object"}``, and then to no response format at all (the system prompt still
demands JSON). Each fallback is a ``LLM_RESPONSE_FORMAT_FALLBACK`` trace event and is
remembered for the rest of the session, so the rejected form is not sent again.

Thinking is turned off with the controls OpenAI-compatible servers understand:
``chat_template_kwargs: {"enable_thinking": false}`` (llama.cpp, vLLM, SGLang chat templates
such as Qwen 3's) and ``reasoning_effort: "low"`` (reasoning models that cannot switch it
off). A strict server that rejects an unknown field gets the same capability fallback: a 4xx
naming the field drops it for the session (``LLM_OPTION_FALLBACK`` event) and the request is
sent again without it.

``finish_reason: "length"`` marks a reply cut off at the token limit; the
planner treats it as a failed reply. ``usage`` and llama.cpp's ``timings``
(the server's own milliseconds) are read into the :class:`ChatResult`.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from anna_common.errors import ErrorCode, LLMError
from anna_common.plan import without_bounds
from annactl.planning.llm.base import (
    ChatRequest,
    ChatResult,
    EventSink,
    TextCallback,
    TokenCallback,
    no_events,
)
from annactl.planning.llm.errors import check_cancel, llm_error
from annactl.planning.llm.http import UNAVAILABLE_STATUSES, HttpProvider, parse_json_line

if TYPE_CHECKING:
    from annactl.core.config import ClientSettings
    from annactl.planning.llm.transport import Response

CHAT = "/chat/completions"
FORMATS = ("json_schema_strict", "json_schema", "json_schema_unbounded", "json_object", "none")
"""Structured-output forms, most to least constrained."""
_SCHEMA_FORMS = 3
"""The first three forms send a JSON Schema; the next is json_object."""
THINKING_OFF: dict[str, Any] = {"chat_template_kwargs": {"enable_thinking": False},
                                "reasoning_effort": "low"}
"""Optional request fields that turn thinking off (or down); each dropped when rejected."""
SCHEMA_NAME = "ActionPlan"
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "grammar")


class OpenAIProvider(HttpProvider):
    """Talks to any server that speaks the OpenAI chat completions API."""

    name = "openai"

    def __init__(self, settings: ClientSettings, **kwargs: Any) -> None:
        super().__init__(settings, **kwargs)
        self.format_level = 0
        """Index into :data:`FORMATS`: the strongest form this server may still accept."""
        self.dropped: set[str] = set()
        """Fields of :data:`THINKING_OFF` this server rejected (not sent again)."""
        from annactl.planning.llm.busy import BusyProbe

        self.busy = BusyProbe(self.url)
        """Looks at llama.cpp's ``/slots`` before each request (issue 39.8)."""

    def body(self, request: ChatRequest, fmt: str, *, stream: bool) -> dict[str, Any]:
        """The request body for structured-output form ``fmt``."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in request.messages],
            "temperature": request.options.get("temperature", 0),
            "max_tokens": request.options.get("max_tokens", 2048),
            "stream": stream,
        }
        if stream:
            body["stream_options"] = {"include_usage": True}
        body.update({k: v for k, v in THINKING_OFF.items() if k not in self.dropped})
        if request.schema is not None and fmt.startswith("json_schema"):
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": SCHEMA_NAME, "schema": _schema(request, fmt), "strict": True}}
        elif request.schema is not None and fmt == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def chat(self, request: ChatRequest, *, on_tokens: TokenCallback | None = None,
             cancel: threading.Event | None = None, events: EventSink = no_events,
             on_text: TextCallback | None = None) -> ChatResult:
        """Send one request, falling back to weaker response formats when rejected; a
        streamed reply's pieces go to ``on_text`` as they come."""
        stream = on_tokens is not None or on_text is not None
        self.begin(request.deadline, request.options)
        self.busy.wait_free(self._client, left=self.left(), cancel=cancel, events=events)
        failed_level = -1  # a 5xx at temperature 0: the next try uses a weaker schema form
        while True:
            fmt = self._format(request, after=failed_level)
            started = time.monotonic()

            def read(response: Response, started: float = started) -> ChatResult:
                if stream:
                    return self._read_stream(response, started, on_tokens, cancel, events,
                                             on_text)
                response.read()
                return self._read_whole(response)

            try:
                result = self.post(CHAT, self.body(request, fmt, stream=stream), read,
                                   cancel=cancel, events=events)
            except LLMError as exc:
                if exc.code == ErrorCode.LLM_TIMEOUT and not exc.detail.get("busy"):
                    self.busy.abandoned = time.monotonic()  # the server may still work on it
                if self._server_failed(exc, fmt, events):
                    failed_level = FORMATS.index(fmt)
                    continue
                self._fall_back(exc, fmt, events)
                continue
            result.response_format = fmt
            result.latency_s = time.monotonic() - started
            return result

    def _format(self, request: ChatRequest, *, after: int = -1) -> str:
        """The form to send: the session's level, skipping the strict form a request lacks,
        and weaker than ``after`` (the form a 5xx answered this request in)."""
        if request.schema is None:
            return "none"
        level = max(self.format_level, after + 1)
        if level == 0 and request.strict_schema is None:
            level = 1
        return FORMATS[level]

    def _server_failed(self, exc: LLMError, fmt: str, events: EventSink) -> bool:
        """A 5xx the adapter did not resend (temperature 0): try this request once more in
        the next weaker *schema* form (measured: llama-server answered 500 "does not match
        the expected peg-native format" under a grammar), never the same bytes again. Only
        for this request: a 5xx says nothing about what the server accepts."""
        status = exc.detail.get("status")
        if (not isinstance(status, int) or status < 500 or self.retry_5xx
                or status in UNAVAILABLE_STATUSES):
            return False
        level = FORMATS.index(fmt) + 1
        if level >= _SCHEMA_FORMS:
            return False
        events("LLM_SERVER_ERROR_CHANGED", status=status, rejected=fmt, next=FORMATS[level])
        return True

    def _fall_back(self, exc: LLMError, fmt: str, events: EventSink) -> None:
        """Remember what the server rejected, or re-raise when nothing is left to drop.

        Every path either grows :attr:`dropped` or raises :attr:`format_level`, so the
        retry loop in :meth:`chat` ends.
        """
        field = _field_rejected(exc, set(THINKING_OFF) - self.dropped)
        if field is not None:
            self.dropped.add(field)
            events("LLM_OPTION_FALLBACK", dropped=field, status=exc.detail.get("status"),
                   server=str(exc.detail.get("server", ""))[:200])
            return
        if fmt == "none" or not _format_rejected(exc):
            raise exc
        level = FORMATS.index(fmt) + 1
        if level < _SCHEMA_FORMS and _type_rejected(exc):
            level = _SCHEMA_FORMS  # the json_schema type itself is refused, not one schema
        self.format_level = level
        events("LLM_RESPONSE_FORMAT_FALLBACK", rejected=fmt, next=FORMATS[level],
               status=exc.detail.get("status"), server=str(exc.detail.get("server", ""))[:200])

    def _read_whole(self, response: Response) -> ChatResult:
        body = parse_json_line(response.text)
        if not isinstance(body, dict) or not isinstance(body.get("choices"), list):
            raise self.bad_stream("no choices in the reply")
        if not body["choices"]:
            raise self.bad_stream("an empty choices list")
        choice = body["choices"][0] if isinstance(body["choices"][0], dict) else {}
        message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
        content = message.get("content") if isinstance(message, dict) else None
        result = ChatResult(text=content if isinstance(content, str) else "",
                            model=str(body.get("model") or self.model),
                            finish_reason=_str(choice.get("finish_reason")))
        _usage(result, body)
        return result

    def _read_stream(self, response: Response, started: float,
                     on_tokens: TokenCallback | None, cancel: threading.Event | None,
                     events: EventSink, on_text: TextCallback | None) -> ChatResult:
        result = ChatResult(text="", model=self.model)
        parts: list[str] = []
        chunks = 0
        for line in response.iter_lines():
            check_cancel(cancel)
            self.deadline_check(started, events, CHAT)
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            obj = parse_json_line(data)
            if not isinstance(obj, dict):
                raise self.bad_stream("an event that is not a JSON object")
            if "error" in obj:
                raise llm_error(ErrorCode.LLM_HTTP_ERROR, "the server failed mid-reply: "
                                f"{str(obj['error'])[:200]}", "see the server's log")
            result.model = str(obj.get("model") or result.model)
            for choice in obj.get("choices") or []:
                delta = choice.get("delta") if isinstance(choice, dict) else None
                if isinstance(delta, dict) and isinstance(delta.get("content"), str):
                    parts.append(delta["content"])
                    if on_text is not None and delta["content"]:
                        on_text(delta["content"])
                    chunks += 1
                    if on_tokens is not None:
                        on_tokens(chunks)
                if isinstance(choice, dict) and choice.get("finish_reason"):
                    result.finish_reason = _str(choice["finish_reason"])
            _usage(result, obj)
        result.text = "".join(parts)
        if result.completion_tokens == 0:
            result.completion_tokens = chunks
        return result


def _format_rejected(exc: LLMError) -> bool:
    """A 4xx that complains about the response format (not auth, not a missing model)."""
    status = exc.detail.get("status")
    if exc.code != ErrorCode.LLM_HTTP_ERROR or not isinstance(status, int):
        return False
    if not 400 <= status < 500 or status in (401, 403, 404, 429):
        return False
    text = str(exc.detail.get("server", "")).lower()
    return any(word in text for word in _FORMAT_WORDS)


_SCHEMA_WORDS = ("maxitems", "maxlength", "max_items", "max_length", "keyword", "enum",
                 "prefixitems", "const", "conversion", "invalid schema", "schema conversion",
                 "unsupported schema", "grammar")
"""Words of a rejection aimed at the schema's content: the previous schema form may pass."""


def _type_rejected(exc: LLMError) -> bool:
    """The rejection is about the ``json_schema`` type, not the schema sent in it."""
    text = str(exc.detail.get("server", "")).lower()
    return not any(word in text for word in _SCHEMA_WORDS)


def _field_rejected(exc: LLMError, candidates: set[str]) -> str | None:
    """The optional field a 4xx names (a strict server refusing an unknown field)."""
    status = exc.detail.get("status")
    if exc.code != ErrorCode.LLM_HTTP_ERROR or not isinstance(status, int) or \
            not 400 <= status < 500 or status in (401, 403, 404, 429):
        return None
    text = str(exc.detail.get("server", ""))
    for name in sorted(candidates):
        if name in text:
            return name
    return None


def _schema(request: ChatRequest, fmt: str) -> dict[str, Any]:
    """The JSON Schema sent for form ``fmt``."""
    assert request.schema is not None
    if fmt == "json_schema_strict" and request.strict_schema is not None:
        return request.strict_schema
    if fmt == "json_schema_unbounded":
        return without_bounds(request.schema)  # some strict servers reject maxItems/maxLength
    return request.schema


def _usage(result: ChatResult, body: dict[str, Any]) -> None:
    usage = body.get("usage")
    if isinstance(usage, dict):
        result.prompt_tokens = _int(usage.get("prompt_tokens")) or result.prompt_tokens
        result.completion_tokens = (_int(usage.get("completion_tokens"))
                                    or result.completion_tokens)
        details = usage.get("prompt_tokens_details")
        if isinstance(details, dict):
            # a later usage chunk without the figure must not erase the one read from timings
            result.cached_tokens = _int(details.get("cached_tokens")) or result.cached_tokens
    timings = body.get("timings")
    if isinstance(timings, dict):
        prompt_ms = timings.get("prompt_ms")
        predicted_ms = timings.get("predicted_ms")
        if isinstance(prompt_ms, int | float) and isinstance(predicted_ms, int | float):
            result.server_ms = float(prompt_ms) + float(predicted_ms)
        cache_n = timings.get("cache_n")
        if isinstance(cache_n, int) and not result.cached_tokens:
            result.cached_tokens = cache_n


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) else 0


def _str(value: object) -> str | None:
    return str(value) if value is not None else None
