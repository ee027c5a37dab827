"""The model server's HTTP transport (annactl/planning/llm/transport.py) against a real
loopback HTTP server: lines split as httpx split them, a line without end is refused, a
silent server is a read timeout, a closed port a connect error."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from annactl.planning.llm import transport

BODIES: dict[str, bytes] = {
    "/lines": b'{"a":1}\r\n\r\n{"b":"\xc3\xa9"}\nlast',
    "/endless": b"x" * (transport.MAX_LINE + 10),
}
"""What each path answers (``/silent`` answers nothing until the test ends)."""


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/silent":
            self.server.release.wait(10)  # type: ignore[attr-defined]
            return
        body = BODIES[self.path]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.release = threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.release.set()  # type: ignore[attr-defined]
        httpd.shutdown()
        httpd.server_close()


def _client(url: str, read: float = 5.0) -> transport.Client:
    return transport.Client(url, timeout=transport.Timeout(read, connect=2.0))


def test_lines_are_split_like_httpx(server: str) -> None:
    with _client(server).stream("GET", "/lines") as response:
        assert response.status_code == 200
        assert list(response.iter_lines()) == ['{"a":1}', "", '{"b":"é"}', "last"]


def test_a_line_without_end_is_refused_not_gathered(server: str) -> None:
    with _client(server).stream("GET", "/endless") as response, \
            pytest.raises(transport.RemoteProtocolError):
        list(response.iter_lines())


def test_a_silent_server_is_a_read_timeout(server: str) -> None:
    with pytest.raises(transport.ReadTimeout):
        _client(server, read=0.3).get("/silent")


def test_a_closed_port_is_a_connect_error_and_a_bad_url_is_refused() -> None:
    with pytest.raises(transport.ConnectError):
        _client("http://127.0.0.1:9").get("/")
    with pytest.raises(transport.UnsupportedProtocol):
        _client("ftp://example.org").get("/")
    with pytest.raises(transport.InvalidURL):
        _client("http://[::1")
