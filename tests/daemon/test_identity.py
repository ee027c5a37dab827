"""Socket permissions, SO_PEERCRED identity, systemd notification and a clean stop.

The second uid is ``nobody`` (65534): a tiny real client (curl) runs as nobody through
``setpriv``. The tests run as root, so the daemon's socket directory is opened up by the
test itself to let nobody reach the socket: what is checked is that the daemon, not the
file mode, keeps nobody read-only.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from anna_common.plan import ActionPlan
from tests.daemonfix import RunningDaemon, make_plan, new_daemon, running_daemon

NOBODY = 65534
needs_root_tools = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("curl"),
    reason="needs root, setpriv and curl to act as a second uid")


@pytest.mark.shared_daemon
def test_user_mode_socket_is_0600_in_a_private_dir(user_daemon: RunningDaemon) -> None:
    mode = user_daemon.socket.stat().st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    assert stat.S_IMODE(user_daemon.socket.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(user_daemon.state.stat().st_mode) == 0o700
    assert stat.S_IMODE((user_daemon.state / "journal.sqlite3").stat().st_mode) == 0o600


def test_system_mode_socket_is_0660(system_daemon: RunningDaemon) -> None:
    info = system_daemon.socket.stat()
    assert stat.S_IMODE(info.st_mode) == 0o660
    try:
        import grp

        expected = grp.getgrnam("anna").gr_gid
    except KeyError:
        expected = 0  # no group anna on this machine: root's group
    assert info.st_gid == expected
    assert stat.S_IMODE(system_daemon.socket.parent.stat().st_mode) == 0o750
    assert system_daemon.client().health().mode == "system"


def _as_nobody(daemon: RunningDaemon, method: str, path: str, body: object = None,
               *, lines: bool = False) -> tuple[int, Any]:
    argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
            "curl", "-s", "-o", "-", "-w", "\n%{http_code}", "--unix-socket", str(daemon.socket),
            "-X", method, "-H", "Content-Type: application/json"]
    if body is not None:
        argv += ["--data-binary", json.dumps(body)]
    proc = subprocess.run([*argv, f"http://annad{path}"], capture_output=True, text=True,
                          timeout=30, check=False)
    text, _, code = proc.stdout.rpartition("\n")
    if lines:
        return int(code), [json.loads(line) for line in text.splitlines() if line.strip()]
    return int(code), json.loads(text)


def _open_up(daemon: RunningDaemon) -> None:
    for directory in (daemon.base, daemon.socket.parent):
        directory.chmod(0o755)
    daemon.socket.chmod(0o666)


@needs_root_tools
def test_second_uid_is_read_only(system_daemon: RunningDaemon) -> None:
    client = system_daemon.client()
    plan = make_plan([("w", "echo x > ~/w.txt", "LOW")])
    submitted = client.submit(ActionPlan.model_validate(plan))
    _open_up(system_daemon)

    status, health = _as_nobody(system_daemon, "GET", "/v1/health")
    assert status == 200
    assert health["caller_uid"] == NOBODY and health["caller_authorised"] is False
    status, telemetry = _as_nobody(system_daemon, "GET", "/v1/telemetry")
    assert status == 200 and telemetry["telemetry"]["memory"]["total_bytes"] > 0

    for method, path, body in [
        ("POST", "/v1/plans", {"plan": plan}),
        ("POST", f"/v1/plans/{submitted.plan_id}/execute",
         {"digest": submitted.digest, "confirmed": True}),
        ("POST", f"/v1/plans/{submitted.plan_id}/rollback", {"confirmed": True}),
        ("POST", f"/v1/plans/{submitted.plan_id}/cancel", None),
        ("GET", "/v1/plans", None),
        ("GET", f"/v1/plans/{submitted.plan_id}", None),
    ]:
        status, error = _as_nobody(system_daemon, method, path, body)
        assert (status, error["code"]) == (403, "PERMISSION_DENIED"), (path, error)
    assert not (system_daemon.home / "w.txt").exists()
    assert client.get_plan(submitted.plan_id).status == "submitted"


@needs_root_tools
def test_user_mode_daemon_serves_only_its_owner(user_daemon: RunningDaemon) -> None:
    _open_up(user_daemon)
    status, error = _as_nobody(user_daemon, "GET", "/v1/health")
    assert (status, error["code"]) == (403, "PERMISSION_DENIED")
    status, error = _as_nobody(user_daemon, "GET", "/v1/telemetry")
    assert (status, error["code"]) == (403, "PERMISSION_DENIED")


def test_ready_notification_and_clean_sigterm() -> None:
    daemon = new_daemon(user_mode=True)
    notify_dir = Path(tempfile.mkdtemp(prefix="anna-n-", dir="/tmp"))
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        receiver.bind(str(notify_dir / "notify"))
        receiver.settimeout(30)
        daemon.env["NOTIFY_SOCKET"] = str(notify_dir / "notify")
        daemon.start()
        message = receiver.recv(4096).decode()
        assert "READY=1" in message.splitlines()
        assert daemon.client().health().api_version == 1  # READY meant it serves
        assert daemon.stop() == 0
        assert "STOPPING=1" in receiver.recv(4096).decode().splitlines()
        assert not daemon.socket.exists()
    finally:
        receiver.close()
        daemon.kill()
        shutil.rmtree(notify_dir, ignore_errors=True)
        shutil.rmtree(daemon.base, ignore_errors=True)


@pytest.mark.shared_daemon
def test_second_daemon_on_the_same_socket_refuses(user_daemon: RunningDaemon) -> None:
    proc = subprocess.run(user_daemon.argv, env=user_daemon.env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 1
    assert "already serving" in proc.stderr
    assert user_daemon.client().health().api_version == 1


def test_idle_exit_in_user_mode() -> None:
    daemon = new_daemon(user_mode=True, args=["--idle-exit", "1"])
    try:
        daemon.start()
        assert daemon.proc is not None
        assert daemon.proc.wait(timeout=20) == 0
        assert not daemon.socket.exists()
    finally:
        daemon.kill()
        shutil.rmtree(daemon.base, ignore_errors=True)


@needs_root_tools
def test_user_scope_steps_run_as_the_caller() -> None:
    """nobody, made an authorised member (ANNAD_GROUP=nogroup), runs a plan: as nobody."""
    with running_daemon(user_mode=False, env={"ANNAD_GROUP": "nogroup"}) as daemon:
        os.chown(daemon.home, NOBODY, NOBODY)
        _open_up(daemon)
        plan = make_plan([("who", "id -u > ~/who.txt && id -G >> ~/who.txt", "LOW")])
        status, submitted = _as_nobody(daemon, "POST", "/v1/plans", {"plan": plan})
        assert status == 200, submitted
        status, events = _as_nobody(
            daemon, "POST", f"/v1/plans/{submitted['plan_id']}/execute",
            {"digest": submitted["digest"], "confirmed": True}, lines=True)
        assert status == 200 and events[-1]["status"] == "succeeded", events
        written = daemon.home / "who.txt"
        assert written.read_text().split() == [str(NOBODY), str(NOBODY)]
        assert (written.stat().st_uid, written.stat().st_gid) == (NOBODY, NOBODY)

        root_view = daemon.client().list_plans().plans
        assert [(p.plan_id, p.caller_uid) for p in root_view] == [
            (submitted["plan_id"], NOBODY)]
        status, rolled = _as_nobody(daemon, "POST",
                                    f"/v1/plans/{submitted['plan_id']}/rollback",
                                    {"confirmed": True})
        assert status == 200 and rolled["status"] == "rolled_back", rolled
        assert not written.exists()
