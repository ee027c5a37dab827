"""The HTTP part both adapters share: timeouts, bounded retries, error codes.

Retries happen only where trying again can help: connection failures, and 5xx
answers to a request that is not deterministic (and 502/503/504: the request never
reached the model), at most :attr:`RetryPolicy.attempts`
attempts with exponential backoff. A 5xx at temperature 0 is not resent unchanged: the
same bytes give the same failure (measured: llama-server's "does not match the expected
peg-native format" under a grammar); the adapter may send a *changed* request instead
(a weaker schema form, :mod:`annactl.planning.llm.openai_compat`). A 4xx is the request's
fault and is never retried; a read timeout is not retried either (a model that was too
slow once will be again, and the person would wait three times as long).

A request's ``deadline`` (its time budget) bounds every wait: connect and read timeouts
are cut to the time left, a streamed reply is abandoned when it passes, and no retry
starts after it. The person never waits on the model longer than the budget.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import annactl.planning.llm.transport as wire
from anna_common.errors import AnnaError, ErrorCode, LLMError
from annactl.planning.llm.base import EventSink, RetryPolicy, no_events
from annactl.planning.llm.errors import check_cancel, llm_error
from annactl.planning.llm.trace import mask, settings_secrets

if TYPE_CHECKING:
    from annactl.core.config import ClientSettings

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_ERROR_CHARS = 200
"""Longest piece of a server's error text quoted in a message."""
UNAVAILABLE_STATUSES = frozenset({502, 503, 504})
"""5xx answers that mean the request never reached the model (a gateway, a model still
loading): resent even at temperature 0. Any other 5xx is the model's own failure."""


class RetryableError(Exception):
    """A failure worth another attempt (connection error, 5xx)."""

    def __init__(self, error: LLMError) -> None:
        super().__init__(error.message)
        self.error = error


def error_text(response: wire.Response) -> str:
    """The server's error message from a JSON body (OpenAI or Ollama shape), else raw text."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:MAX_ERROR_CHARS]
    if isinstance(body, dict):
        err = body.get("error", body.get("message", body))
        if isinstance(err, dict):
            message, code = err.get("message"), err.get("code")
            err = f"{message} ({code})" if message and code else message or code or err
        return str(err)[:MAX_ERROR_CHARS]
    return str(body)[:MAX_ERROR_CHARS]


class HttpProvider:
    """Base of the HTTP adapters: one :class:`~annactl.planning.llm.transport.Client`,
    retries and error mapping."""

    name = "http"
    """Provider name (overridden)."""

    def __init__(self, settings: ClientSettings, *, retry: RetryPolicy | None = None) -> None:
        self.model = settings.llm_model
        """The model name sent to the server."""
        self.url = settings.resolved_llm_url
        """Server base URL."""
        self.timeout_s = settings.llm_timeout
        self.connect_s = settings.llm_connect_timeout
        self.retry = retry or RetryPolicy()
        self.deadline: float | None = None
        """The current request's deadline (``time.monotonic()``), set by ``chat``."""
        self.retry_5xx = True
        """False for deterministic requests: a 5xx is not resent unchanged."""
        self._secrets = settings_secrets(settings)
        headers = {"User-Agent": "annactl"}
        if settings.llm_api_key is not None:
            headers["Authorization"] = f"Bearer {settings.llm_api_key.get_secret_value()}"
        try:
            # no proxy variable is read (a local prompt must not go elsewhere) and no
            # redirect followed; a plain-http server (the usual loopback Ollama) loads no
            # certificate store, an https one verifies against the system's
            self._client = wire.Client(
                self.url, headers=headers,
                timeout=wire.Timeout(settings.llm_timeout, connect=settings.llm_connect_timeout))
        except ValueError:
            raise bad_url(mask(self.url, self._secrets)) from None

    def close(self) -> None:
        """Release connections."""
        self._client.close()

    def quick(self, connect_s: float) -> None:
        """From now on: one attempt, and give up connecting after ``connect_s`` seconds."""
        self.retry = RetryPolicy(attempts=1)
        self.connect_s = connect_s
        self._client.timeout = wire.Timeout(self.timeout_s, connect=connect_s)

    def begin(self, deadline: float | None, options: dict[str, Any]) -> None:
        """Take a request's deadline and determinism before its first attempt."""
        self.deadline = deadline
        self.retry_5xx = options.get("temperature", 0) != 0

    def left(self) -> float | None:
        """Seconds to the deadline (None without one)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def _timeouts(self) -> wire.Timeout:
        left = self.left()
        if left is None:
            return wire.Timeout(self.timeout_s, connect=self.connect_s)
        left = max(left, 0.001)
        return wire.Timeout(min(self.timeout_s, left), connect=min(self.connect_s, left))

    def budget_spent(self, events: EventSink, path: str) -> LLMError:
        """The request's time budget ran out before the reply was complete."""
        events("LLM_BUDGET_SPENT", path=path)
        return llm_error(ErrorCode.LLM_TIMEOUT, "the model did not finish within the "
                         "request's time budget", "raise ANNA_LLM_BUDGET, or use a smaller or "
                         f"faster model than {self.model}", budget=True)

    @property
    def where(self) -> str:
        """The server URL for messages, with any password masked."""
        return mask(self.url, self._secrets)

    def _unavailable_hint(self) -> str:
        return (f"is the {self.name} server running at {self.where}? "
                "(ANNA_LLM_URL, ANNA_LLM_PROVIDER)")

    def _timeout(self, events: EventSink, path: str) -> LLMError:
        left = self.left()
        if left is not None and left <= 0.05:
            return self.budget_spent(events, path)
        events("LLM_REQUEST_TIMEOUT", path=path, timeout_s=self.timeout_s)
        return llm_error(ErrorCode.LLM_TIMEOUT,
                         f"the model server at {self.where} did not answer within "
                         f"{self.timeout_s:g} s",
                         f"raise ANNA_LLM_TIMEOUT or use a smaller model than {self.model}")

    def status_error(self, response: wire.Response, path: str) -> LLMError:
        """A coded error for a non-2xx answer (adapters refine model-not-found)."""
        text = mask(error_text(response), self._secrets)
        status = response.status_code
        lowered = text.lower()
        if status == 404 and "model" in lowered and any(
                word in lowered for word in ("not found", "not_found", "does not exist")):
            return self.model_not_found(text)
        hint = None
        if status in (401, 403):
            hint = "check ANNA_LLM_API_KEY"
        elif status >= 500:
            hint = f"the {self.name} server failed; see its log"
        return llm_error(ErrorCode.LLM_HTTP_ERROR,
                         f"the model server answered {status} on {path}: {text}", hint,
                         status=status, server=text)

    def model_not_found(self, text: str) -> LLMError:
        """The configured model is not on the server."""
        return llm_error(ErrorCode.LLM_MODEL_NOT_FOUND,
                         f"the model {self.model!r} is not on the server at {self.where}: "
                         f"{text[:MAX_ERROR_CHARS]}",
                         "set ANNA_LLM_MODEL to a model the server has")

    @contextmanager
    def _open(self, path: str, body: dict[str, Any]) -> Iterator[wire.Response]:
        """POST ``body``; yield a 2xx streaming response, or raise a coded error."""
        try:
            with self._client.stream("POST", path, json=body,
                                     timeout=self._timeouts()) as response:
                if response.status_code >= 400:
                    response.read()
                    error = self.status_error(response, path)
                    if response.status_code in UNAVAILABLE_STATUSES or (
                            response.status_code >= 500 and self.retry_5xx):
                        raise RetryableError(error)
                    raise error
                yield response
        except wire.ConnectTimeout:
            left = self.left()
            if left is not None and left <= 0.05:
                raise self.budget_spent(no_events, path) from None
            raise RetryableError(llm_error(
                ErrorCode.LLM_UNAVAILABLE,
                f"cannot reach the model server at {self.where} (ConnectTimeout)",
                self._unavailable_hint())) from None
        except (wire.ConnectError, wire.RemoteProtocolError,
                wire.ReadError, wire.WriteError) as exc:
            raise RetryableError(llm_error(
                ErrorCode.LLM_UNAVAILABLE,
                f"cannot reach the model server at {self.where} ({type(exc).__name__})",
                self._unavailable_hint())) from None

    def post(self, path: str, body: dict[str, Any], handle: Callable[[wire.Response], T], *,
             cancel: threading.Event | None = None, events: EventSink = no_events) -> T:
        """POST with retries; ``handle`` reads the 2xx response (it may stream)."""
        last: LLMError | None = None
        tried = 0
        for attempt in range(self.retry.attempts):
            check_cancel(cancel)
            if attempt:
                delay = self.retry.delay(attempt - 1)
                left = self.left()
                if left is not None and left <= delay:
                    break  # no retry starts after the deadline
                events("LLM_RETRY", attempt=attempt + 1, delay_s=delay,
                       code=str(last.code) if last else None)
                if cancel is not None:
                    if cancel.wait(delay):
                        check_cancel(cancel)
                else:
                    time.sleep(delay)
            tried += 1
            try:
                with self._open(path, body) as response:
                    return handle(response)
            except RetryableError as exc:
                last = exc.error
                log.debug("attempt %d on %s failed: %s", attempt + 1, path, last.message)
            except (wire.ReadTimeout, wire.WriteTimeout):
                raise self._timeout(events, path) from None
            except (wire.UnsupportedProtocol, wire.InvalidURL):
                raise bad_url(self.where) from None
            except wire.HTTPError as exc:
                raise llm_error(ErrorCode.LLM_UNAVAILABLE,
                                f"talking to {self.where} failed ({type(exc).__name__})",
                                self._unavailable_hint()) from None
        assert last is not None
        last.detail["attempts"] = tried
        if tried > 1:
            last.message += f" (after {tried} attempts)"
        raise last

    def deadline_check(self, started: float, events: EventSink, path: str) -> None:
        """A streamed reply that trickles in forever still ends at the read timeout, and at
        the request's deadline."""
        left = self.left()
        if left is not None and left <= 0:
            raise self.budget_spent(events, path)
        if time.monotonic() - started > self.timeout_s:
            raise self._timeout(events, path)

    def bad_stream(self, what: str) -> LLMError:
        """The server answered outside the API it was configured as."""
        return llm_error(ErrorCode.LLM_HTTP_ERROR,
                         f"the server at {self.where} answered outside the {self.name} API "
                         f"({what})", "check ANNA_LLM_PROVIDER and ANNA_LLM_URL")


def bad_url(url: str) -> AnnaError:
    """The configured URL cannot be used at all (a configuration error, not a model error)."""
    return AnnaError(f"the model server URL {url!r} is not a usable http(s) URL",
                     code=ErrorCode.CONFIG_INVALID,
                     hint="set ANNA_LLM_URL to e.g. http://127.0.0.1:11434")


def parse_json_line(line: str) -> Any:
    """One JSON value from a stream line, or None when it is not JSON."""
    try:
        return json.loads(line)
    except ValueError:
        return None
