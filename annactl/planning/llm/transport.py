"""HTTP to the model server on the standard library's :mod:`http.client`.

httpx (with httpcore and h11, and, through its command-line module, click, rich's progress
bars and pygments) was ~75 ms of the ~450 ms CPU ``annactl`` spends on one planning request
(``bench/request_cpu.py``, docs/performance.md), and the client uses little of it: requests
to one server, JSON bodies, a reply read whole or line by line as it streams (NDJSON,
server-sent events), a connect and a read timeout, TLS verified for ``https``. No proxies
(the environment's proxy variables are never read: a local prompt must not go elsewhere),
no redirects followed, no cookies. :mod:`http.client` is already loaded for the daemon's
socket (:mod:`annactl.core.daemon_http`); this module adds the two timeouts and names each
failure by where it happened, as httpx did, so the adapters' error codes are unchanged.

Each request has its own connection, closed when its reply has been read: a model call
takes seconds, a loopback connection microseconds, and no kept-alive connection can be
found closed by the server half way through a request.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

MAX_LINE = 4 * 1024 * 1024
"""Longest line of a streamed reply (a streamed piece is a few tokens; a server that sends
more without a line end is not speaking the API)."""


class HTTPError(Exception):
    """Base of every failure here (httpx's ``HTTPError``)."""


class InvalidURL(HTTPError, ValueError):
    """The base URL cannot be parsed."""


class UnsupportedProtocol(HTTPError):
    """The URL is not ``http`` or ``https`` with a host."""


class TransportError(HTTPError):
    """The exchange with the server failed."""


class ConnectError(TransportError):
    """No connection (refused, unknown host, TLS handshake or certificate refused)."""


class ConnectTimeout(TransportError):
    """No connection within the connect timeout."""


class WriteError(TransportError):
    """The request could not be sent."""


class WriteTimeout(TransportError):
    """The request could not be sent within the read timeout."""


class ReadError(TransportError):
    """The connection failed while the reply was read."""


class ReadTimeout(TransportError):
    """No byte of the reply within the read timeout."""


class RemoteProtocolError(TransportError):
    """The server closed the connection early or answered outside HTTP."""


@dataclass(frozen=True)
class Timeout:
    """Seconds to wait for a connection (TLS handshake included) and for each read."""

    read: float
    connect: float


@dataclass(frozen=True)
class _Target:
    https: bool
    host: str
    port: int | None
    path: str


def _target(url: str) -> _Target:
    """Where a URL points; :class:`UnsupportedProtocol` unless it is http(s) with a host."""
    try:
        parts = urlsplit(url)
        port = parts.port
        host = parts.hostname
    except ValueError as exc:
        raise InvalidURL(str(exc)) from None
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise UnsupportedProtocol(f"not an http(s) URL: {url[:100]!r}")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return _Target(parts.scheme.lower() == "https", host, port, path)


class _Connection(http.client.HTTPConnection):
    """A plain connection whose reads wait ``read_s`` once connected."""

    def __init__(self, host: str, port: int | None, timeout: Timeout) -> None:
        super().__init__(host, port, timeout=timeout.connect)
        self.read_s = timeout.read

    def connect(self) -> None:
        """Connect within the connect timeout, then read with the read timeout."""
        super().connect()
        self.sock.settimeout(self.read_s)


class _TLSConnection(http.client.HTTPSConnection):
    """A TLS connection (the system's CA store, host name checked) whose handshake waits
    the connect timeout and whose reads wait ``read_s``."""

    def __init__(self, host: str, port: int | None, timeout: Timeout) -> None:
        import ssl  # only an https server needs it

        super().__init__(host, port, timeout=timeout.connect,
                         context=ssl.create_default_context())
        self.read_s = timeout.read

    def connect(self) -> None:
        """Connect and shake hands within the connect timeout, then read with the read
        timeout."""
        super().connect()
        self.sock.settimeout(self.read_s)


class Response:
    """A reply: status and headers at once, the body read whole or line by line."""

    def __init__(self, raw: http.client.HTTPResponse) -> None:
        self._raw = raw
        self.status_code = raw.status
        """The HTTP status."""
        self._body: bytes | None = None

    def read(self) -> bytes:
        """The whole body (read once)."""
        if self._body is None:
            with _reading():
                self._body = self._raw.read()
        return self._body

    @property
    def text(self) -> str:
        """The body as text (its charset, else UTF-8; undecodable bytes replaced)."""
        charset = self._raw.headers.get_content_charset() or "utf-8"
        try:
            return self.read().decode(charset, errors="replace")
        except LookupError:
            return self.read().decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON (``ValueError`` when it is not)."""
        return json.loads(self.text)

    def iter_lines(self) -> Iterator[str]:
        """The body's lines as they arrive, without their line ends (``str.splitlines``
        rules, as httpx's)."""
        pending = b""
        while True:
            with _reading():
                piece = self._raw.readline(MAX_LINE + 1 - len(pending))
            if not piece:
                break
            pending += piece
            if not pending.endswith(b"\n"):
                if len(pending) > MAX_LINE:
                    raise RemoteProtocolError(f"a line longer than {MAX_LINE} bytes")
                continue
            yield from pending.decode("utf-8", errors="replace").splitlines()
            pending = b""
        if pending:
            yield from pending.decode("utf-8", errors="replace").splitlines()


@contextmanager
def _reading() -> Iterator[None]:
    """Failures while a reply is read, named as httpx named them."""
    try:
        yield
    except TimeoutError:
        raise ReadTimeout("no reply within the read timeout") from None
    except (http.client.RemoteDisconnected, http.client.IncompleteRead,
            http.client.BadStatusLine, http.client.LineTooLong) as exc:
        raise RemoteProtocolError(type(exc).__name__) from None
    except http.client.HTTPException as exc:
        raise RemoteProtocolError(type(exc).__name__) from None
    except OSError as exc:
        raise ReadError(type(exc).__name__) from None


class Client:
    """Requests to one server: ``base_url`` joined with each path (an absolute
    ``http(s)://`` target is used as it is), the same headers on each."""

    def __init__(self, base_url: str, *, timeout: Timeout,
                 headers: dict[str, str] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        """The timeouts of a request that names none."""
        self.headers = dict(headers or {})
        try:
            urlsplit(self.base_url).port  # noqa: B018  # parsed now: a bad URL fails here
        except ValueError as exc:
            raise InvalidURL(str(exc)) from None

    def close(self) -> None:
        """Nothing stays open between requests (kept for the adapters' ``close``)."""

    def _url(self, target: str) -> str:
        if target.lower().startswith(("http://", "https://")):
            return target
        return self.base_url + target

    @contextmanager
    def stream(self, method: str, target: str, *, json: Any = None,
               timeout: Timeout | None = None) -> Iterator[Response]:
        """Send a request and yield its reply unread; the connection closes after."""
        where = _target(self._url(target))
        wait = timeout or self.timeout
        kind = _TLSConnection if where.https else _Connection
        conn = kind(where.host, where.port, wait)
        try:
            yield Response(self._send(conn, method, where.path, json))
        finally:
            conn.close()

    def get(self, target: str, *, timeout: float | Timeout | None = None) -> Response:
        """``GET`` and read the whole reply."""
        wait = Timeout(timeout, connect=timeout) if isinstance(timeout, int | float) \
            else timeout
        with self.stream("GET", target, timeout=wait) as response:
            response.read()
            return response

    def _send(self, conn: http.client.HTTPConnection, method: str, path: str,
              body: Any) -> http.client.HTTPResponse:
        payload = None if body is None else json_bytes(body)
        headers = {"Accept": "*/*", **self.headers}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        try:
            conn.connect()
        except TimeoutError:
            raise ConnectTimeout("no connection within the connect timeout") from None
        except OSError as exc:  # refused, unreachable, unknown host, TLS refused
            raise ConnectError(type(exc).__name__) from None
        try:
            conn.request(method, path, body=payload, headers=headers)
        except TimeoutError:
            raise WriteTimeout("the request could not be sent in time") from None
        except (OSError, http.client.HTTPException) as exc:
            raise WriteError(type(exc).__name__) from None
        with _reading():
            return conn.getresponse()


def json_bytes(body: Any) -> bytes:
    """A request body as compact UTF-8 JSON (as httpx sent it)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


__all__ = ["Client", "ConnectError", "ConnectTimeout", "HTTPError", "InvalidURL", "ReadError",
           "ReadTimeout", "RemoteProtocolError", "Response", "Timeout", "TransportError",
           "UnsupportedProtocol", "WriteError", "WriteTimeout"]
