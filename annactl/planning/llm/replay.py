"""Record and replay model exchanges (JSON lines), so a run can be reproduced exactly.

``ANNA_LLM_RECORD=FILE`` appends one line per exchange::

    {"key": "<sha256 of the canonical request>", "request": {...canonical request...},
     "response": {...ChatResult...}, "recorded_at": 1732240000.0}

``ANNA_LLM_REPLAY=FILE`` answers only from such a file through
:class:`ReplayProvider`, which has no network client at all: a request whose
key is not in the file fails loudly with ``LLM_REPLAY_MISS`` (a determinism
violation), never with a quiet call to a server. When one key was recorded
several times its responses are served in order, the last one repeating.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from anna_common.errors import ErrorCode, UsageError
from annactl.planning.llm.base import (
    ChatRequest,
    ChatResult,
    EventSink,
    TextCallback,
    TokenCallback,
    no_events,
)
from annactl.planning.llm.errors import check_cancel, llm_error
from annactl.planning.llm.keys import request_key

log = logging.getLogger(__name__)


class Recorder:
    """Appends exchanges to a JSONL file (created 0600)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def append(self, key: str, request: dict[str, Any], result: ChatResult) -> None:
        """Append one exchange; an unwritable file is a usage error (the person asked for it)."""
        line = json.dumps({"key": key, "request": request, "response": result.to_dict(),
                           "recorded_at": time.time()}, ensure_ascii=False, sort_keys=True)
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                with os.fdopen(fd, "a", encoding="utf-8") as handle:
                    handle.write(line + "\n")
            except OSError as exc:
                raise UsageError(f"cannot write the recording {self.path}: {exc.strerror}",
                                 hint="check ANNA_LLM_RECORD") from None


def load_recording(path: Path) -> dict[str, list[ChatResult]]:
    """Responses by key from a recording; malformed lines are skipped with a warning."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read the replay file {path}: {exc.strerror}",
                         hint="check ANNA_LLM_REPLAY") from None
    table: dict[str, list[ChatResult]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            table.setdefault(str(entry["key"]), []).append(ChatResult.from_dict(entry["response"]))
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("%s:%d: skipping a malformed recording line (%s)", path, number, exc)
    return table


class ReplayProvider:
    """Answers from a recording; never touches the network."""

    def __init__(self, path: Path, *, provider: str, model: str) -> None:
        self.path = path
        self.name = provider
        """The provider the recording was made with (part of the key)."""
        self.model = model
        self._table = load_recording(path)
        self._served: dict[str, int] = {}

    def chat(self, request: ChatRequest, *, on_tokens: TokenCallback | None = None,
             cancel: threading.Event | None = None, events: EventSink = no_events,
             on_text: TextCallback | None = None) -> ChatResult:
        """The recorded reply for this exact request (its text to ``on_text`` at once), or
        ``LLM_REPLAY_MISS``."""
        check_cancel(cancel)
        key = request_key(self.name, self.model, request)
        replies = self._table.get(key)
        if not replies:
            events("LLM_REPLAY_MISS", key=key[:16])
            raise llm_error(ErrorCode.LLM_REPLAY_MISS,
                            f"no recorded reply for this request in {self.path} "
                            f"(key {key[:16]})",
                            "the prompt, model, telemetry or options differ from the recording; "
                            "replay with the same --telemetry-file, or record again",
                            key=key)
        index = self._served.get(key, 0)
        self._served[key] = index + 1
        stored = replies[min(index, len(replies) - 1)]
        result = ChatResult.from_dict(stored.to_dict())
        result.source = "replay"
        result.latency_s = 0.0
        if on_tokens is not None:
            on_tokens(result.completion_tokens)
        if on_text is not None:
            on_text(result.text)
        events("LLM_REPLAY_HIT", key=key[:16])
        return result

    def close(self) -> None:
        """Nothing to release."""
