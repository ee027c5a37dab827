"""The single spawn site: environment, identity, timeouts, output cap, orphan handling."""

from __future__ import annotations

import os
import subprocess
import threading
import time

from annad.confine.credentials import Identity
from annad.confine.orphans import kill_orphan_group, process_start_time
from annad.confine.runner import run_argv, run_shell
from annad.confine.stepenv import step_environment
from tests.waiting import wait_until

SESSION = {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/tmp/caller-bus", "XDG_RUNTIME_DIR": "/run/u",
           "WAYLAND_DISPLAY": "wayland-1", "LANG": "de_DE.UTF-8", "HOME": "/evil"}


def test_root_steps_get_no_caller_session() -> None:
    env = step_environment(None, SESSION)
    assert "DBUS_SESSION_BUS_ADDRESS" not in env and "XDG_RUNTIME_DIR" not in env
    assert "WAYLAND_DISPLAY" not in env
    assert env["LANG"] == "de_DE.UTF-8" and "LC_ALL" not in env
    assert "LANG" not in step_environment(None, {"LANG": "/tmp/evil-locale"})


def test_user_steps_get_the_whitelisted_session_and_their_home() -> None:
    me = Identity(uid=os.geteuid(), gid=os.getegid(), home="/home/alice", user="alice")
    env = step_environment(me, SESSION)
    assert env["DBUS_SESSION_BUS_ADDRESS"] == "unix:path=/tmp/caller-bus"
    assert env["HOME"] == "/home/alice"  # never the session's HOME
    assert env["PATH"].startswith("/usr/local/sbin:")


def test_shell_runs_without_stdin_with_umask_and_tail_kept(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = run_shell("umask; read x || echo no-stdin; seq 1 20000", max_output=1024,
                       cwd=str(tmp_path))
    assert result.ok and result.truncated
    assert result.output.endswith("19999\n20000\n") and len(result.output) <= 1024
    first = run_shell("umask; read x || echo no-stdin", cwd=str(tmp_path))
    assert first.output == "0022\nno-stdin\n"


def test_timeout_kills_the_whole_process_group(tmp_path) -> None:  # type: ignore[no-untyped-def]
    marker = tmp_path / "child.pid"
    started = time.monotonic()
    # 3 s: time for a loaded machine to start bash and write the marker before the kill
    result = run_shell(f"sleep 60 & echo $! > {marker}; wait", timeout=3)
    assert result.timed_out and not result.ok
    assert time.monotonic() - started < 10
    child = int(marker.read_text())
    wait_until(lambda: process_start_time(child) is None or _zombie(child),
               f"the background child {child} to be gone")
    assert process_start_time(child) is None or _zombie(child)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:  # reaped meanwhile (ENOENT, or ESRCH mid-read): gone, not a zombie
        return False
    return text[text.rfind(")") + 2] == "Z"


def test_cancel(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    result = run_shell("sleep 30", cancel=cancel)
    assert result.cancelled and not result.ok


def test_orphan_kill_needs_the_same_start_time() -> None:
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        start = process_start_time(proc.pid)
        assert start is not None
        assert not kill_orphan_group(proc.pid, start + 1)  # a reused pid: left alone
        assert proc.poll() is None
        assert kill_orphan_group(proc.pid, start)
        assert proc.wait(timeout=5) == -9
    finally:
        if proc.poll() is None:
            proc.kill()


def test_argv_helper_has_no_shell() -> None:
    result = run_argv(["echo", "$HOME;", "x"])
    assert result.output == "$HOME; x\n"
