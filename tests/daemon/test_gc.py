"""Backup retention (``POST /v1/gc``, ``annactl gc``): what goes, what never goes unasked.

Policy decisions are tested on a real journal and real backup directories with the clock
given to :meth:`Retention.select` (plan rows are sealed in the audit chain: they cannot be
aged by editing them); the daemon tests run real plans with ``keep_days=0``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from anna_common.errors import ErrorCode
from anna_common.protocol.models import PlanStatus
from annad.execution import retention
from annad.execution.retention import DAY_S, Policy, Retention
from annad.journal.rows import PlanRow
from annad.journal.store import Journal
from tests.daemon.test_execute import refused, run
from tests.daemonfix import (
    REPO,
    RunningDaemon,
    http,
    make_plan,
    new_daemon,
    running_daemon,
    stop_and_remove,
)

NOBODY = 65534


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[Journal, Path]]:
    journal = Journal(tmp_path / "journal.sqlite3")
    try:
        yield journal, tmp_path / "backups"
    finally:
        journal.close()


def _plan(journal: Journal, backups: Path, name: str, status: PlanStatus, size: int) -> str:
    now = time.time()
    row = PlanRow(plan_id=name, digest="0" * 64, status=PlanStatus.SUBMITTED, created_at=now,
                  updated_at=now, caller_uid=0, source="model", request="", home="/tmp",
                  plan_json="{}", annotated_json="{}", error=None)
    journal.add_plan(row, [])
    journal.set_plan_status(name, status)
    blob = backups / name / "blobs" / "ab"
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"x" * size)
    return name


def _ids(items: list) -> list[str]:  # type: ignore[type-arg]
    return [i.plan_id for i in items]


def test_age_removes_only_plans_that_cannot_be_rolled_back(store: tuple[Journal, Path]
                                                           ) -> None:
    journal, backups = store
    gc = Retention(journal=journal, backups=backups, policy=Policy(keep_days=30, max_bytes=0))
    undone = _plan(journal, backups, "p-undone", PlanStatus.ROLLED_BACK, 10)
    failed = _plan(journal, backups, "p-failed", PlanStatus.FAILED, 10)
    kept = {s: _plan(journal, backups, f"p-{s}", s, 10) for s in retention.ROLLBACKABLE}
    refused_ = _plan(journal, backups, "p-refused", PlanStatus.REFUSED, 10)
    assert gc.measure() == 3 + len(kept)  # each plan's own directory, once
    assert gc.measure() == 0
    assert journal.backups_total() == 10 * (3 + len(kept))
    now = time.time()
    # max_bytes=0: everything removable goes by size, nothing rollbackable ever does
    chosen = gc.select(include_rollbackable=False, now=now)
    assert sorted(_ids(chosen)) == sorted([undone, failed, refused_])
    assert {c.reason for c in chosen} == {"size"}
    gc.policy = Policy(keep_days=30, max_bytes=10**9)
    assert gc.select(include_rollbackable=False, now=now + 29 * DAY_S) == []
    late = gc.select(include_rollbackable=False, now=now + 31 * DAY_S)
    assert sorted(_ids(late)) == sorted([undone, failed, refused_])
    assert {c.reason for c in late} == {"age"}
    with_rb = gc.select(include_rollbackable=True, now=now + 31 * DAY_S)
    assert set(_ids(with_rb)) == {undone, failed, refused_, *kept.values()}
    gc.remove(late, by_uid=0)
    assert sorted(p.name for p in backups.iterdir()) == sorted(kept.values())
    assert journal.backups_total() == 10 * len(kept)  # the removed plans' sizes left the total
    assert retention.gone(journal, undone) is not None
    assert retention.gone(journal, kept[PlanStatus.SUCCEEDED]) is None
    assert journal.verify().ok  # the removals are chained events


def test_max_bytes_trims_the_oldest_first(store: tuple[Journal, Path]) -> None:
    journal, backups = store
    names = [_plan(journal, backups, f"p{i}", PlanStatus.ROLLED_BACK, 1000) for i in range(3)]
    big = _plan(journal, backups, "p-succeeded", PlanStatus.SUCCEEDED, 5000)
    gc = Retention(journal=journal, backups=backups,
                   policy=Policy(keep_days=1000, max_bytes=6500))
    gc.measure()
    chosen = gc.select(include_rollbackable=False, now=time.time())
    assert _ids(chosen) == names[:2]  # 8000 → 7000 → 6000, oldest first; never the big one
    assert [c.bytes for c in chosen] == [1000, 1000]
    assert big not in _ids(chosen)


def _system(env: dict[str, str] | None = None) -> RunningDaemon:
    return new_daemon(user_mode=False, env={"ANNAD_BACKUP_KEEP_DAYS": "0",
                                            "ANNAD_BACKUP_KEEP_MAX_BYTES": "0",
                                            "ANNAD_GROUP": "nogroup", **(env or {})})


def _edit_plan(name: str, *, fail: bool = False) -> dict:  # type: ignore[type-arg]
    steps = [("edit", f"sed -i s/one/two/ ~/{name}", "LOW")]
    if fail:
        steps.append(("boom", "false", "LOW"))
    return make_plan(steps, goal=f"edit {name}")


def test_daemon_policy_then_asked_removal_then_rollback_refused() -> None:
    with running_daemon(user_mode=True, env={"ANNAD_BACKUP_KEEP_DAYS": "0",
                                             "ANNAD_BACKUP_KEEP_MAX_BYTES": "0"}) as daemon:
        client = daemon.client()
        for name in ("a.conf", "b.conf"):
            (daemon.home / name).write_text("one\n")
        failed_id, events = run(client, _edit_plan("a.conf", fail=True))
        assert events[-1].status == "failed"
        done_id, events = run(client, _edit_plan("b.conf"))
        assert events[-1].status == "succeeded"
        backups = daemon.state / "backups"
        # the run's end applied the policy: the failed (already undone) plan's backups
        # are gone although just finished; the succeeded one is kept although over both limits
        assert not (backups / failed_id).exists()
        assert (backups / done_id).is_dir()
        again = client.gc()
        assert again.removed == [] and again.kept_rollbackable == [done_id]

        preview = client.gc(dry_run=True, include_rollbackable=True, plan_ids=[done_id])
        assert _ids(preview.removed) == [done_id] and preview.bytes_freed > 0
        assert (backups / done_id).is_dir()  # a dry run removes nothing
        not_asked = client.gc(plan_ids=[done_id])  # named, but rollbackable not allowed
        assert not_asked.removed == [] and (backups / done_id).is_dir()

        removed = client.gc(include_rollbackable=True, plan_ids=[done_id])
        assert _ids(removed.removed) == [done_id] and removed.removed[0].reason == "asked"
        assert not (backups / done_id).exists()
        error = refused(lambda: client.rollback(done_id), ErrorCode.PLAN_STATE)
        assert "removed by gc" in error.message
        assert (daemon.home / "b.conf").read_text() == "two\n"  # nothing was changed
        assert client.get_plan(done_id).status == "succeeded"  # history keeps the plan
        assert client.audit_verify().ok


def _gc_as(uid: int, socket: Path, body: dict) -> tuple[int, str]:  # type: ignore[type-arg]
    script = ("import http.client, json, socket, sys\n"
              "conn = http.client.HTTPConnection('annad', timeout=60)\n"
              "conn.sock = socket.socket(socket.AF_UNIX); conn.sock.connect(sys.argv[1])\n"
              "conn.request('POST', '/v1/gc', body=sys.argv[2],"
              " headers={'Content-Type': 'application/json'})\n"
              "reply = conn.getresponse(); print(reply.status); print(reply.read().decode())\n")
    import json

    done = subprocess.run(["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups",
                           sys.executable, "-I", "-c", script, str(socket), json.dumps(body)],
                          check=False, capture_output=True, text=True, cwd="/", timeout=90)
    status, _, rest = done.stdout.partition("\n")
    assert status.isdigit(), done.stdout + done.stderr
    return int(status), rest


@pytest.mark.skipif(os.geteuid() != 0, reason="needs a second uid")
def test_another_user_cannot_gc_someone_elses_plan() -> None:
    daemon = _system()
    daemon.base.chmod(0o711)
    try:
        daemon.start()
        client = daemon.client()
        (daemon.home / "c.conf").write_text("one\n")
        plan_id, events = run(client, _edit_plan("c.conf"))
        assert events[-1].status == "succeeded"
        status, body = _gc_as(NOBODY, daemon.socket, {"include_rollbackable": True,
                                                      "plan_ids": [plan_id]})
        assert status == 404 and "PLAN_NOT_FOUND" in body, body
        status, body = _gc_as(NOBODY, daemon.socket, {"include_rollbackable": True})
        assert status == 200 and plan_id not in body, body
        assert (daemon.state / "backups" / plan_id).is_dir()
        status, body = http(daemon.socket, "POST", "/v1/gc", {"plan_ids": ["../../etc"]})
        assert status == 404, body
    finally:
        stop_and_remove(daemon)


def test_gc_cli_json_and_confirmation() -> None:
    with running_daemon(user_mode=True) as daemon:
        client = daemon.client()
        (daemon.home / "d.conf").write_text("one\n")
        plan_id, _ = run(client, _edit_plan("d.conf"))
        env = {**daemon.env, "ANNA_SOCKET": str(daemon.socket), "ANNA_AUTOSTART": "0"}

        def annactl(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "annactl.cli", *args], env=env,
                                  capture_output=True, text=True, cwd=str(REPO), timeout=120,
                                  stdin=subprocess.DEVNULL, check=False)

        declined = annactl("gc", plan_id)
        assert declined.returncode == 4, declined.stdout + declined.stderr  # DECLINED
        preview = annactl("gc", "--dry-run", plan_id)
        assert preview.returncode == 0 and "Would remove" in preview.stdout, preview.stderr
        assert (daemon.state / "backups" / plan_id).is_dir()
        done = annactl("gc", plan_id, "--yes", "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        import json

        document = json.loads(done.stdout)
        assert [r["plan_id"] for r in document["removed"]] == [plan_id]
        assert not (daemon.state / "backups" / plan_id).exists()
