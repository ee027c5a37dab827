"""Per-request traces with masked secrets, written under ``state_dir/traces/``.

Every planning request gets a trace id. Events (``LLM_REQUEST_SENT``,
``LLM_RESPONSE_OK``, ``VALIDATION_FAILED``, ``REPAIR_ATTEMPT``,
``LLM_REQUEST_TIMEOUT``, ``LLM_RESPONSE_FORMAT_FALLBACK``, ...) are logged at
DEBUG and, with ``ANNA_TRACE=1``, written as one JSON file per request. Raw
model text is kept only with ``ANNA_TRACE_RAW=1``. Everything written passes
through :func:`mask` first: API keys, ``Bearer`` tokens, ``sk-`` keys and
passwords in URLs never reach a file or a log.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anna_common.redact import redact, redact_value

if TYPE_CHECKING:
    from annactl.core.config import ClientSettings

log = logging.getLogger(__name__)

MASK = "***"
"""What a secret is replaced with."""


def mask(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with known secrets and secret-looking tokens replaced by ``***``
    (the storage policy of :mod:`anna_common.redact`)."""
    return redact(text, secrets)


def mask_value(value: Any, secrets: tuple[str, ...] = ()) -> Any:
    """:func:`mask` applied to every string in a JSON-like value (keys too)."""
    return redact_value(value, secrets)


def settings_secrets(settings: ClientSettings) -> tuple[str, ...]:
    """The literal secrets in settings (the API key), for :func:`mask`."""
    key = settings.llm_api_key
    return (key.get_secret_value(),) if key is not None else ()


class Tracer:
    """Collects one request's events; writes them when tracing is on."""

    def __init__(self, settings: ClientSettings, *, request: str = "") -> None:
        self.trace_id = uuid.uuid4().hex
        """Identifies this request in traces, history and the outcome."""
        self.enabled = settings.trace
        self.raw = settings.trace_raw
        self._secrets = settings_secrets(settings)
        self._dir = settings.state_dir / "traces"
        self._started = time.monotonic()
        self._doc: dict[str, Any] = {
            "trace_id": self.trace_id,
            "started_at": time.time(),
            "request": request,
            "config": {
                "provider": settings.llm_provider,
                "url": settings.resolved_llm_url,
                "model": settings.llm_model,
                "api_key_set": bool(self._secrets),
                "timeout_s": settings.llm_timeout,
                "cache": settings.llm_cache,
                "record": str(settings.llm_record) if settings.llm_record else None,
                "replay": str(settings.llm_replay) if settings.llm_replay else None,
                "max_model_calls": settings.max_model_calls,
            },
            "events": [],
        }

    @property
    def events(self) -> list[dict[str, Any]]:
        """Events so far (masked)."""
        result: list[dict[str, Any]] = self._doc["events"]
        return result

    def event(self, name: str, **fields: Any) -> None:
        """Record one event. ``raw`` fields are dropped unless raw tracing is on."""
        if not self.raw:
            fields.pop("raw", None)
        entry = mask_value({"event": name,
                            "t_ms": round((time.monotonic() - self._started) * 1000, 1),
                            **fields}, self._secrets)
        self.events.append(entry)
        log.debug("trace %s %s %s", self.trace_id[:8], name,
                  {k: v for k, v in entry.items() if k not in ("event", "raw")})

    def set(self, key: str, value: Any) -> None:
        """Attach a top-level field (prompt version, outcome)."""
        self._doc[key] = mask_value(value, self._secrets)

    def write(self) -> Path | None:
        """Write the trace file when tracing is on; never raises."""
        if not self.enabled:
            return None
        path = self._dir / f"{self.trace_id}.json"
        try:
            self._dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            text = mask(json.dumps(self._doc, indent=1, default=str), self._secrets)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            log.warning("cannot write trace %s: %s", path, exc)
            return None
        return path
