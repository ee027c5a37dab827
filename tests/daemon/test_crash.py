"""A daemon killed mid-plan, restarted; and a journal edited behind the daemon's back."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from pathlib import Path

from anna_common.plan import ActionPlan
from anna_common.protocol.models import ExecEvent
from tests.daemonfix import RunningDaemon, make_plan
from tests.waiting import wait_until


def test_kill_9_mid_step_then_interrupted_then_rollback(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    conf = user_daemon.home / ".config" / "app.conf"
    conf.write_text("original\n")
    conf.chmod(0o600)
    plan = make_plan([("edit", "echo edited > ~/.config/app.conf", "LOW"),
                      ("new", "echo new > ~/.config/new.conf", "LOW"),
                      ("nap", "sleep 60", "INFO")])
    submitted = client.submit(ActionPlan.model_validate(plan))
    events: list[ExecEvent] = []
    stream = client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                            high_confirmed=False)

    def read() -> None:
        with contextlib.suppress(Exception):  # the daemon dies under the reader: expected
            events.extend(stream)

    reader = threading.Thread(target=read)
    reader.start()
    wait_until(lambda: any(e.type == "step_started" and e.step_id == "nap" for e in events),
               "the nap step to start", saw=lambda: (events, user_daemon.output()))
    assert conf.read_text() == "edited\n"
    nap = _sleeping(user_daemon)
    user_daemon.kill()  # SIGKILL: no cleanup, no undo
    reader.join(timeout=10)
    # an INFO step runs in the plan's confinement helper, which dies with its daemon
    # (PR_SET_PDEATHSIG) and ends what it runs; a step that outlives it anyway (outside
    # systemd nothing else would stop it) must be stopped by the restarted daemon below

    user_daemon.start()
    client = user_daemon.client()
    record = client.get_plan(submitted.plan_id)
    assert record.status == "interrupted"
    assert [s.status for s in record.steps] == ["succeeded", "succeeded", "failed"]
    assert conf.read_text() == "edited\n"  # nothing is undone without being asked
    # the restarted daemon stopped the orphaned step
    wait_until(lambda: not _alive(nap), "the orphaned step to be stopped",
               saw=user_daemon.output)

    result = client.rollback(submitted.plan_id)
    assert result.status == "rolled_back", result.undo
    assert conf.read_text() == "original\n"
    assert conf.stat().st_mode & 0o777 == 0o600
    assert not (user_daemon.home / ".config" / "new.conf").exists()
    assert client.audit_verify().ok


def _sleeping(daemon: RunningDaemon) -> int:
    """pid of the step's `sleep 60` (recorded by the daemon in the step's backup dir)."""
    # step_started is sent just before the spawn
    records = wait_until(lambda: list(daemon.state.glob("backups/*/*/process.json")),
                         "the step's process record", saw=daemon.output)
    assert len(records) == 1, records
    return int(json.loads(records[0].read_text())["pid"])


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def test_tampered_journal_row_is_detected(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    submitted = client.submit(ActionPlan.model_validate(
        make_plan([("w", "echo x > ~/w.txt", "LOW")])))
    list(client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                        high_confirmed=False))
    report = client.audit_verify()
    assert report.ok and report.rows >= 4

    db = sqlite3.connect(user_daemon.state / "journal.sqlite3")
    with db:
        row_id, body = db.execute("SELECT id, body FROM events WHERE kind='step_finished'"
                                  ).fetchone()
        db.execute("UPDATE events SET body=? WHERE id=?",
                   (body.replace('"exit_code":0', '"exit_code":1'), row_id))
    db.close()
    report = client.audit_verify()
    assert not report.ok
    assert report.first_bad_row == row_id


def test_deleted_journal_row_is_detected(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    for _ in range(2):
        client.submit(ActionPlan.model_validate(make_plan([("w", "true", "INFO")])))
    db = sqlite3.connect(user_daemon.state / "journal.sqlite3")
    with db:
        db.execute("DELETE FROM events WHERE id=1")
    db.close()
    report = client.audit_verify()
    assert not report.ok and report.first_bad_row == 2
