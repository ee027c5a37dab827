"""Issue 34 item 6 and issue 35 item 5, the client's side: annactl checks whom it talks to
before sending anything, and tells a system daemon that is installed but not answering from
one that was never set up.

Real processes: an impostor listening as another uid (tests/ui/impostor_daemon.py, run with
``setpriv``), a real annad stopped with SIGSTOP, a socket file nobody listens on. Each
``annactl`` runs as a real subprocess in this test's temporary home.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from annactl.core.sysdaemon import DEFAULT_SOCKET, not_answering
from tests.daemonfix import REPO, running_daemon
from tests.uids import private_uid
from tests.waiting import WAIT_S, wait_until

IMPOSTOR = Path(__file__).with_name("impostor_daemon.py")


def _annactl(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "annactl.cli", *args], cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
                          capture_output=True, text=True, timeout=WAIT_S * 2, check=False)


def _json(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    body = json.loads(proc.stdout)
    assert isinstance(body, dict), proc.stdout
    return body


@pytest.fixture
def impostor() -> Iterator[tuple[Path, Path]]:
    """A socket of another uid's process answering like annad; (socket, count of bytes got)."""
    if os.geteuid() != 0:
        pytest.skip("running the impostor as another uid needs root")
    uid = private_uid()
    # a directory that uid can reach (tmp_path's parents are root's alone)
    where = Path(tempfile.mkdtemp(prefix="anna-impostor-", dir="/tmp"))
    where.chmod(0o777)
    sock, count = where / "annad.sock", where / "count"
    proc = subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                             sys.executable, "-I", str(IMPOSTOR), str(sock), str(count)])
    try:
        wait_until(lambda: (where / "listening").exists() or proc.poll() is not None,
                   "the impostor to listen")
        assert proc.poll() is None, "the impostor exited"
        yield sock, count
    finally:
        proc.kill()
        proc.wait(timeout=WAIT_S)
        shutil.rmtree(where, ignore_errors=True)


def test_a_socket_of_another_uid_gets_nothing(impostor: tuple[Path, Path]) -> None:
    sock, count = impostor
    for command in (["status", "--json"], ["history", "--json"]):
        proc = _annactl(*command, env={"ANNA_SOCKET": str(sock)})
        body = _json(proc)
        assert proc.returncode == 7 and body["code"] == "DAEMON_UNTRUSTED", proc.stdout
        assert "refusing to talk" in str(body["message"]), body
    # the impostor saw connections and not a single byte: no session, no plan, no approval
    assert count.read_text() == "0"
    # (the control: what a client does send, the impostor counts)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as control:
        control.connect(str(sock))
        control.sendall(b"GET /v1/health HTTP/1.1\r\nHost: annad\r\n\r\n")
        control.recv(4096)
    wait_until(lambda: count.read_text() not in ("", "0"), "the impostor to count the control")


def test_a_root_listener_behind_a_socket_file_another_uid_owns_is_refused(
        tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving the socket file away needs root")
    with running_daemon(user_mode=True) as daemon:
        os.chown(daemon.socket, private_uid(), -1)
        proc = _annactl("status", "--json", env={"ANNA_SOCKET": str(daemon.socket)})
        body = _json(proc)
        assert proc.returncode == 7 and body["code"] == "DAEMON_UNTRUSTED", proc.stdout
        assert "belongs to uid" in str(body["message"])
        os.chown(daemon.socket, 0, -1)
        assert _annactl("status", "--json",
                        env={"ANNA_SOCKET": str(daemon.socket)}).returncode == 0


def test_a_hung_system_daemon_is_said_not_skipped(tmp_path: Path) -> None:
    """The system socket is a real annad, stopped with SIGSTOP: the kernel still accepts
    connections, nothing answers. Before: 37 s, then a per-user daemon's view, silently."""
    with running_daemon(user_mode=True) as system:
        assert system.proc is not None
        env = {"ANNA_SYSTEM_SOCKET": str(system.socket)}
        os.kill(system.proc.pid, signal.SIGSTOP)
        try:
            for command in (["status", "--json"], ["history", "--json"]):
                proc = _annactl(*command, env=env)
                body = _json(proc)
                assert proc.returncode == 7 and body["code"] == "DAEMON_UNAVAILABLE", proc.stdout
                assert "did not answer" in str(body["message"]), body
                assert "systemctl status annad" in str(body["hint"])
                assert "annactl setup" not in proc.stdout
            # and no per-user daemon was started in its place
            runtime = Path(os.environ["XDG_RUNTIME_DIR"])
            assert not (runtime / "anna" / "annad.sock").exists()
        finally:
            os.kill(system.proc.pid, signal.SIGCONT)
        assert _annactl("status", "--json", env=env).returncode == 0  # answering again


def test_a_hung_system_daemon_is_said_with_a_per_user_daemon_running(tmp_path: Path) -> None:
    """A per-user daemon an earlier command started is still running: its view is not shown
    in the hung system daemon's place (it was, in the container, after the watchdog's
    SIGSTOP, when an earlier test had started alice's per-user daemon)."""
    with running_daemon(user_mode=True) as system, running_daemon(user_mode=True) as user:
        assert system.proc is not None
        runtime = tmp_path / "runtime"
        (runtime / "anna").mkdir(parents=True)
        # the per-user daemon's own socket, at the place annactl looks for it (a hard link:
        # a symlink is refused as not a socket)
        os.link(user.socket, runtime / "anna" / "annad.sock")
        env = {"ANNA_SYSTEM_SOCKET": str(system.socket), "XDG_RUNTIME_DIR": str(runtime)}
        answered = _json(_annactl("status", "--json", env=env))
        assert answered["socket"] == str(system.socket), answered
        os.kill(system.proc.pid, signal.SIGSTOP)
        try:
            proc = _annactl("status", "--json", env=env)
            body = _json(proc)
            assert proc.returncode == 7 and body["code"] == "DAEMON_UNAVAILABLE", proc.stdout
            assert "did not answer" in str(body["message"]), body
        finally:
            os.kill(system.proc.pid, signal.SIGCONT)
        # the per-user daemon is reached when no system daemon is set up at all
        alone = _annactl("status", "--json", env={**env, "ANNA_SYSTEM_SOCKET":
                                                   str(tmp_path / "none.sock")})
        assert alone.returncode == 0 and _json(alone)["socket"] == \
            str(runtime / "anna" / "annad.sock"), alone.stdout


def test_a_socket_nobody_listens_on_is_a_stopped_daemon(tmp_path: Path) -> None:
    stale = tmp_path / "annad.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as left:
        left.bind(str(stale))  # a daemon killed with SIGKILL leaves its socket file
    proc = _annactl("status", "--json", env={"ANNA_SYSTEM_SOCKET": str(stale)})
    body = _json(proc)
    assert proc.returncode == 7 and body["code"] == "DAEMON_UNAVAILABLE", proc.stdout
    assert "nothing listens" in str(body["message"]) and "journalctl -u annad" in \
        str(body["hint"])


def test_no_system_socket_is_not_set_up_unless_the_unit_is_installed(tmp_path: Path) -> None:
    unit = tmp_path / "annad.service"
    assert not_answering(DEFAULT_SOCKET, "absent", units=(unit,)) is None  # never set up
    unit.write_text("[Service]\n")
    error = not_answering(DEFAULT_SOCKET, "absent", units=(unit,))
    assert error is not None and "installed but not running" in error.message
    # a socket set elsewhere (ANNA_SYSTEM_SOCKET) says nothing about this machine's units
    assert not_answering(tmp_path / "elsewhere.sock", "absent", units=(unit,)) is None
    # outside group anna: the per-user daemon serves, as designed
    assert not_answering(DEFAULT_SOCKET, "denied", units=(unit,)) is None
