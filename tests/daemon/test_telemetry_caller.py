"""Class 13: a non-root caller sees other users' process names, never their command lines.

The stand-ins are real processes of another uid whose argv carries a secret.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import pytest

from anna_common.telemetry import ProcessesInfo
from annad.telemetry.processes import _report, _scan, for_caller
from tests.daemonfix import new_daemon

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not Path("/usr/bin/python3").exists(),
                                reason="starts processes as other uids")
NOBODY = 65534
OTHER = 2  # "daemon" on most systems: neither root nor the caller


def _as(uid: int, argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["setpriv", "--reuid", str(uid), "--regid", str(uid),
                             "--clear-groups", *argv], cwd="/", start_new_session=True)


def _end(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.fixture
def secret_process() -> Iterator[tuple[int, str]]:
    """A process of uid 2 whose command line holds a secret: (pid, secret)."""
    secret = f"--password=anna-{secrets.token_hex(8)}"
    proc = _as(OTHER, ["/bin/sh", "-c", "sleep 300; :", secret])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if psutil.Process(proc.pid).uids().real == OTHER:
                    break
            except psutil.Error:
                pass
            time.sleep(0.02)
        yield proc.pid, secret
    finally:
        _end(proc)


def test_for_caller_hides_other_users_command_lines(secret_process: tuple[int, str]) -> None:
    pid, secret = secret_process
    rows = [r for r in _scan() if r.proc.pid == pid]
    assert rows, "the stand-in is not in the process table"
    report = _report(rows[0], psutil.virtual_memory().total, {})
    assert secret in report.cmdline  # collected faithfully ...
    info = ProcessesInfo(count=1, top_cpu=[report], top_memory=[report])
    for uid, shown in ((0, True), (OTHER, True), (NOBODY, False), (1000, False)):
        seen = for_caller(info, uid)
        for proc in (*seen.top_cpu, *seen.top_memory):
            assert proc.name == report.name and proc.pid == pid  # ... the name always shows
            assert (secret in proc.cmdline) is shown, (uid, proc.cmdline)
    assert secret in info.top_memory[0].cmdline  # the shared snapshot is not changed


def _telemetry_as(uid: int, socket_path: Path) -> str:
    script = ("import http.client, socket, sys\n"
              "conn = http.client.HTTPConnection('annad', timeout=60)\n"
              "conn.sock = socket.socket(socket.AF_UNIX); conn.sock.connect(sys.argv[1])\n"
              "conn.request('GET', '/v1/telemetry?fresh=1')\n"
              "reply = conn.getresponse(); print(reply.status); print(reply.read().decode())\n")
    done = subprocess.run(["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups",
                           "/usr/bin/python3", "-I", "-c", script, str(socket_path)],
                          check=False, capture_output=True, text=True, cwd="/", timeout=90)
    status, _, body = done.stdout.partition("\n")
    assert status == "200", done.stdout + done.stderr
    return body


def test_daemon_serves_names_not_command_lines_to_non_root() -> None:
    """The real system daemon: nobody asks for telemetry while a big process of uid 2 runs."""
    secret = f"--token=anna-{secrets.token_hex(8)}"
    hog = _as(OTHER, ["/usr/bin/python3", "-c",
                      "import time; b = b'x' * 400_000_000; time.sleep(300)", secret])
    daemon = new_daemon(user_mode=False, env={"ANNAD_GROUP": "nogroup"})
    daemon.base.chmod(0o711)
    try:
        deadline = time.monotonic() + 30
        while psutil.Process(hog.pid).memory_info().rss < 350_000_000:
            assert time.monotonic() < deadline, "the stand-in did not grow"
            time.sleep(0.05)
        daemon.start()
        for _ in range(2):  # the second collection has CPU figures
            body = _telemetry_as(NOBODY, daemon.socket)
        assert secret not in body
        processes = json.loads(body)["telemetry"]["processes"]
        listed = processes["top_cpu"] + processes["top_memory"]
        others = [p for p in listed if p["user"] != "nobody"]
        assert others and all(p["cmdline"] == "" for p in others)
        assert all(p["name"] for p in others)
        full = daemon.client().telemetry(fresh=True).telemetry.processes
        root_view = {p.pid: p.cmdline for p in (*full.top_cpu, *full.top_memory)}
        assert any(root_view.values())  # root still sees command lines
        if hog.pid in root_view:
            assert secret in root_view[hog.pid]
            assert any(p["pid"] == hog.pid and p["cmdline"] == "" for p in listed)
    finally:
        _end(hog)
        daemon.stop()
        daemon.kill()
        shutil.rmtree(daemon.base, ignore_errors=True)
