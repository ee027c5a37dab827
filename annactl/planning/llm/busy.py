"""Is the server still busy with an earlier request? (issue 39.8)

Measured with Qwen2.5-Coder-0.5B under llama.cpp on 2 cores (shared/real-llm.md): a request
Anna's budget cancelled kept the server's one slot busy for 104 s (llama.cpp finishes the
prompt batch it is evaluating before it notices the client left), and the next request
waited in its queue and lost its whole budget there. llama.cpp's ``GET /slots`` says whether
each slot is processing; before a chat request Anna asks it, waits briefly for a slot, and
otherwise says the server is busy — an ``LLM_TIMEOUT`` with ``detail.busy``, which a matching
template answers like any model failure — instead of queueing behind work it cannot see.

A server without ``/slots`` (Ollama, vLLM, a llama.cpp started with ``--no-slots``) is asked
once per provider and then never again.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from anna_common.errors import ErrorCode, LLMError
from annactl.planning.llm.base import EventSink, no_events
from annactl.planning.llm.errors import check_cancel, llm_error
from annactl.planning.llm.transport import Client, HTTPError

WAIT_S = 3.0
"""Longest wait for a slot to free (a request about to finish is worth waiting for)."""
OWN_WORK_S = 300.0
"""For this long after Anna gave up on a request of its own, the busy slot is most likely
that request: a wait for it may take up to half the time left (it frees within one prompt
batch), since the request after it (a small form after the contract's trial) is why."""
POLL_S = 0.25
"""Seconds between two looks at ``/slots``."""
PROBE_TIMEOUT_S = 1.0
"""A ``/slots`` answer slower than this is no answer (the check must stay cheap)."""
LONG_PROMPT_LEFT = 1024
"""Prompt tokens still to read in every busy slot beyond which waiting is pointless: measured
with the real models on 2 cores (8–14 prompt tokens/s), that is over a minute of work."""


def server_root(url: str) -> str:
    """The server's root: llama.cpp serves ``/slots`` beside ``/v1``, not under it."""
    url = url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


class BusyProbe:
    """Per provider: whether the server has ``/slots``, and the look before each request."""

    def __init__(self, root: str) -> None:
        self.url = server_root(root) + "/slots"
        self.supported: bool | None = None
        """None until asked; False once the server had no usable ``/slots``."""
        self.abandoned: float | None = None
        """When this provider last gave up on a request at its deadline (monotonic)."""

    def _slots(self, client: Client) -> list[dict[str, Any]] | None:
        try:
            response = client.get(self.url, timeout=PROBE_TIMEOUT_S)
            data = response.json() if response.status_code == 200 else None
        except (HTTPError, ValueError):
            return None
        if response.status_code in (404, 405, 501):
            self.supported = False  # no such endpoint here: never ask again
        if not isinstance(data, list) or not data or not all(isinstance(s, dict)
                                                             for s in data):
            return None
        return data

    def wait_free(self, client: Client, *, left: float | None,
                  cancel: threading.Event | None = None,
                  events: EventSink = no_events) -> None:
        """Return when a slot is free (or the server cannot say); raise when it stays busy."""
        if self.supported is False:
            return
        began = time.monotonic()
        limit = WAIT_S if left is None else max(0.0, min(WAIT_S, left / 4))
        if (left is not None and self.abandoned is not None
                and began - self.abandoned < OWN_WORK_S):
            limit = max(limit, left / 2)
        while True:
            slots = self._slots(client)
            if slots is None:  # no answer this time (loading, slow): do not hold the request
                return
            self.supported = True
            working = sum(bool(s.get("is_processing")) for s in slots)
            if working < len(slots):
                return
            waited = time.monotonic() - began
            if waited >= limit or min(_prompt_left(s) for s in slots) > LONG_PROMPT_LEFT:
                events("LLM_SERVER_BUSY", slots=len(slots), waited_s=round(waited, 2))
                raise busy_error(len(slots), waited)
            check_cancel(cancel)
            if cancel is not None:
                cancel.wait(POLL_S)
                check_cancel(cancel)
            else:
                time.sleep(POLL_S)


def _prompt_left(slot: dict[str, Any]) -> int:
    """Prompt tokens a busy slot still has to read (0 when the server does not say)."""
    total, done = slot.get("n_prompt_tokens"), slot.get("n_prompt_tokens_processed")
    if isinstance(total, int) and isinstance(done, int):
        return max(0, total - done)
    return 0


def busy_error(slots: int, waited: float) -> LLMError:
    """The server is still working on something else: say so, do not queue."""
    return llm_error(
        ErrorCode.LLM_TIMEOUT,
        f"the model server is still busy with an earlier request ({slots} of {slots} "
        f"slots working after {waited:.1f} s): Anna did not queue behind it",
        "ask again in a moment; a request Anna cancelled keeps a llama.cpp slot busy until "
        "the prompt batch it is evaluating ends (a smaller --batch-size ends it sooner)",
        busy=True, slots=slots)
