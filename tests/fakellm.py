"""A fake LLM *server* on loopback that speaks the real Ollama and OpenAI HTTP APIs.

Tests point Anna's real providers (real httpx, real sockets) at it instead of
patching a client. It runs in a thread of the test process, or as a
subprocess (``python tests/fakellm.py --content '{...}'`` prints ``PORT n``).

Endpoints
---------
Ollama: ``POST /api/chat`` (NDJSON stream unless ``"stream": false``),
``POST /api/show`` (``capabilities``), ``GET /api/tags``, ``GET /api/version``.
OpenAI: ``POST /v1/chat/completions`` (SSE when ``"stream": true``, with a
final ``usage`` chunk when ``stream_options.include_usage``), ``GET /v1/models``,
``GET /health``. Replies carry ``usage`` and llama.cpp-style ``timings``.
A request for a model the server does not have gets each API's 404 (unless
``any_model``: llama-server answers any name).

Scripting
---------
::

    with FakeLLM(models=("m",)) as llm:
        llm.push(Reply("not json"), Reply(json.dumps(plan)))   # consumed in order
        llm.push(Reply(status=500), Reply(delay=5.0), Reply(drop=True))
        release = threading.Event()
        llm.push(Reply(json.dumps(plan), hold=release))  # answers once release.set()
        llm.push(Reply(text, pause_after=8, resume=release))  # 8 pieces, then waits
        llm.reject_formats = {"json_schema"}   # 400 for that response_format type
        llm.reject_bounds = True               # 400 for a schema using maxItems/maxLength
        llm.reject_schema_words = {"prefixItems"}  # llama-server's "JSON schema conversion failed"
        llm.accepted_fields = STRICT_OPENAI_FIELDS  # 400 for any other top-level field
        llm.cap_tokens = True    # cut a reply at the request's max_tokens: finish "length"
        llm.push(Reply(runaway=True, chunk_delay=0.01))  # a tiny model filling every slot
        settings = load_settings(llm_url=llm.ollama_url, llm_model="m")
        ...
        llm.chat_bodies()        # JSON bodies of the chat requests received, in order
        llm.requests             # every request: Seen(method, path, headers, body)

Both APIs share one reply queue. When it is empty, ``default`` answers (by
default a 500 saying the script ran out, so a test that expects fewer calls
fails loudly). :func:`plan_json` builds a valid ActionPlan reply.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STRICT_OPENAI_FIELDS = frozenset({"model", "messages", "temperature", "max_tokens", "stream",
                                  "stream_options", "response_format"})
"""What a strict OpenAI-style server accepts when it knows no thinking controls."""


@dataclass
class Reply:
    """One scripted answer to a chat request."""

    content: str = ""
    """The assistant's text."""
    status: int = 200
    """HTTP status; anything but 200 sends an error body with ``error``."""
    error: str = "fakellm: scripted failure"
    """Error message for non-200 statuses."""
    delay: float = 0.0
    """Seconds to wait before answering (for timeouts)."""
    chunk_delay: float = 0.0
    """Seconds between streamed chunks."""
    finish_reason: str = "stop"
    """``stop`` or ``length``."""
    drop: bool = False
    """Close the connection without answering (a connection error)."""
    prompt_tokens: int = 100
    """Reported prompt tokens."""
    server_ms: float = 50.0
    """Reported server time, split into prompt and generation ``timings``."""
    hold: threading.Event | None = None
    """When given, the reply waits until the test sets this event (a slow model whose
    slowness the test controls: nothing sleeps)."""
    pause_after: int = 0
    """With ``resume``: stream this many pieces, then wait for ``resume`` before the rest (a
    test sees the first words arrive while the model is still "writing")."""
    resume: threading.Event | None = None
    """Set by the test to let a paused reply go on (see ``pause_after``)."""
    runaway: bool = False
    """Repeat ``content`` (or a filler) without end, like a tiny model filling every list
    slot: only the request's token cap (:attr:`FakeLLM.cap_tokens`) or the client ends it."""


@dataclass
class Seen:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any = None


@dataclass
class _State:
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


def plan_json(**overrides: Any) -> str:
    """A valid ActionPlan (system status style, no steps) as JSON; keys can be overridden."""
    plan: dict[str, Any] = {
        "analysis": "The user wants a status overview.",
        "goals": ["Summarise system health"],
        "necessary_checks": [],
        "command_plan": [],
        "rollback_plan": [],
        "notes_for_user": "All good.",
        "meta": {"detection_results": {"de": None, "wm": None, "wallpaper_backends": [],
                                       "display_protocol": None},
                 "template_used": None, "llm_version": "anna_runtime_v3"},
    }
    plan.update(overrides)
    return json.dumps(plan)


def _pieces(text: str, size: int = 4) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


RUNAWAY_CAP = 4096
"""Tokens a runaway reply stops at when the request names no cap."""


def _capped(reply: Reply, body: dict[str, Any], openai: bool) -> Reply:
    """``reply`` cut at the request's output cap (4 characters a token, as streamed)."""
    given = body.get("options")
    options: dict[str, Any] = given if isinstance(given, dict) else {}
    cap = body.get("max_tokens") if openai else options.get("num_predict")
    limit = int(cap) if isinstance(cap, int) and cap > 0 else RUNAWAY_CAP
    text = reply.content or '{"analysis": "'
    if reply.runaway:
        filler = "the same list entry again, "
        text = text + filler * (limit * 4 // len(filler) + 1)
    if len(text) <= limit * 4:
        return reply
    return dataclasses.replace(reply, content=text[:limit * 4], finish_reason="length",
                               runaway=False)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    # ------------------------------------------------------------------ plumbing
    def _record(self, body: Any) -> None:
        seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        with self.server.state.lock:
            self.server.state.requests.append(seen)

    def _read_json(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return {"_unparsed": raw.decode("utf-8", "replace")}

    def _send_json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.end_headers()  # HTTP/1.0: the body ends when the connection closes

    def _next_reply(self, body: dict[str, Any] | None = None) -> Reply:
        with self.server.state.lock:
            if self.server.state.replies:
                return self.server.state.replies.popleft()
        responder = self.server.fake.responder
        if responder is not None and body is not None:
            return responder(body)
        return self.server.fake.default

    def _wait(self, seconds: float) -> bool:
        """Sleep unless the server is stopping; False when it is."""
        return not (seconds > 0 and self.server.state.stopping.wait(seconds))

    def _held(self, reply: Reply, event: threading.Event | None = None) -> bool:
        """Wait for the reply's ``hold`` event (or ``event``); False when the server stops
        first."""
        stopping = self.server.state.stopping
        event = event or reply.hold
        while event is not None and not event.is_set():
            if stopping.wait(0.02):
                return False
        return True

    def _paused(self, reply: Reply, sent: int) -> bool:
        """After ``pause_after`` pieces, wait for ``resume``; False when the server stops."""
        if reply.resume is None or sent != reply.pause_after:
            return True
        return self._held(reply, reply.resume)

    # ------------------------------------------------------------------ routes
    def do_GET(self) -> None:
        """Model lists and health."""
        self._record(None)
        fake = self.server.fake
        if self.path == "/api/tags":
            self._send_json(200, {"models": [{"name": m, "model": m, "size": 1}
                                             for m in fake.models]})
        elif self.path == "/api/version":
            self._send_json(200, {"version": "0.0.0-fake"})
        elif self.path == "/v1/models":
            self._send_json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "owned_by": "fakellm"} for m in fake.models]})
        elif self.path == "/slots" and fake.slots is not None:
            with self.server.state.lock:
                busy = fake.busy_polls > 0
                fake.busy_polls = max(0, fake.busy_polls - 1)
            self._send_json(200, [{**s, "is_processing": busy or s.get("is_processing", False)}
                                  for s in fake.slots])
        elif self.path == "/health":
            self._send_json(200, {"status": "ok"})
        else:
            self._send_json(404, {"error": f"no route {self.path}"})

    def do_POST(self) -> None:
        """Chat endpoints of both APIs, and Ollama's /api/show."""
        body = self._read_json()
        self._record(body)
        if not isinstance(body, dict):
            self._send_json(400, {"error": "body must be a JSON object"})
            return
        if self.path == "/api/show":
            self._show(body)
        elif self.path == "/api/chat":
            self._chat(body, openai=False)
        elif self.path == "/v1/chat/completions":
            self._chat(body, openai=True)
        else:
            self._send_json(404, {"error": f"no route {self.path}"})

    def _show(self, body: dict[str, Any]) -> None:
        fake = self.server.fake
        if body.get("model") not in fake.models:
            self._send_json(404, {"error": f"model '{body.get('model')}' not found"})
            return
        self._send_json(200, {"modelfile": "", "details": {"family": "fake"},
                              "model_info": {}, "capabilities": list(fake.capabilities)})

    def _error(self, openai: bool, status: int, message: str, code: str | None = None) -> None:
        if openai:
            self._send_json(status, {"error": {"message": message, "type": "invalid_request_error",
                                               "code": code}})
        else:
            self._send_json(status, {"error": message})

    def _chat(self, body: dict[str, Any], *, openai: bool) -> None:
        fake = self.server.fake
        model = str(body.get("model"))
        if model not in fake.models and not (openai and fake.any_model):
            if openai:
                self._error(True, 404, f"The model `{model}` does not exist", "model_not_found")
            else:
                self._error(False, 404, f"model '{model}' not found, try pulling it first")
            return
        fmt = body.get("response_format")
        if openai and isinstance(fmt, dict) and fmt.get("type") in fake.reject_formats:
            self._error(True, 400, f"response_format type {fmt.get('type')!r} is not supported")
            return
        if openai and fake.reject_bounds and isinstance(fmt, dict) and \
                '"maxItems"' in json.dumps(fmt):
            self._error(True, 400, "Invalid schema: keyword 'maxItems' is not supported")
            return
        if openai and self._strict_rejects(body, fmt):
            return
        reply = self._next_reply(body)
        if not self._wait(reply.delay) or not self._held(reply):
            return
        if reply.drop:
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if reply.status != 200:
            self._error(openai, reply.status, reply.error)
            return
        if reply.runaway or fake.cap_tokens:
            reply = _capped(reply, body, openai)
        stream = body.get("stream", not openai)  # Ollama streams unless told not to
        if openai:
            self._openai(body, reply, model, bool(stream))
        else:
            self._ollama(reply, model, bool(stream))

    def _strict_rejects(self, body: dict[str, Any], fmt: Any) -> bool:
        """Answer like a strict server: unknown fields, schemas it cannot convert."""
        fake = self.server.fake
        if fake.accepted_fields is not None:
            unknown = sorted(set(body) - fake.accepted_fields)
            if unknown:
                self._send_json(400, {"error": {
                    "message": f"Unrecognized request argument supplied: {unknown[0]}",
                    "type": "invalid_request_error", "param": unknown[0], "code": None}})
                return True
        text = json.dumps(fmt) if isinstance(fmt, dict) else ""
        if any(f'"{word}"' in text for word in fake.reject_schema_words):
            # llama-server's words, verbatim (measured, shared/real-llm.md)
            self._error(True, 400, "JSON schema conversion failed:\nUnrecognized schema: "
                        + text[:80])
            return True
        return False

    # ------------------------------------------------------------------ Ollama
    def _ollama(self, reply: Reply, model: str, stream: bool) -> None:
        pieces = _pieces(reply.content)
        final = {"model": model, "created_at": "2026-01-01T00:00:00Z",
                 "message": {"role": "assistant", "content": "" if stream else reply.content},
                 "done": True, "done_reason": reply.finish_reason,
                 "total_duration": int(reply.server_ms * 1e6), "load_duration": 0,
                 "prompt_eval_count": reply.prompt_tokens, "eval_count": len(pieces)}
        if not stream:
            self._send_json(200, final)
            return
        self._start_stream("application/x-ndjson")
        for sent, piece in enumerate(pieces):
            if not self._paused(reply, sent):
                return
            line = {"model": model, "created_at": "2026-01-01T00:00:00Z",
                    "message": {"role": "assistant", "content": piece}, "done": False}
            self.wfile.write(json.dumps(line).encode() + b"\n")
            self.wfile.flush()
            if not self._wait(reply.chunk_delay):
                return
        self.wfile.write(json.dumps(final).encode() + b"\n")

    # ------------------------------------------------------------------ OpenAI
    def _openai(self, body: dict[str, Any], reply: Reply, model: str, stream: bool) -> None:
        pieces = _pieces(reply.content)
        usage = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": len(pieces),
                 "total_tokens": reply.prompt_tokens + len(pieces)}
        timings = {"prompt_n": reply.prompt_tokens, "prompt_ms": reply.server_ms / 2,
                   "predicted_n": len(pieces), "predicted_ms": reply.server_ms / 2, "cache_n": 0}
        base = {"id": "chatcmpl-fake", "created": int(time.time()), "model": model}
        if not stream:
            self._send_json(200, {**base, "object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": reply.content},
                 "finish_reason": reply.finish_reason}], "usage": usage, "timings": timings})
            return
        self._start_stream("text/event-stream")
        chunk = {**base, "object": "chat.completion.chunk"}
        for sent, piece in enumerate(pieces):
            if not self._paused(reply, sent):
                return
            event = {**chunk, "choices": [{"index": 0, "delta": {"content": piece},
                                           "finish_reason": None}]}
            self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
            self.wfile.flush()
            if not self._wait(reply.chunk_delay):
                return
        last = {**chunk, "choices": [{"index": 0, "delta": {},
                                      "finish_reason": reply.finish_reason}],
                "timings": timings}
        self.wfile.write(b"data: " + json.dumps(last).encode() + b"\n\n")
        if (body.get("stream_options") or {}).get("include_usage"):
            tail = {**chunk, "choices": [], "usage": usage}
            self.wfile.write(b"data: " + json.dumps(tail).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up mid-reply (a budget ran out, a cancel) is not an error."""
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)

    def __init__(self, fake: FakeLLM) -> None:
        super().__init__(("127.0.0.1", fake.port), _Handler)
        self.fake = fake
        self.state = fake.state


class FakeLLM:
    """The fake server. Use as a context manager, or call start() and stop()."""

    def __init__(self, *, models: tuple[str, ...] = ("test-model",),
                 capabilities: tuple[str, ...] = ("completion", "thinking"),
                 reject_formats: set[str] | None = None, default: Reply | None = None,
                 port: int = 0) -> None:
        self.models = models
        """Model names the server has; others get a 404."""
        self.capabilities = capabilities
        """What ``/api/show`` reports (``thinking`` makes Ollama clients send think=false)."""
        self.reject_formats: set[str] = set(reject_formats or ())
        """OpenAI ``response_format`` types answered with a 400."""
        self.reject_bounds = False
        """True: 400 for a json_schema that uses maxItems (like strict servers that lack it)."""
        self.reject_schema_words: set[str] = set()
        """Schema keywords answered with llama-server's 400 "JSON schema conversion failed"."""
        self.any_model = False
        """True: the OpenAI API answers whatever model name is asked for, as llama-server
        does (it serves one model and ignores the name); ``/v1/models`` still lists
        :attr:`models`."""
        self.cap_tokens = False
        """True: every reply longer than the request's ``max_tokens`` (``num_predict``) is cut
        there with ``finish_reason: length``, as a real server does."""
        self.accepted_fields: frozenset[str] | None = None
        """None: unknown request fields are ignored (llama-server); a set: any other top-level
        field is a 400 naming it (a strict server, e.g. :data:`STRICT_OPENAI_FIELDS`)."""
        self.default = default or Reply(status=500, error="fakellm: no scripted reply left")
        """The answer when the queue is empty."""
        self.slots: list[dict[str, Any]] | None = None
        """None: no ``/slots`` (404, like Ollama); a list: llama.cpp's slots as ``GET /slots``
        shows them (``is_processing``)."""
        self.busy_polls = 0
        """``/slots`` answers every slot busy this many more times (a server finishing a
        cancelled request), then as :attr:`slots` says."""
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        """When set and the queue is empty: the reply for a chat request's JSON body (a
        simulated model that answers by the form it is asked in, bench/everyday.py)."""
        self.port = port
        self.state = _State()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -------------------------------------------------------------- lifecycle
    def start(self) -> FakeLLM:
        """Listen on 127.0.0.1 (an ephemeral port unless one was given)."""
        self._server = _Server(self)
        self.port = self._server.server_address[1]
        # (serve_forever polls for shutdown every 0.5 s by default: each stop waited that long)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True, name="fakellm")
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; sleeping handlers wake up and return."""
        self.state.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    # -------------------------------------------------------------- addresses
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def ollama_url(self) -> str:
        """Base URL for the Ollama provider."""
        return self.base_url

    @property
    def openai_url(self) -> str:
        """Base URL for the OpenAI provider (``/v1``)."""
        return f"{self.base_url}/v1"

    # -------------------------------------------------------------- scripting
    def push(self, *replies: Reply | str) -> None:
        """Queue replies (a plain string is ``Reply(content=...)``)."""
        with self.state.lock:
            for reply in replies:
                self.state.replies.append(Reply(reply) if isinstance(reply, str) else reply)

    @property
    def requests(self) -> list[Seen]:
        """Every request received, in order."""
        with self.state.lock:
            return list(self.state.requests)

    def chat_bodies(self) -> list[dict[str, Any]]:
        """JSON bodies of the chat requests (either API), in order."""
        return [s.body for s in self.requests
                if s.path in ("/api/chat", "/v1/chat/completions")]

    def pending(self) -> int:
        """Scripted replies not consumed yet."""
        with self.state.lock:
            return len(self.state.replies)


def main() -> None:
    """Serve until interrupted, answering every chat with ``--content`` (manual testing)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model", default="test-model")
    parser.add_argument("--content", default=plan_json())
    args = parser.parse_args()
    fake = FakeLLM(models=(args.model,), default=Reply(args.content), port=args.port).start()
    print(f"PORT {fake.port}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
