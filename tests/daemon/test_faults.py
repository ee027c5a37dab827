"""annad under faults: a full state disk.

The real daemon under uvicorn (tests/daemonfix.py) with its state directory on a REAL
2 MiB tmpfs mounted for the test (skipped, with the reason, where mounting is not
allowed) and always unmounted at teardown. The target files live outside the tmpfs,
in the daemon's temporary home. Every wait is on a condition, never a fixed sleep.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import ActionPlan
from anna_common.protocol.models import ExecEvent
from annactl.core.daemon_client import DaemonClient
from annad.backups import statefs
from annad.backups.backup import BackupRefused, BlobStore
from tests import waiting
from tests.daemonfix import IS_ROOT, RunningDaemon, layers_left, make_plan, new_daemon

WAIT_S = waiting.WAIT_S
"""Upper bound for any condition below (a failure, never a pause): the suite's one bound,
since a fixed 30 s failed under another full suite's load."""
MIB = 1024 * 1024
GATE = "until grep -qs open ~/gate; do sleep 0.02; done"
"""Ends once ``~/gate`` (there, empty, before the step runs: a captured step does not see a
file created in the real tree after its first look) holds ``open``."""


def wait_for(what: str, condition: Callable[[], Any], daemon: RunningDaemon | None = None
             ) -> Any:
    """Poll ``condition`` until it is truthy; fail with ``what`` (and the log) past WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while not (value := condition()):
        if time.monotonic() > deadline:
            log = daemon.output()[-4000:] if daemon is not None else ""
            raise AssertionError(f"timed out waiting for {what}\n{log}")
        time.sleep(0.02)
    return value


@contextlib.contextmanager
def tmpfs(directory: Path, size: str = "2m") -> Iterator[Path]:
    """A real tmpfs of ``size`` on ``directory``; unmounted afterwards, whatever happens."""
    if not IS_ROOT:
        pytest.skip("mounting a tmpfs needs root")
    directory.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs",
                           str(directory)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield directory
    finally:
        if subprocess.run(["umount", str(directory)], check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(directory)], check=False)


@pytest.fixture
def full_disk_daemon() -> Iterator[RunningDaemon]:
    """A system daemon (not started) whose state directory is a 2 MiB tmpfs."""
    daemon = new_daemon(user_mode=False)
    try:
        with tmpfs(daemon.state):
            try:
                yield daemon
            finally:
                daemon.stop()
                daemon.kill()
    finally:
        shutil.rmtree(daemon.base, ignore_errors=True)


def fill(directory: Path) -> Path:
    """Write a filler file until the file system is full; return it."""
    filler = directory / "filler"
    block = b"\xa5" * 65536
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while True:
            try:
                os.write(fd, block)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
        for size in (4096, 512, 1):  # the last partial blocks too
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, block[:size])
    finally:
        os.close(fd)
    return filler


def leftovers(state: Path) -> list[Path]:
    """Partial blobs anywhere in the state directory."""
    return sorted(state.rglob(".incoming-*"))


def submit(client: DaemonClient, plan: dict[str, Any]) -> tuple[str, str]:
    response = client.submit(ActionPlan.model_validate(plan))
    return response.plan_id, response.digest


def execute(client: DaemonClient, plan: dict[str, Any]) -> tuple[str, list[ExecEvent]]:
    plan_id, digest = submit(client, plan)
    events = list(client.execute(plan_id, digest, confirmed=True, high_confirmed=False,
                                 confirm_word=None))
    return plan_id, events


def journal_rows(daemon: RunningDaemon, sql: str, *args: object) -> list[tuple[Any, ...]]:
    """Read the daemon's journal beside its own connection."""
    db = sqlite3.connect(f"file:{daemon.state / 'journal.sqlite3'}?mode=ro", uri=True,
                         timeout=5)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def small_plan(home: Path, name: str) -> dict[str, Any]:
    return make_plan([("write", f"echo hello > {home / name}", "LOW")])


def annactl_doctor(daemon: RunningDaemon, check: str = "daemon") -> dict[str, Any]:
    """The real ``annactl doctor --json`` against this daemon: its ``check`` check."""
    env = {**daemon.env, "ANNA_SOCKET": str(daemon.socket),
           "ANNA_LLM_URL": "http://127.0.0.1:9", "ANNA_CONFIG": str(daemon.base / "none")}
    proc = subprocess.run([sys.executable, "-m", "annactl.cli", "doctor", "--json"],
                          capture_output=True, text=True, check=False, env=env, timeout=60)
    assert "Traceback" not in proc.stderr, proc.stderr
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    return dict(checks[check])


# --------------------------------------------------------------------------- tests


def test_backup_too_big_for_state_disk_is_refused_before_anything_runs(
        full_disk_daemon: RunningDaemon) -> None:
    daemon = full_disk_daemon.start()
    big = daemon.home / "big.bin"
    big.write_bytes(os.urandom(3 * MIB))
    before = big.read_bytes()
    client = daemon.client()
    plan_id, events = execute(client, make_plan([
        ("mark", f"echo first > {daemon.home / 'first.txt'}", "LOW"),
        ("grow", f"echo more >> {big}", "LOW")]))
    last = events[-1]
    assert last.status == "failed" and last.code == "BACKUP_REFUSED", last
    assert "nothing was run" in (last.message or "")
    assert "state disk" in (last.message or "")
    record = client.get_plan(plan_id)
    assert str(record.status) == "failed"
    assert record.error is not None and record.error.code == "BACKUP_REFUSED"
    # nothing ran: no step started, the target is unchanged, the first step's file absent
    assert {str(s.status) for s in record.steps} == {"pending"}
    assert big.read_bytes() == before
    assert not (daemon.home / "first.txt").exists()
    assert leftovers(daemon.state) == []
    assert client.health().state_problem is None
    # a plan whose backup fits runs at once, on the same daemon
    plan_id, events = execute(client, small_plan(daemon.home, "small.txt"))
    assert events[-1].status == "succeeded", events[-1]
    assert (daemon.home / "small.txt").read_text() == "hello\n"
    assert client.audit_verify().ok


def test_partial_blob_removed_when_the_disk_fills_during_a_backup(tmp_path: Path) -> None:
    """The size check passes (a pipe has no size), the disk fills while copying: the copy
    ends in a short write then ENOSPC, the partial blob is removed, BackupRefused."""
    with tmpfs(tmp_path / "state", "1m") as state:
        blobs = BlobStore(state / "blobs")
        read_fd, write_fd = os.pipe()
        writer = threading.Thread(target=_feed, args=(write_fd, 3 * MIB))
        writer.start()
        try:
            with pytest.raises(BackupRefused, match="state disk is full"):
                blobs.put(read_fd)
        finally:
            os.close(read_fd)
            writer.join()
        assert leftovers(state) == []
        assert list((state / "blobs").iterdir()) == []
        assert statefs.free_bytes(state) > 900 * 1024  # the room came back


def _feed(fd: int, size: int) -> None:
    with contextlib.suppress(BrokenPipeError):
        chunk = os.urandom(64 * 1024)
        sent = 0
        while sent < size:
            sent += os.write(fd, chunk)
    os.close(fd)


def test_daemon_starts_on_a_full_state_disk_and_refuses_until_room_exists(
        full_disk_daemon: RunningDaemon) -> None:
    daemon = full_disk_daemon.start()
    client = daemon.client()
    plan_id, events = execute(client, small_plan(daemon.home, "a.txt"))
    assert events[-1].status == "succeeded"
    assert daemon.stop() == 0
    filler = fill(daemon.state)
    daemon.start()  # exit 3 before: the journal could not be opened on a full disk
    health = client.health()
    assert health.state_problem is not None and "full" in health.state_problem
    with pytest.raises(AnnaError) as refused:
        submit(client, small_plan(daemon.home, "b.txt"))
    assert refused.value.code is ErrorCode.BACKUP_REFUSED, refused.value
    assert "state disk" in refused.value.message
    assert str(client.get_plan(plan_id).status) == "succeeded"  # reads still work
    doctor = annactl_doctor(daemon)
    assert doctor["status"] == "warn" and "full" in doctor["detail"], doctor
    assert "free space" in doctor["fix"]
    filler.unlink()
    wait_for("the state problem to clear", lambda: client.health().state_problem is None,
             daemon)
    _, events = execute(client, small_plan(daemon.home, "b.txt"))
    assert events[-1].status == "succeeded", events[-1]
    assert client.audit_verify().ok


@pytest.mark.parametrize("reserve_left", [True, False], ids=["reserve", "no-reserve"])
def test_killed_daemon_on_full_disk_restarts_and_marks_plan_interrupted(
        full_disk_daemon: RunningDaemon, reserve_left: bool) -> None:
    daemon = full_disk_daemon.start()
    client = daemon.client()
    (daemon.home / "gate").write_text("")
    plan_id, digest = submit(client, make_plan([
        ("one", f"echo one > {daemon.home / 'one.txt'}", "LOW"),
        ("wait", GATE, "LOW")]))
    stream = client.execute(plan_id, digest, confirmed=True, high_confirmed=False,
                            confirm_word=None)
    reader = threading.Thread(target=lambda: list(_ignore_errors(stream)), daemon=True)
    reader.start()
    wait_for("the gate step to run", lambda: journal_rows(
        daemon, "SELECT 1 FROM steps WHERE plan_id=? AND idx=1 AND status='running'",
        plan_id), daemon)
    reserve = daemon.state / statefs.RESERVE_NAME
    assert reserve.exists()
    if not reserve_left:
        reserve.unlink()  # as if the reserve had been used up already
    filler = fill(daemon.state)
    daemon.kill()
    reader.join(timeout=WAIT_S)
    (daemon.home / "gate").write_text("open\n")  # an orphan step would end now; it was killed
    daemon.start()
    status = lambda: str(client.get_plan(plan_id).status)  # noqa: E731
    if reserve_left:
        # the reserve gave the journal its room: recovery is done at start
        assert status() == "interrupted"
        assert "released the journal reserve" in daemon.output()
    else:
        assert status() == "running"
        problem = client.health().state_problem
        assert problem is not None and "not yet marked interrupted" in problem
        assert "cannot mark plans" in daemon.output()
        filler.unlink()
        wait_for("the plan to be marked interrupted", lambda: status() == "interrupted",
                 daemon)
    if reserve_left:
        filler.unlink()
    wait_for("the state problem to clear", lambda: client.health().state_problem is None,
             daemon)
    assert reserve.exists() and reserve.stat().st_size == statefs.RESERVE_BYTES
    result = client.rollback(plan_id, confirmed=True)
    assert str(result.status) == "rolled_back", result
    assert not (daemon.home / "one.txt").exists()
    assert leftovers(daemon.state) == []
    assert client.audit_verify().ok


def _ignore_errors(stream: Iterator[ExecEvent]) -> Iterator[ExecEvent]:
    with contextlib.suppress(AnnaError, OSError):
        yield from stream


def test_plan_end_reaches_the_journal_when_the_disk_fills_while_it_runs(
        full_disk_daemon: RunningDaemon) -> None:
    """The disk fills while a step runs: the step's outcome and the plan's end are written
    into the room the reserve kept; later plans are refused until there is room again."""
    daemon = full_disk_daemon.start()
    client = daemon.client()
    (daemon.home / "gate").write_text("")
    plan_id, digest = submit(client, make_plan([("wait", f"echo waiting; {GATE}", "LOW")]))
    events: list[ExecEvent] = []
    stream = client.execute(plan_id, digest, confirmed=True, high_confirmed=False,
                            confirm_word=None)
    reader = threading.Thread(target=lambda: events.extend(stream), daemon=True)
    reader.start()
    # the step itself runs (its capture is set up: the layers need the state disk too)
    wait_for("the gate step to run", lambda: any(
        e.type == "step_output" and "waiting" in (e.output or "") for e in events), daemon)
    filler = fill(daemon.state)
    (daemon.home / "gate").write_text("open\n")
    reader.join(timeout=WAIT_S)
    assert events and events[-1].status == "succeeded", events[-1:]
    assert str(client.get_plan(plan_id).status) == "succeeded"
    assert "released the journal reserve" in daemon.output()
    with pytest.raises(AnnaError) as refused:
        submit(client, small_plan(daemon.home, "c.txt"))
    assert refused.value.code is ErrorCode.BACKUP_REFUSED
    filler.unlink()
    wait_for("the reserve to be back", lambda: client.health().state_problem is None, daemon)
    assert (daemon.state / statefs.RESERVE_NAME).stat().st_size == statefs.RESERVE_BYTES
    _, done = execute(client, small_plan(daemon.home, "c.txt"))
    assert done[-1].status == "succeeded"
    assert client.audit_verify().ok


def test_a_full_disk_when_a_step_is_recorded_does_not_fail_the_step(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The daemon records a spawned step's pid while the step already runs (its output may
    be shown first): a disk filled by then is logged, never a failed and undone step (two
    suites side by side: "the confinement failed during the run: [Errno 28]" once)."""
    from annad.confine.orphans import record_process

    with tmpfs(tmp_path / "state", size="64k") as state:
        filler = fill(state)
        record = state / "plan" / "0" / "process.json"
        with caplog.at_level("WARNING", logger="annad.confine.orphans"):
            record_process(record, os.getpid())
        assert not record.exists()
        assert "does not stop it" in caplog.text
        filler.unlink()
        record_process(record, os.getpid())
        assert json.loads(record.read_text())["pid"] == os.getpid()
    (tmp_path / "file").write_text("")
    with pytest.raises(OSError) as other:  # anything but a full disk still fails the step
        record_process(tmp_path / "file" / "process.json", os.getpid())
    assert other.value.errno == errno.EEXIST


def test_step_whose_change_set_does_not_fit_the_state_disk_lands_nothing(
        full_disk_daemon: RunningDaemon) -> None:
    """The plan fits when it starts (the file does not exist yet); the step writes 3 MiB,
    more than the 2 MiB state disk that holds its captured change set: the step fails
    there, nothing of it reaches the home, no layer is left on the state disk, and the
    journal still has room (the reserve) to say so."""
    daemon = full_disk_daemon.start()
    client = daemon.client()
    grown = daemon.home / "grown.bin"
    first = daemon.home / "first.txt"
    plan_id, events = execute(client, make_plan([
        ("mark", f"echo first > {first}", "LOW"),
        ("make", f"head -c {3 * MIB} /dev/zero > {grown}", "LOW")]))
    last = events[-1]
    assert last.status == "failed", last
    finished = [e for e in events if e.type == "step_finished"]
    said = f"{finished[-1].output or ''} {finished[-1].message or ''}"
    if last.code == "OBSERVED_CHANGE_TOO_LARGE":
        # the capture's watch (a look every 50 ms) saw the layers pass half the disk's free
        # room before the write met the full disk: stopped, said so (a loaded machine)
        assert "free room" in f"{said} {last.message}", (finished[-1], last)
    else:
        # the step's own write or the capture's bookkeeping beside it meets the full disk
        # first, whichever the scheduler lets run: the step's output or the message says so
        assert last.code == "EXECUTION_FAILED", last
        assert "No space left on device" in said, finished[-1]
    steps = {str(s.step_id): str(s.status) for s in client.get_plan(plan_id).steps}
    assert steps == {"mark": "undone", "make": "failed"}, steps
    assert not grown.exists() and not first.exists()
    assert leftovers(daemon.state) == []
    assert not layers_left(daemon.state)
    assert client.health().state_problem is None


def test_journal_that_cannot_open_says_what_it_needs(full_disk_daemon: RunningDaemon) -> None:
    """No reserve left and not a block free: the journal cannot be opened; annad says why
    (exit 1, the state disk and what it needs), never a traceback, and starts once there
    is room."""
    daemon = full_disk_daemon.start()
    assert daemon.stop() == 0
    (daemon.state / statefs.RESERVE_NAME).unlink()
    filler = fill(daemon.state)
    assert daemon.proc is not None
    with pytest.raises(RuntimeError, match=r"annad exited \(1\)") as failed:
        daemon.start()
    assert "state disk" in str(failed.value) and "Traceback" not in str(failed.value)
    filler.unlink()
    daemon.start()
    assert daemon.client().health().state_problem is None
