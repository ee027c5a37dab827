"""Issue 8, daemon half: what the daemon demands and what binds the journal to what runs.

Real daemon (tests/daemonfix.py), real Unix socket, real SQLite journal edited on disk.
Class 5 (rollback commands count, at execute and at rollback), class 14 (the typed word
reaches the daemon; NFC/NFD twins), class 11 (the journal binds the annotation, and
/v1/audit/verify covers plan rows; schema migration), class 8 (health answers while big
submissions are analysed).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import ActionPlan, RiskLevel, canonical_json, plan_digest
from anna_common.protocol.models import SubmitResponse
from anna_common.risk import tiers
from annactl.core.daemon_client import DaemonClient
from annactl.ui import confirm
from annactl.ui.confirm import Tier
from annad.journal.integrity import row_hash
from annad.journal.store import _SCHEMA, GENESIS, SCHEMA_VERSION, Journal
from tests.daemonfix import RunningDaemon, http, make_plan
from tests.ui.conftest import Anna, anna  # noqa: F401 - the real annactl on a real daemon
from tests.ui.ptyrun import PtyProcess
from tests.waiting import WAIT_S, wait_until


def _submit(daemon: RunningDaemon, raw: dict[str, Any]) -> SubmitResponse:
    return daemon.client().submit(ActionPlan.model_validate(raw))


def _refused(call: Callable[[], object], code: ErrorCode) -> AnnaError:
    with pytest.raises(AnnaError) as info:
        result = call()
        if hasattr(result, "__next__"):
            list(result)  # type: ignore[call-overload]
    assert info.value.code == code, info.value
    return info.value


def _journal(daemon: RunningDaemon) -> Path:
    return daemon.state / "journal.sqlite3"


def _status(daemon: RunningDaemon, plan_id: str) -> str:
    return str(daemon.client().get_plan(plan_id).status)


# ------------------------------------------------------------------ class 5


def test_info_step_whose_rollback_writes_needs_its_confirmation(user_daemon: RunningDaemon
                                                                ) -> None:
    keep = user_daemon.home / "keep.txt"
    keep.write_text("mine")
    sub = _submit(user_daemon, make_plan([("look", "ls ~", "INFO")],
                                         rollback={"look": "rm -f ~/keep.txt"}))
    assert sub.annotated.steps[0].final_risk == RiskLevel.INFO
    assert sub.annotated.confirmations == 1
    assert confirm.requirement(sub.annotated).tier == Tier.ONE  # the client asks too
    client = user_daemon.client()
    _refused(lambda: client.execute(sub.plan_id, sub.digest, confirmed=False,
                                    high_confirmed=False), ErrorCode.CONFIRMATION_REQUIRED)
    assert _status(user_daemon, sub.plan_id) == "submitted" and keep.exists()
    events = list(client.execute(sub.plan_id, sub.digest, confirmed=True, high_confirmed=False))
    assert events[-1].status == "succeeded"


def _high_rollback_plan(daemon: RunningDaemon) -> tuple[SubmitResponse, Path]:
    precious = daemon.home / "precious"
    precious.mkdir()
    (precious / "data").write_text("keep me")
    sub = _submit(daemon, make_plan([("add", "touch ~/made.txt", "LOW")],
                                    rollback={"add": "rm -rf ~/precious"}))
    return sub, precious


def test_high_rollback_command_needs_the_word_at_execute(user_daemon: RunningDaemon) -> None:
    sub, precious = _high_rollback_plan(user_daemon)
    assert sub.annotated.final_risk == RiskLevel.HIGH and sub.annotated.confirmations == 2
    word = tiers.plan_word(sub.annotated)
    assert word == "~/precious"
    client = user_daemon.client()

    def attempt(high: bool, typed: str | None) -> Callable[[], object]:
        return lambda: client.execute(sub.plan_id, sub.digest, confirmed=True,
                                      high_confirmed=high, confirm_word=typed)

    _refused(attempt(False, None), ErrorCode.CONFIRMATION_REQUIRED)
    missing = _refused(attempt(True, None), ErrorCode.CONFIRMATION_REQUIRED)
    assert missing.detail.get("word") == "missing"
    for wrong in ("~/PRECIOUS", "precious", "~/precious/", "yes-do-it", "~/precious\u200b",
                  unicodedata.normalize("NFD", "~/pr\u00e9cious"), ""):
        _refused(attempt(True, wrong), ErrorCode.CONFIRMATION_REQUIRED)
    # an old client that sends no confirm_word field at all (raw wire)
    status, body = http(user_daemon.socket, "POST", f"/v1/plans/{sub.plan_id}/execute",
                        {"digest": sub.digest, "confirmed": True, "high_confirmed": True})
    assert status >= 400 and body["code"] == "CONFIRMATION_REQUIRED"
    assert _status(user_daemon, sub.plan_id) == "submitted"
    assert not (user_daemon.home / "made.txt").exists()
    events = list(attempt(True, f"  {word} ")())
    assert events[-1].status == "succeeded" and (user_daemon.home / "made.txt").exists()
    assert precious.exists()


def test_high_rollback_command_needs_the_word_at_rollback(user_daemon: RunningDaemon) -> None:
    sub, precious = _high_rollback_plan(user_daemon)
    client = user_daemon.client()
    word = tiers.plan_word(sub.annotated)
    list(client.execute(sub.plan_id, sub.digest, confirmed=True, high_confirmed=True,
                        confirm_word=word))
    req = confirm.rollback_requirement(client.get_plan(sub.plan_id).annotated)
    assert req.tier == Tier.TWO and req.word == "~/precious"
    _refused(lambda: client.rollback(sub.plan_id), ErrorCode.CONFIRMATION_REQUIRED)
    for wrong in ("~/Precious", "yes-do-it", " "):
        _refused(lambda w=wrong: client.rollback(sub.plan_id, confirm_word=w),  # type: ignore[misc]
                 ErrorCode.CONFIRMATION_REQUIRED)
    status, _ = http(user_daemon.socket, "POST", f"/v1/plans/{sub.plan_id}/rollback",
                     {"confirmed": True, "high_confirmed": True})
    assert status >= 400
    assert precious.exists() and _status(user_daemon, sub.plan_id) == "succeeded"
    response = client.rollback(sub.plan_id, confirm_word=req.word)
    assert not precious.exists()  # the HIGH rollback command ran once its word was given
    # every step ran captured, and none made ~/precious: what the command removed there is a
    # difference from the state before the plan, named (one undo per path, undoonce.py)
    assert str(response.status) == "rollback_incomplete"
    assert str(precious) in [u.target for u in response.undo if u.action == "verify"]


def _cli_high_rollback(anna: Anna) -> tuple[Path, Path]:  # noqa: F811
    precious = anna.daemon.home / "precious"
    precious.mkdir()
    plan = anna.plan_file(make_plan([("add", f"touch {anna.work}/made", "LOW")],
                                    rollback={"add": "rm -rf ~/precious"}))
    return precious, plan


def test_cli_info_step_with_writing_rollback_is_not_run_unasked(anna: Anna) -> None:  # noqa: F811
    keep = anna.daemon.home / "keep.txt"
    keep.write_text("x")
    plan = anna.plan_file(make_plan([("look", "ls ~", "INFO")],
                                    rollback={"look": "rm -f ~/keep.txt"}))
    proc = anna.run("apply", str(plan))  # no terminal, no --yes: an INFO-only plan would run
    assert proc.returncode == 4 and "DECLINED" in proc.stderr
    code, out = anna.json("apply", str(plan), "--yes")
    assert code == 0 and out["status"] == "succeeded" and keep.exists()


def test_cli_high_rollback_command_asks_its_word_at_execute_and_rollback(anna: Anna  # noqa: F811
                                                                         ) -> None:
    precious, plan = _cli_high_rollback(anna)
    code, _ = anna.json("apply", str(plan), "--yes")  # --yes alone: up to MEDIUM
    assert code == 4 and not (anna.work / "made").exists()
    term = PtyProcess([*anna.argv, "apply", str(plan)], anna.env)
    term.expect(r"Run this HIGH plan\? \[y/N\]")
    term.send("y\r")
    term.expect(r"Type '~/precious' to run it:")
    term.send("~/precious\r")
    assert term.wait() == 0, term.text
    assert (anna.work / "made").exists()
    plan_id = anna.daemon.client().list_plans().plans[0].plan_id
    code, _ = anna.json("rollback", plan_id, "--yes")  # the rollback command is HIGH
    assert code == 4 and precious.exists()
    term = PtyProcess([*anna.argv, "rollback", plan_id], anna.env)
    term.expect(r"Roll back plan .*\[y/N\]")
    term.send("y\r")
    term.expect(r"Type '~/precious' to run it:")
    term.send("~/PRECIOUS\r")
    assert term.wait() == 4 and precious.exists()
    code, back = anna.json("rollback", plan_id, "--yes", "--allow-high")
    assert not precious.exists()
    # it removed what no step of the plan made: not as before the plan, so never rolled_back
    assert code == 6 and back["status"] == "rollback_incomplete"


# ------------------------------------------------------------------ class 14: twins


def test_nfc_nfd_twins_have_different_digests_and_cannot_stand_in(user_daemon: RunningDaemon
                                                                  ) -> None:
    nfc_cmd = "touch ~/caf\u00e9.txt"
    nfd_cmd = unicodedata.normalize("NFD", nfc_cmd)
    nfc = _submit(user_daemon, make_plan([("t", nfc_cmd, "LOW")]))
    nfd = _submit(user_daemon, make_plan([("t", nfd_cmd, "LOW")]))
    assert nfc.digest != nfd.digest
    client = user_daemon.client()
    _refused(lambda: client.execute(nfd.plan_id, nfc.digest, confirmed=True,
                                    high_confirmed=False), ErrorCode.DIGEST_MISMATCH)
    _refused(lambda: client.execute(nfc.plan_id, nfd.digest, confirmed=True,
                                    high_confirmed=False), ErrorCode.DIGEST_MISMATCH)
    assert sorted(p.name for p in user_daemon.home.iterdir() if p.name.startswith("caf")) == []
    events = list(client.execute(nfd.plan_id, nfd.digest, confirmed=True, high_confirmed=False))
    assert events[-1].status == "succeeded"
    made = [p.name for p in user_daemon.home.iterdir() if p.name.startswith("caf")]
    assert made == ["cafe\u0301.txt"]  # exactly the bytes that were shown and hashed


# ------------------------------------------------------------------ class 11: the journal


def _edit(daemon: RunningDaemon, sql: str, *args: object) -> None:
    db = sqlite3.connect(_journal(daemon), timeout=30)
    try:
        with db:
            db.execute(sql, args)
    finally:
        db.close()


def _row(daemon: RunningDaemon, plan_id: str) -> tuple[str, str, str]:
    db = sqlite3.connect(_journal(daemon), timeout=30)
    try:
        row = db.execute("SELECT plan_json, annotated_json, digest FROM plans WHERE plan_id=?",
                         (plan_id,)).fetchone()
    finally:
        db.close()
    return row[0], row[1], row[2]


EVIL = "touch ~/pwned"


def _swap_step_only(daemon: RunningDaemon, plan_id: str) -> str | None:
    _, annotated, _ = _row(daemon, plan_id)
    data = json.loads(annotated)
    data["steps"][0]["command"] = EVIL
    _edit(daemon, "UPDATE plans SET annotated_json=? WHERE plan_id=?", json.dumps(data), plan_id)
    return None


def _swap_everything(daemon: RunningDaemon, plan_id: str) -> str | None:
    """A consistent forgery: plan_json, the annotation's plan and steps, the digest."""
    plan_json, annotated, _ = _row(daemon, plan_id)
    plan = json.loads(plan_json)
    plan["command_plan"][0]["command"] = EVIL
    digest = plan_digest(plan)
    data = json.loads(annotated)
    data["plan"] = plan
    data["digest"] = digest
    data["steps"][0]["command"] = EVIL
    _edit(daemon, "UPDATE plans SET plan_json=?, annotated_json=?, digest=? WHERE plan_id=?",
          canonical_json(plan).decode(), json.dumps(data), digest, plan_id)
    return digest


def _lower_the_tier(daemon: RunningDaemon, plan_id: str) -> str | None:
    _, annotated, _ = _row(daemon, plan_id)
    data = json.loads(annotated)
    for step in data["steps"]:
        step["final_risk"] = "INFO"
        step["requires_confirmation"] = False
    data.update(final_risk="INFO", confirmations=0, confirm_word=None)
    _edit(daemon, "UPDATE plans SET annotated_json=? WHERE plan_id=?", json.dumps(data), plan_id)
    return None


def _swap_the_scope(daemon: RunningDaemon, plan_id: str) -> str | None:
    _, annotated, _ = _row(daemon, plan_id)
    _edit(daemon, "UPDATE plans SET annotated_json=? WHERE plan_id=?",
          annotated.replace('"scope":"user"', '"scope":"system"'), plan_id)
    return None


def _change_the_home(daemon: RunningDaemon, plan_id: str) -> str | None:
    _edit(daemon, "UPDATE plans SET home='/root' WHERE plan_id=?", plan_id)
    return None


def _swap_plan_json_only(daemon: RunningDaemon, plan_id: str) -> str | None:
    plan_json, _, _ = _row(daemon, plan_id)
    plan = json.loads(plan_json)
    plan["command_plan"][0]["command"] = EVIL
    _edit(daemon, "UPDATE plans SET plan_json=? WHERE plan_id=?",
          canonical_json(plan).decode(), plan_id)
    return None


def _garbage_annotation(daemon: RunningDaemon, plan_id: str) -> str | None:
    _edit(daemon, "UPDATE plans SET annotated_json='{\"steps\": 1' WHERE plan_id=?", plan_id)
    return None


FORGERIES = {"step only": _swap_step_only, "everything": _swap_everything,
             "tier": _lower_the_tier, "scope": _swap_the_scope, "home": _change_the_home,
             "plan_json only": _swap_plan_json_only, "garbage": _garbage_annotation}


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_an_edited_plan_row_is_refused_and_nothing_runs(user_daemon: RunningDaemon,
                                                        forgery: str) -> None:
    client = user_daemon.client()
    sub = _submit(user_daemon, make_plan([("w", "rm -rf ~/victim", "HIGH")]))
    (user_daemon.home / "victim").mkdir()
    assert client.audit_verify().ok
    digest = FORGERIES[forgery](user_daemon, sub.plan_id) or sub.digest
    report = client.audit_verify()
    assert not report.ok and "altered" in report.message, report
    _refused(lambda: client.execute(sub.plan_id, digest, confirmed=True, high_confirmed=True,
                                    confirm_word=tiers.plan_word(sub.annotated)),
             ErrorCode.AUDIT_CHAIN_BROKEN)
    _refused(lambda: client.execute(sub.plan_id, digest, confirmed=False,
                                    high_confirmed=False), ErrorCode.AUDIT_CHAIN_BROKEN)
    _refused(lambda: client.run_checks(sub.plan_id), ErrorCode.AUDIT_CHAIN_BROKEN)
    assert not (user_daemon.home / "pwned").exists()
    assert (user_daemon.home / "victim").exists()
    listed = {p.plan_id: p for p in client.list_plans().plans}  # history still answers
    assert str(listed[sub.plan_id].status) == "submitted"


def test_a_reset_status_cannot_run_a_plan_twice(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    sub = _submit(user_daemon, make_plan([("w", "echo x >> ~/count.txt", "LOW")]))
    list(client.execute(sub.plan_id, sub.digest, confirmed=True, high_confirmed=False))
    assert (user_daemon.home / "count.txt").read_text() == "x\n"
    _edit(user_daemon, "UPDATE plans SET status='submitted' WHERE plan_id=?", sub.plan_id)
    report = client.audit_verify()
    assert not report.ok and "status" in report.message
    _refused(lambda: client.execute(sub.plan_id, sub.digest, confirmed=True,
                                    high_confirmed=False), ErrorCode.AUDIT_CHAIN_BROKEN)
    _refused(lambda: client.rollback(sub.plan_id), ErrorCode.AUDIT_CHAIN_BROKEN)
    assert (user_daemon.home / "count.txt").read_text() == "x\n"


@pytest.mark.parametrize("sql", [
    "UPDATE plans SET request='something else' WHERE plan_id=?",
    "UPDATE plans SET source='template' WHERE plan_id=?",
    "UPDATE plans SET caller_uid=caller_uid+1 WHERE plan_id=?",
    "DELETE FROM plans WHERE plan_id=?",
])
def test_audit_verify_covers_plan_rows(user_daemon: RunningDaemon, sql: str) -> None:
    client = user_daemon.client()
    sub = client.submit(ActionPlan.model_validate(make_plan([("w", "touch ~/a", "LOW")])),
                        request="make a file")
    list(client.execute(sub.plan_id, sub.digest, confirmed=True, high_confirmed=False))
    report = client.audit_verify()
    assert report.ok and "plans" in report.message
    _edit(user_daemon, sql, sub.plan_id)
    report = client.audit_verify()
    assert not report.ok and report.first_bad_row is not None


def test_the_chain_after_a_plan_seal_is_checked_at_execute(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    sub = _submit(user_daemon, make_plan([("w", "touch ~/a", "LOW")]))
    db = sqlite3.connect(_journal(user_daemon), timeout=30)
    try:
        row_id, body = db.execute("SELECT id, body FROM events WHERE kind='plan_submitted' AND "
                                  "plan_id=?", (sub.plan_id,)).fetchone()
    finally:
        db.close()
    # rewrite the seal so it matches an edited annotation, without recomputing the chain
    _swap_step_only(user_daemon, sub.plan_id)
    _, annotated, _ = _row(user_daemon, sub.plan_id)
    seal = json.loads(body)
    seal["annotated_sha256"] = __import__("hashlib").sha256(annotated.encode()).hexdigest()
    _edit(user_daemon, "UPDATE events SET body=? WHERE id=?", canonical_json(seal).decode(),
          row_id)
    _refused(lambda: client.execute(sub.plan_id, sub.digest, confirmed=True,
                                    high_confirmed=False), ErrorCode.AUDIT_CHAIN_BROKEN)
    assert client.audit_verify().first_bad_row == row_id
    assert not (user_daemon.home / "pwned").exists()


# ------------------------------------------------------------------ migration


def _old_journal(path: Path, request: str) -> str:
    """A schema-0 journal as the previous daemon wrote it: no seal, NFC-hashed events."""
    plan = ActionPlan.model_validate(make_plan([("w", "touch ~/a", "LOW")]))
    digest = plan.digest()
    db = sqlite3.connect(path)
    db.executescript(_SCHEMA)
    with db:
        db.execute("INSERT INTO plans VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                   ("old-1", digest, "succeeded", 1.0, 2.0, 0, "model", request, "/home/x",
                    canonical_json(plan.model_dump(mode="json")).decode(),
                    json.dumps({"not": "checked by the migration"}), None))
        prev = GENESIS
        bodies = [("plan_submitted", {"digest": digest, "caller_uid": 0, "source": "model",
                                      "steps": 1, "note": request}),
                  ("plan_succeeded", {"status": "succeeded"})]
        for row_id, (kind, body) in enumerate(bodies, start=1):
            text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            fields = {"id": row_id, "ts": float(row_id), "plan_id": "old-1", "kind": kind,
                      "step_id": None, "body": text}
            digest_row = row_hash(prev, fields, legacy=True)
            db.execute("INSERT INTO events VALUES (?,?,?,?,?,?,?,?)",
                       (row_id, float(row_id), "old-1", kind, None, text, prev, digest_row))
            prev = digest_row
    db.close()
    return "old-1"


def test_an_old_journal_is_migrated_and_sealed(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    plan_id = _old_journal(path, "caf" + "e\u0301")  # NFD text hashed the old (NFC) way
    journal = Journal(path)
    try:
        report = journal.verify()
        assert report.ok, report
        assert journal.check_plan(plan_id).status == "succeeded"
    finally:
        journal.close()
    db = sqlite3.connect(path)
    with db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        db.execute("UPDATE plans SET annotated_json='{}' WHERE plan_id=?", (plan_id,))
    db.close()
    journal = Journal(path)  # opening again does not migrate (or re-seal) a second time
    try:
        assert not journal.verify().ok
        with pytest.raises(AnnaError) as info:
            journal.check_plan(plan_id)
        assert info.value.code == ErrorCode.AUDIT_CHAIN_BROKEN
    finally:
        journal.close()


def test_a_newer_journal_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=7")
    db.close()
    with pytest.raises(AnnaError) as info:
        Journal(path)
    assert info.value.code == ErrorCode.CONFIG_INVALID and "version 7" in info.value.message


# ------------------------------------------------------------------ class 8


def _heavy(tag: int) -> dict[str, Any]:
    steps = [(f"s{i}", ";".join(f"cp ~/h{tag}x{i}y{j} ~/g{tag}x{i}y{j}" for j in range(10)),
              "LOW") for i in range(50)]
    return make_plan(steps)


def test_health_answers_while_many_big_submits_are_analysed(user_daemon: RunningDaemon
                                                           ) -> None:
    # more submits than the server's default worker pool (40): analysed on that pool, they
    # kept every sync route (health included) waiting for seconds
    count = 48
    done: list[int] = []
    failures: list[object] = []
    lock = threading.Lock()

    # queued submits wait long: the client's own timeout, not the submit default, bounds them
    slow_client = DaemonClient(user_daemon.socket, timeout=10 * WAIT_S)
    assert slow_client.submit_timeout == 10 * WAIT_S

    def submit(tag: int) -> None:
        try:
            slow_client.submit(ActionPlan.model_validate(_heavy(tag)))
        except AnnaError as exc:
            with lock:
                failures.append(exc)
            return
        with lock:
            done.append(tag)

    client = user_daemon.client()
    small = _submit(user_daemon, make_plan([("w", "touch ~/a", "LOW")]))
    threads = [threading.Thread(target=submit, args=(tag,), daemon=True) for tag in range(count)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    probes: list[tuple[float, int]] = []  # (latency, submissions finished before it answered)

    def probe_until_all_answered() -> bool:
        started = time.monotonic()
        if len(probes) % 2:  # plan status answers too, not only health
            assert client.get_plan(small.plan_id).status == "submitted"
        else:
            assert client.health().pid > 0
        latency = time.monotonic() - started
        with lock:
            probes.append((latency, len(done) + len(failures)))
        return not any(t.is_alive() for t in threads)

    wait_until(probe_until_all_answered, f"the {count} submits to be answered",
               timeout=10 * WAIT_S, saw=lambda: f"{len(done)} done, {len(failures)} failed")
    analysis = time.monotonic() - began
    assert not failures, failures[:1]
    assert len(done) == count
    # the probes overlapped the analysis: some answered while most submissions were pending
    assert sum(finished < count // 2 for _, finished in probes) >= 3, probes[:5]
    # a probe queued behind the analyses would wait for a large share of them; the bound is
    # a ratio of this run's own analysis time, so a loaded machine slows both alike
    worst = max(latency for latency, _ in probes)
    assert worst < analysis / 4, (f"health/status took {worst:.1f} s while the submissions "
                                  f"took {analysis:.1f} s")
