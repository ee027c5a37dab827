"""The client's daemon connection: explicit socket, autostart, version check, errors."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socketserver
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from anna_common.errors import AnnaError, ErrorCode
from annactl.core.config import load_settings, runtime_dir
from annactl.core.daemon_client import DaemonClient, connect
from tests.daemonfix import RunningDaemon


@pytest.mark.shared_daemon
def test_explicit_socket(user_daemon: RunningDaemon, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANNA_SOCKET", str(user_daemon.socket))
    client = connect(load_settings())
    assert client.socket_path == user_daemon.socket
    assert client.health().pid == user_daemon.proc.pid  # type: ignore[union-attr]


def test_nothing_running_without_autostart() -> None:
    with pytest.raises(AnnaError) as caught:
        connect(load_settings(), autostart=False)
    assert caught.value.code is ErrorCode.DAEMON_UNAVAILABLE


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def test_autostart_starts_a_user_daemon_that_exits_when_idle(
        tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the started daemon inherits this environment: keep it inside tmp_path
    monkeypatch.setenv("ANNAD_CONFIG", str(tmp_path / "no-annad.toml"))
    monkeypatch.setenv("ANNAD_HOME_OVERRIDE", str(isolated_home))
    monkeypatch.setenv("ANNAD_IDLE_EXIT_S", "2")
    monkeypatch.setenv("ANNAD_PACMAN_DBPATH", str(tmp_path / "no-pacman"))
    started = time.monotonic()
    client = connect(load_settings())
    elapsed = time.monotonic() - started
    health = client.health()
    try:
        assert client.socket_path == runtime_dir() / "annad.sock"
        assert health.mode == "user" and health.caller_authorised
        assert (client.socket_path.stat().st_mode & 0o777) == 0o600
        assert elapsed < 20
        again = connect(load_settings())  # the running one is found, not a second started
        assert again.health().pid == health.pid
        assert _wait_gone(health.pid, 20), "the per-user daemon did not exit when idle"
    finally:
        if not _wait_gone(health.pid, 0):
            with contextlib.suppress(ProcessLookupError):
                os.kill(health.pid, signal.SIGTERM)
            _wait_gone(health.pid, 10)


class _OldDaemon(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"api_version": 99, "daemon_version": "9", "mode": "user",
                           "caller_uid": 0, "caller_authorised": True, "pid": 1,
                           "uptime_s": 1.0}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _UnixHTTPServer(socketserver.UnixStreamServer):
    def get_request(self):  # type: ignore[no-untyped-def]
        request, _ = super().get_request()
        return request, ("local", 0)


@pytest.fixture
def old_daemon(tmp_path: Path) -> Iterator[Path]:
    path = Path(f"/tmp/anna-old-{os.getpid()}.sock")
    server = _UnixHTTPServer(str(path), _OldDaemon)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield path
    finally:
        server.shutdown()
        server.server_close()
        path.unlink(missing_ok=True)


def test_version_mismatch_is_refused(old_daemon: Path) -> None:
    with pytest.raises(AnnaError) as caught:
        DaemonClient(old_daemon).check_version()
    assert caught.value.code is ErrorCode.API_VERSION_MISMATCH


@pytest.mark.shared_daemon
def test_errors_keep_their_code_and_detail(user_daemon: RunningDaemon) -> None:
    with pytest.raises(AnnaError) as caught:
        user_daemon.client().execute("nope", "x", confirmed=True, high_confirmed=True)
    assert caught.value.code is ErrorCode.PLAN_NOT_FOUND


def test_a_timeout_the_caller_chose_bounds_submits_too(tmp_path: Path) -> None:
    """Issue 22: the submit default (120 s) no longer overrides a timeout the caller gave
    the client, longer (a test under load, queued submits) or shorter."""
    from annactl.core.daemon_client import DEFAULT_TIMEOUT, SUBMIT_TIMEOUT

    plain = DaemonClient(tmp_path / "s.sock")
    assert (plain.timeout, plain.submit_timeout) == (DEFAULT_TIMEOUT, SUBMIT_TIMEOUT)
    for chosen in (5.0, 600.0):
        client = DaemonClient(tmp_path / "s.sock", timeout=chosen)
        assert (client.timeout, client.submit_timeout) == (chosen, chosen)
