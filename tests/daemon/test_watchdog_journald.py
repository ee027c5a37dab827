"""Issue 35 item 5: annad feeds systemd's watchdog from its event loop, and its log lines reach
journald with their priority and the plan they are about.

The daemon runs for real, with ``NOTIFY_SOCKET`` pointing at a datagram socket of the test's
own (what systemd gives a ``Type=notify`` unit) and ``WATCHDOG_USEC`` as ``WatchdogSec=``
sets it. The journald handler sends to a datagram socket of the test's own in journald's
native format, which the test parses. Under a real systemd: tests/systemd/test_watchdog.py.
"""

from __future__ import annotations

import logging
import os
import socket
import struct
import sys
from pathlib import Path

import pytest

from annad import logs
from annad.api.listen import watchdog_interval
from tests.daemonfix import running_daemon
from tests.waiting import wait_until


def _notify_socket(tmp_path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify"))
    sock.setblocking(False)
    return sock


def _drain(sock: socket.socket, seen: list[str]) -> list[str]:
    while True:
        try:
            seen.append(sock.recv(4096).decode())
        except BlockingIOError:
            return seen


def _process_state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_the_event_loop_pings_the_watchdog_once_serving(tmp_path: Path) -> None:
    notify = _notify_socket(tmp_path)
    # WatchdogSec=0.4s: a ping every 0.2 s
    env = {"NOTIFY_SOCKET": str(tmp_path / "notify"), "WATCHDOG_USEC": "400000"}
    try:
        with running_daemon(user_mode=True, env=env):
            seen: list[str] = []
            wait_until(lambda: sum("WATCHDOG=1" in m for m in _drain(notify, seen)) >= 3,
                       "three WATCHDOG=1 pings", saw=lambda: seen)
            ready = next(i for i, m in enumerate(seen) if "READY=1" in m)
            assert ready < seen.index("WATCHDOG=1")  # serving first, then watched
    finally:
        notify.close()


def test_no_watchdog_no_ping_and_another_pids_watchdog_is_not_ours(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    assert watchdog_interval() is None
    monkeypatch.setenv("WATCHDOG_USEC", "30000000")
    assert watchdog_interval() == 15.0  # half of WatchdogSec
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert watchdog_interval() == 15.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() + 1))  # a parent's watchdog
    assert watchdog_interval() is None
    monkeypatch.setenv("WATCHDOG_USEC", "0")
    monkeypatch.delenv("WATCHDOG_PID")
    assert watchdog_interval() is None


def _journal_fields(datagram: bytes) -> dict[str, str]:
    """journald's native format: KEY=value lines, or KEY, newline, 64-bit length, value."""
    fields: dict[str, str] = {}
    rest = datagram
    while rest:
        line, sep, tail = rest.partition(b"\n")
        if b"=" in line:
            key, _, value = line.partition(b"=")
            fields[key.decode()] = value.decode()
            rest = tail
        else:
            (size,) = struct.unpack("<Q", tail[:8])
            fields[line.decode()] = tail[8:8 + size].decode()
            rest = tail[8 + size + 1:]
        assert sep or not rest
    return fields


def test_journald_gets_the_priority_and_the_plan_of_each_line(tmp_path: Path) -> None:
    journal = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    journal.bind(str(tmp_path / "journal"))
    handler = logs.JournaldHandler(socket_path=tmp_path / "journal")
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("annad.test-journald")
    log.addHandler(handler)
    log.propagate = False
    log.setLevel(logging.DEBUG)
    try:
        log.warning("plain warning")
        logs.in_plan("P-run", lambda: log.error("inside the run: %s", "line\nwith a newline"))()
        log.critical("given explicitly", extra={"plan_id": "P-given"})
        log.info("info line")
        got = [_journal_fields(journal.recv(65536)) for _ in range(4)]
    finally:
        log.removeHandler(handler)
        journal.close()
    warning, error, critical, info = got
    assert (warning["MESSAGE"], warning["PRIORITY"], warning["SYSLOG_IDENTIFIER"]) == \
        ("plain warning", "4", "annad")
    assert "PLAN_ID" not in warning
    assert (error["PRIORITY"], error["PLAN_ID"]) == ("3", "P-run")
    assert error["MESSAGE"] == "inside the run: line\nwith a newline"
    assert (critical["PRIORITY"], critical["PLAN_ID"]) == ("2", "P-given")
    assert info["PRIORITY"] == "6" and info["LOGGER"] == "annad.test-journald"
    # the run's context does not leak into the thread that made it
    assert logs.PLAN_ID.get() is None


def test_without_journald_a_line_is_written_to_stderr_not_lost(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    handler = logs.JournaldHandler(socket_path=tmp_path / "nobody-listens")
    handler.fallback.stream = sys.stderr  # capsys's, which replaced it after the import
    record = logging.LogRecord("annad", logging.WARNING, __file__, 1, "kept %s", ("anyway",),
                               None)
    handler.handle(record)
    assert "WARNING annad: kept anyway" in capsys.readouterr().err


def test_journald_is_used_only_when_stderr_is_its_stream(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with (tmp_path / "err").open("w") as stream:
        info = os.fstat(stream.fileno())
        monkeypatch.setenv("JOURNAL_STREAM", f"{info.st_dev}:{info.st_ino}")
        assert logs.journald_stream(stream)
        monkeypatch.setenv("JOURNAL_STREAM", f"{info.st_dev}:{info.st_ino + 1}")
        assert not logs.journald_stream(stream)  # inherited, but not this stream
        monkeypatch.setenv("JOURNAL_STREAM", "garbage")
        assert not logs.journald_stream(stream)
