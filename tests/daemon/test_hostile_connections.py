"""Issue 22 items 2 and 3 on a real daemon over its real socket: requests that are not HTTP
get coded JSON errors, idle and half-sent connections are closed, one uid cannot hold every
connection, and health keeps answering through all of it."""

from __future__ import annotations

import contextlib
import json
import socket
from http.client import HTTPResponse
from pathlib import Path

import pytest

from annad.api.app import MAX_REQUESTS_PER_UID
from annad.peer import HEADER_TIMEOUT_S, MAX_CONNECTIONS_PER_UID
from tests.daemonfix import RunningDaemon, http
from tests.waiting import WAIT_S, wait_until


def _raw(path: Path, data: bytes) -> tuple[int, dict[str, object]]:
    """Send ``data`` on a fresh connection; the status and JSON body of the answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(WAIT_S)
        sock.connect(str(path))
        sock.sendall(data)
        response = HTTPResponse(sock)
        response.begin()
        assert response.getheader("content-type") == "application/json", response.getheaders()
        return response.status, json.loads(response.read())


@pytest.mark.shared_daemon
@pytest.mark.parametrize("request_bytes", [
    b"POST /v1/plans HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
    b"GET /v1/plans/" + b"x" * 60000 + b" HTTP/1.1\r\nHost: a\r\n\r\n",
    b"POST /v1/plans HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 not http at all\r\n\r\n",
], ids=["negative length", "60000-character id", "bad chunk", "not http"])
def test_what_is_not_http_gets_a_coded_json_400(user_daemon: RunningDaemon,
                                                request_bytes: bytes) -> None:
    status, body = _raw(user_daemon.socket, request_bytes)
    # an id too long for any plan may also be answered as what it is: no such plan
    assert (status, body["code"]) in {(400, "BAD_REQUEST"), (404, "PLAN_NOT_FOUND")}, body


@pytest.mark.shared_daemon
@pytest.mark.parametrize("query", ["limit=99999999999999999999", "limit=-1", "limit=x",
                                   "before=" + "x" * 10000], ids=["huge", "negative", "text",
                                                                  "long before"])
def test_a_bad_query_is_a_coded_400(user_daemon: RunningDaemon, query: str) -> None:
    status, body = http(user_daemon.socket, "GET", f"/v1/plans?{query}")
    assert status == 400 and body["code"] == "BAD_REQUEST", (status, body)


@pytest.mark.shared_daemon
def test_an_idle_connection_is_closed_and_health_still_answers(
        user_daemon: RunningDaemon) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as idle:
        idle.settimeout(WAIT_S + HEADER_TIMEOUT_S)
        idle.connect(str(user_daemon.socket))
        idle.sendall(b"GET /v1/health HTTP/1.1\r\nHost: a\r\n")  # and never the end of it
        assert http(user_daemon.socket, "GET", "/v1/health")[0] == 200
        assert idle.recv(1) == b""  # closed by the daemon, not by the timeout here


@pytest.mark.shared_daemon
def test_one_uid_cannot_take_every_connection(user_daemon: RunningDaemon) -> None:
    held: list[socket.socket] = []
    try:
        for _ in range(MAX_CONNECTIONS_PER_UID + 8):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(user_daemon.socket))
            held.append(sock)

        def closed_by_daemon() -> int:
            count = 0
            for sock in held:
                sock.setblocking(False)
                with contextlib.suppress(BlockingIOError):
                    count += sock.recv(1) == b""
            return count

        wait_until(lambda: closed_by_daemon() >= 8, "the connections over the cap to close")
    finally:
        for sock in held:
            sock.close()
    wait_until(lambda: http(user_daemon.socket, "GET", "/v1/health")[0] == 200,
               "health to answer once the connections are gone")


@pytest.mark.shared_daemon
def test_one_uid_cannot_hold_every_worker_and_health_still_answers(
        user_daemon: RunningDaemon) -> None:
    """Requests whose bodies never come hold their slots; past the per-uid cap the next one
    is refused at once with a coded 503, and health is never refused."""
    head = (b"POST /v1/policy/check HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n{")
    held: list[socket.socket] = []
    try:
        for _ in range(MAX_REQUESTS_PER_UID):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(user_daemon.socket))
            sock.sendall(head)  # and never the rest of the body
            held.append(sock)

        def refused() -> bool:
            status, body = http(user_daemon.socket, "GET", "/v1/plans")
            return status == 503 and body["code"] == "DAEMON_UNAVAILABLE"

        wait_until(refused, "a request over the per-uid cap to be refused")
        assert http(user_daemon.socket, "GET", "/v1/health")[0] == 200
    finally:
        for sock in held:
            sock.close()
    wait_until(lambda: http(user_daemon.socket, "GET", "/v1/plans")[0] == 200,
               "requests to be served once the held ones are gone")
