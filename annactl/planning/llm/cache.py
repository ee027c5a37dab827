"""Deterministic response cache keyed by the canonical request.

The key is the sha256 of the canonical JSON (sorted keys, no whitespace)
of everything that decides the reply: provider, model, messages, the schema's
sha256, the prompt version and sha256, and the generation options. At
temperature 0 the same key gives the same reply, so a hit can be served
without asking the server. Modes (``ANNA_LLM_CACHE``): ``read`` serves hits
and never writes, ``write`` always asks and stores, ``readwrite`` serves hits
and stores misses, ``off`` does nothing. Entries are one JSON file each under
``state_dir/llm_cache/``.

:class:`StoredProvider` wraps a real provider with the cache and the recorder
(:mod:`annactl.planning.llm.replay`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anna_common.plan import canonical_json
from annactl.planning.llm.base import (
    ChatRequest,
    ChatResult,
    EventSink,
    Provider,
    TextCallback,
    TokenCallback,
    no_events,
)
from annactl.planning.llm.keys import canonical_request

if TYPE_CHECKING:
    from annactl.planning.llm.replay import Recorder

log = logging.getLogger(__name__)

CACHE_MODES = ("off", "read", "write", "readwrite")
"""Accepted cache modes."""


class ResponseCache:
    """One JSON file per key under ``directory``."""

    def __init__(self, directory: Path, mode: str) -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"unknown cache mode {mode!r}")
        self.directory = directory
        self.mode = mode

    @property
    def reads(self) -> bool:
        """Hits are served."""
        return self.mode in ("read", "readwrite")

    @property
    def writes(self) -> bool:
        """Replies are stored."""
        return self.mode in ("write", "readwrite")

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str) -> ChatResult | None:
        """The stored reply for ``key``; a missing or unreadable entry is a miss."""
        if not self.reads:
            return None
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            if data.get("cache_key") != key:
                return None
            return ChatResult.from_dict(data["result"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("ignoring unreadable cache entry %s: %s", key[:12], exc)
            return None

    def put(self, key: str, request: dict[str, Any], result: ChatResult) -> None:
        """Store a reply (atomically); failures are logged, never raised."""
        if not self.writes:
            return
        entry = {"cache_key": key, "model": request.get("model"),
                 "prompt_version": request.get("prompt_version"),
                 "prompt_sha": request.get("prompt_sha"), "schema_sha": request.get("schema_sha"),
                 "created_at": time.time(), "result": result.to_dict()}
        path = self._path(key)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp.write_bytes(canonical_json(entry))
            tmp.replace(path)
        except OSError as exc:
            log.warning("cannot write cache entry %s: %s", path, exc)


class StoredProvider:
    """A provider wrapped with the deterministic cache and the request/response recorder."""

    def __init__(self, inner: Provider, *, cache: ResponseCache | None = None,
                 recorder: Recorder | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.cache = cache
        self.recorder = recorder

    def chat(self, request: ChatRequest, *, on_tokens: TokenCallback | None = None,
             cancel: threading.Event | None = None, events: EventSink = no_events,
             on_text: TextCallback | None = None) -> ChatResult:
        """Serve from the cache when allowed (its text to ``on_text`` at once); otherwise ask,
        then store and record."""
        canonical = canonical_request(self.name, self.model, request)
        key = hashlib.sha256(canonical_json(canonical)).hexdigest()
        result = self.cache.get(key) if self.cache is not None else None
        if result is not None:
            result.source = "cache"
            result.latency_s = 0.0
            events("LLM_CACHE_HIT", key=key[:16])
            if on_text is not None:
                on_text(result.text)
        else:
            result = self.inner.chat(request, on_tokens=on_tokens, cancel=cancel, events=events,
                                     on_text=on_text)
            if self.cache is not None and self.cache.writes:
                self.cache.put(key, canonical, result)
                events("LLM_CACHE_STORE", key=key[:16])
        if self.recorder is not None:
            self.recorder.append(key, canonical, result)
        return result

    def quick(self, connect_s: float) -> None:
        """Pass :meth:`HttpProvider.quick` on to the wrapped provider."""
        quick = getattr(self.inner, "quick", None)
        if callable(quick):
            quick(connect_s)

    def close(self) -> None:
        """Close the wrapped provider."""
        self.inner.close()
