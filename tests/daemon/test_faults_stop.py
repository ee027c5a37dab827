"""Stopping annad while it works: SIGTERM mid-rollback and mid-apply, a daemon that never
comes back, and a plan refused because another one runs.

The real daemon under uvicorn (tests/daemonfix.py), real SIGTERM and SIGKILL, the real
``annactl`` as a subprocess; everything in the daemon's temporary directory. Slow steps
and slow undo commands wait on *gate files* the test creates, so the test decides when
each one may end, and every wait is on a condition (journal rows, the daemon's log, the
client's output), never on a fixed sleep.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from anna_common.plan import ActionPlan
from anna_common.protocol.models import RollbackResponse
from tests import waiting
from tests.daemonfix import (
    RunningDaemon,
    kill_left_steps,
    make_plan,
    running_daemon,
    step_processes,
)

STEPS = 5
WAIT_S = waiting.WAIT_S
"""Upper bound for any condition below (a failure, never a pause): the suite's one bound,
since a fixed 30 s failed under another full suite's load."""
GATE = "until grep -qs open ~/gate-{n}; do sleep 0.02; done"
"""A command that ends once the test writes ``open`` into ``~/gate-N``. A step runs captured,
over an overlay of the real tree: a file created there after its first look stays unseen
(the overlay caches the miss), so a step's gate exists, empty, before the step starts
(:func:`close_gates`) and opens by its content; an undo command runs captured too (a
rollback command is judged like a step), so its gate is made before the rollback
(:func:`apply`)."""


def wait_for(what: str, condition: Callable[[], Any], *, daemon: RunningDaemon | None = None,
             timeout: float = WAIT_S) -> Any:
    """Poll ``condition`` until it is truthy; fail with ``what`` (and the log) past timeout."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            log = daemon.output()[-4000:] if daemon is not None else ""
            raise AssertionError(f"timed out waiting for {what}\n{log}")
        time.sleep(0.02)
    return value


def journal(daemon: RunningDaemon, sql: str, *args: object) -> list[tuple[Any, ...]]:
    """Read the daemon's journal (read-only, beside the daemon's own connection)."""
    db = sqlite3.connect(f"file:{daemon.state / 'journal.sqlite3'}?mode=ro", uri=True,
                         timeout=5)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def step_states(daemon: RunningDaemon, plan_id: str) -> list[str]:
    return [r[0] for r in journal(daemon, "SELECT status FROM steps WHERE plan_id=? "
                                  "ORDER BY idx", plan_id)]


def undone_steps(daemon: RunningDaemon, plan_id: str) -> list[str]:
    """Steps whose undo actions are journalled, in the order they were undone."""
    rows = journal(daemon, "SELECT step_id FROM undo WHERE plan_id=? ORDER BY seq", plan_id)
    return list(dict.fromkeys(r[0] for r in rows))


def originals(home: Path) -> dict[Path, bytes]:
    """Five files with distinct contents, one per step."""
    files = {}
    for n in range(1, STEPS + 1):
        path = home / f"f{n}.txt"
        path.write_bytes(f"original {n}\n".encode() + bytes([n]) * n)
        files[path] = path.read_bytes()
    return files


def slow_undo_plan() -> dict[str, Any]:
    """Five steps that each change a file; each step's undo waits for its gate."""
    return make_plan([(f"s{n}", f"echo changed-{n} > ~/f{n}.txt", "LOW")
                      for n in range(1, STEPS + 1)],
                     rollback={f"s{n}": GATE.format(n=n) for n in range(1, STEPS + 1)})


def apply(daemon: RunningDaemon, plan: dict[str, Any]) -> str:
    client = daemon.client()
    submitted = client.submit(ActionPlan.model_validate(plan))
    events = list(client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                                 high_confirmed=False))
    assert events[-1].status == "succeeded", events[-1]
    close_gates(daemon.home, *range(1, STEPS + 1))  # the undo commands' gates, before the undo
    return submitted.plan_id


@contextlib.contextmanager
def rolling_back(daemon: RunningDaemon, plan_id: str) -> Iterator[dict[str, Any]]:
    """A rollback request in a thread; yields a box that gets ``result`` or ``error``."""
    box: dict[str, Any] = {}
    client = daemon.client()

    def call() -> None:
        try:
            box["result"] = client.rollback(plan_id)
        except Exception as exc:  # reported by the test
            box["error"] = exc

    thread = threading.Thread(target=call)
    thread.start()
    try:
        yield box
    finally:
        thread.join(WAIT_S)
        assert not thread.is_alive(), "the rollback request never returned"


def at_gate(daemon: RunningDaemon, n: int) -> bool:
    """Whether an undo command of ``daemon`` waits at gate ``n`` now (it runs captured, before
    its step's files are restored: one undo per path)."""
    for pid in step_processes(daemon):
        with contextlib.suppress(OSError):
            if f"gate-{n}".encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                return True
    return False


def sigterm_while_undoing_s4(daemon: RunningDaemon, plan_id: str) -> None:
    """Wait until s5 is undone and s4's undo command waits at its gate, then SIGTERM."""
    wait_for("s5 undone", lambda: undone_steps(daemon, plan_id) == ["s5"], daemon=daemon)
    wait_for("s4's undo command at its gate", lambda: at_gate(daemon, 4), daemon=daemon)
    assert daemon.proc is not None
    daemon.proc.send_signal(15)
    wait_for("the daemon to start stopping", lambda: "stopping: new plans are refused"
             in daemon.output(), daemon=daemon)


def open_gates(home: Path, *numbers: int) -> None:
    for n in numbers:
        (home / f"gate-{n}").write_text("open\n")


def close_gates(home: Path, *numbers: int) -> None:
    """Gates a step will wait at: there, empty, before it starts."""
    for n in numbers:
        (home / f"gate-{n}").write_text("")


def exited(daemon: RunningDaemon) -> int:
    assert daemon.proc is not None
    try:
        return daemon.proc.wait(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"annad did not exit\n{daemon.output()[-4000:]}") from None


# --------------------------------------------------------------------------- rollback


def test_sigterm_mid_rollback_within_grace_undoes_every_step() -> None:
    with running_daemon(user_mode=True, env={"ANNAD_STOP_GRACE_S": "60"}) as daemon:
        files = originals(daemon.home)
        plan_id = apply(daemon, slow_undo_plan())
        assert all(not p.read_bytes().startswith(b"original") for p in files)
        open_gates(daemon.home, 5)
        with rolling_back(daemon, plan_id) as box:
            sigterm_while_undoing_s4(daemon, plan_id)
            # within the grace the daemon still answers reads and says what runs
            health = daemon.client().health()
            assert health.running_plan == plan_id
            open_gates(daemon.home, 1, 2, 3, 4)
        assert "error" not in box, box
        result: RollbackResponse = box["result"]
        assert result.status == "rolled_back"
        assert exited(daemon) == 0
        assert {p: p.read_bytes() for p in files} == files  # byte-exact
        assert step_states(daemon, plan_id) == ["undone"] * STEPS
        assert journal(daemon, "SELECT status FROM plans WHERE plan_id=?", plan_id) == [
            ("rolled_back",)]
        assert "closed database" not in daemon.output()


def test_sigterm_mid_rollback_past_grace_is_interrupted_and_restart_offers_the_rest(
        ) -> None:
    with running_daemon(user_mode=True, env={"ANNAD_STOP_GRACE_S": "0.5"}) as daemon:
        files = originals(daemon.home)
        plan_id = apply(daemon, slow_undo_plan())
        open_gates(daemon.home, 5)
        with rolling_back(daemon, plan_id) as box:
            sigterm_while_undoing_s4(daemon, plan_id)
            wait_for("the grace to run out", lambda: "still rolling back after the"
                     in daemon.output(), daemon=daemon)
            open_gates(daemon.home, 4)  # the step being undone ends; nothing after it starts
        assert "error" not in box, box
        assert box["result"].status == "interrupted"
        assert exited(daemon) == 0
        # what was undone is journalled; the rest is as the plan left it
        assert undone_steps(daemon, plan_id) == ["s5", "s4"]
        assert step_states(daemon, plan_id) == ["succeeded"] * 3 + ["undone"] * 2
        status, error = journal(daemon, "SELECT status, error_json FROM plans "
                                "WHERE plan_id=?", plan_id)[0]
        assert status == "interrupted"
        assert json.loads(error)["detail"]["not_undone"] == ["s3", "s2", "s1"]
        paths = sorted(files)
        assert [p.read_bytes() == files[p] for p in paths] == [False] * 3 + [True] * 2
        assert "closed database" not in daemon.output()

        daemon.start()  # the next start offers the rollback of what is left
        assert f"plan {plan_id} is interrupted: `annactl rollback {plan_id}`" in \
            daemon.output()
        client = daemon.client()
        assert client.get_plan(plan_id).status == "interrupted"
        open_gates(daemon.home, 1, 2, 3)
        second = client.rollback(plan_id)
        assert second.status == "rolled_back", second.undo
        assert [u.step_id for u in second.undo if u.action == "rollback_command"] == [
            "s3", "s2", "s1"]  # only what was left
        assert {p: p.read_bytes() for p in files} == files
        assert client.audit_verify().ok


def test_cancel_during_a_rollback_stops_it_between_steps(user_daemon: RunningDaemon) -> None:
    files = originals(user_daemon.home)
    plan_id = apply(user_daemon, slow_undo_plan())
    open_gates(user_daemon.home, 5)
    cancelled: dict[str, Any] = {}
    with rolling_back(user_daemon, plan_id) as box:
        wait_for("s5 undone", lambda: undone_steps(user_daemon, plan_id) == ["s5"],
                 daemon=user_daemon)
        wait_for("s4's undo to be waiting", lambda: at_gate(user_daemon, 4), daemon=user_daemon)
        canceller = threading.Thread(target=lambda: cancelled.update(
            record=user_daemon.client().cancel(plan_id)))
        canceller.start()
        wait_for("the cancel to arrive", lambda: f"plan {plan_id}: cancel asked"
                 in user_daemon.output(), daemon=user_daemon)
        open_gates(user_daemon.home, 4)
        canceller.join(WAIT_S)
    assert box["result"].status == "interrupted"
    assert cancelled["record"].status == "interrupted"
    assert undone_steps(user_daemon, plan_id) == ["s5", "s4"]
    open_gates(user_daemon.home, 1, 2, 3, 4)
    assert user_daemon.client().rollback(plan_id).status == "rolled_back"
    assert {p: p.read_bytes() for p in files} == files


# --------------------------------------------------------------------------- one grace


def test_the_event_stream_lives_through_the_grace_not_5_s() -> None:
    """uvicorn used to cut every connection 5 s after SIGTERM while the plan went on."""
    with running_daemon(user_mode=True, env={"ANNAD_STOP_GRACE_S": "60"}) as daemon:
        client = daemon.client()
        close_gates(daemon.home, 1)
        plan = make_plan([("tick", "until grep -qs open ~/gate-1; do echo tick; sleep 0.2; "
                           "done", "LOW")])
        submitted = client.submit(ActionPlan.model_validate(plan))
        events: list[Any] = []
        failure: list[BaseException] = []

        def read() -> None:
            try:
                events.extend(client.execute(submitted.plan_id, submitted.digest,
                                             confirmed=True, high_confirmed=False))
            except BaseException as exc:  # reported below
                failure.append(exc)

        reader = threading.Thread(target=read)
        reader.start()
        wait_for("output", lambda: any(e.type == "step_output" for e in events), daemon=daemon)
        assert daemon.proc is not None
        daemon.proc.send_signal(15)
        stopped = time.time()
        # output produced 8 s after SIGTERM still reaches the client (the old cut was at 5 s)
        wait_for("output from 8 s after SIGTERM", lambda: failure or any(
            e.type == "step_output" and e.ts > stopped + 8 for e in events), daemon=daemon)
        assert not failure, failure
        open_gates(daemon.home, 1)
        reader.join(WAIT_S)
        assert not failure, failure
        assert events[-1].type == "plan_finished" and events[-1].status == "succeeded"
        assert exited(daemon) == 0


# --------------------------------------------------------------------------- the client


def test_annactl_rollback_stopped_past_the_grace_says_what_is_left() -> None:
    with running_daemon(user_mode=True, env={"ANNAD_STOP_GRACE_S": "0.5"}) as daemon:
        files = originals(daemon.home)
        plan_id = apply(daemon, slow_undo_plan())
        open_gates(daemon.home, 5)
        err = daemon.base / "annactl.err"
        with err.open("w") as stderr:
            proc = subprocess.Popen([sys.executable, "-m", "annactl.cli", "rollback", plan_id,
                                     "--yes"], stdout=subprocess.PIPE, stderr=stderr,
                                    text=True, env=cli_env(daemon), cwd=str(daemon.base))
        sigterm_while_undoing_s4(daemon, plan_id)
        wait_for("the grace to run out", lambda: "still rolling back after the"
                 in daemon.output(), daemon=daemon)
        open_gates(daemon.home, 4)
        code, out, text = finish(proc, err)
        assert exited(daemon) == 0
        assert code == 6, (out, text)  # a rollback not done in full
        flat = " ".join(out.split())
        assert "interrupted" in flat, out
        assert f"annactl rollback {plan_id}" in flat, out
        assert sum(p.read_bytes() == files[p] for p in files) == 2



def cli_env(daemon: RunningDaemon, **extra: str) -> dict[str, str]:
    return {**daemon.env, "ANNA_SOCKET": str(daemon.socket), "ANNA_AUTOSTART": "false",
            "COLUMNS": "200", **extra}


def start_apply(daemon: RunningDaemon, plan: dict[str, Any], **env: str
                ) -> tuple[subprocess.Popen[str], Path]:
    """``annactl apply FILE --yes`` as a subprocess; its stderr goes to a file we can poll
    (the gate a step of the plan waits at is closed first)."""
    close_gates(daemon.home, 1)
    path = daemon.base / "plan.json"
    path.write_text(json.dumps(plan))
    err = daemon.base / "annactl.err"
    with err.open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "annactl.cli", "apply", str(path),
                                 "--yes"], stdout=subprocess.PIPE, stderr=stderr, text=True,
                                env=cli_env(daemon, **env), cwd=str(daemon.base))
    return proc, err


def finish(proc: subprocess.Popen[str], err: Path) -> tuple[int, str, str]:
    try:
        out, _ = proc.communicate(timeout=WAIT_S * 2)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"annactl did not end\n{err.read_text()}") from None
    text = err.read_text()
    assert "Traceback" not in text, text
    return proc.returncode, out, text


def gated_plan() -> dict[str, Any]:
    return make_plan([("one", "echo one > ~/one.txt", "LOW"),
                      ("two", GATE.format(n=1) + "; echo two > ~/two.txt", "LOW")])


def running_plan_id(daemon: RunningDaemon) -> str:
    rows = wait_for("step two to run", lambda: journal(
        daemon, "SELECT plan_id FROM steps WHERE step_id='two' AND status='running'"),
        daemon=daemon)
    return str(rows[0][0])


def test_apply_during_sigterm_reports_the_plans_real_end_after_a_restart() -> None:
    with running_daemon(user_mode=True, env={"ANNAD_STOP_GRACE_S": "60"}) as daemon:
        proc, err = start_apply(daemon, gated_plan())
        plan_id = running_plan_id(daemon)
        assert daemon.proc is not None
        daemon.proc.send_signal(15)
        wait_for("the daemon to start stopping", lambda: "stopping: new plans are refused"
                 in daemon.output(), daemon=daemon)
        open_gates(daemon.home, 1)  # the plan ends within the grace; the stream is not cut
        assert exited(daemon) == 0
        daemon.start()  # as `systemctl restart annad` would
        code, out, text = finish(proc, err)
        assert code == 0, (out, text)
        assert "succeeded" in out, (out, text)
        assert (daemon.home / "two.txt").read_text() == "two\n"
        assert daemon.client().get_plan(plan_id).status == "succeeded"


def test_apply_past_the_grace_is_cancelled_undone_and_reported() -> None:
    with running_daemon(user_mode=True, env={"ANNAD_STOP_GRACE_S": "0.5"}) as daemon:
        # not restarted: after the plan's last event annactl waits 1 s, then reports the
        # outcome the plan's own events gave
        proc, err = start_apply(daemon, gated_plan(), ANNA_RECONNECT_WAIT_S="1")
        running_plan_id(daemon)
        assert daemon.proc is not None
        daemon.proc.send_signal(15)  # the step never ends by itself: cancelled, undone
        code, out, text = finish(proc, err)
        assert exited(daemon) == 0
        assert code == 5, (out, text)  # a step did not finish; the plan was undone
        flat = " ".join(out.split())
        assert "Result: rolled_back" in flat, out
        # the journal's record if annactl read it before the daemon closed, else the stream's
        assert "this is the plan's own event stream" in flat or "Rollback" in out, out
        # step two was cancelled while it ran captured: nothing of it landed, no undo
        assert "undone one" in text and "undone two" not in text, text
        assert not (daemon.home / "one.txt").exists()
        assert not (daemon.home / "two.txt").exists()


def test_apply_when_the_daemon_dies_waits_for_it_and_reports_interrupted() -> None:
    with running_daemon(user_mode=True) as daemon:
        proc, err = start_apply(daemon, gated_plan())
        plan_id = running_plan_id(daemon)
        daemon.kill()  # the stream breaks mid-plan
        wait_for("annactl to say it waits", lambda: "waiting up to" in err.read_text())
        assert proc.poll() is None  # it waits instead of exiting 7
        daemon.start()
        code, out, text = finish(proc, err)
        assert code == 5, (out, text)
        assert "interrupted" in out
        assert f"annactl rollback {plan_id}" in out


def test_apply_when_the_daemon_never_comes_back_says_so() -> None:
    with running_daemon(user_mode=True) as daemon:
        proc, err = start_apply(daemon, gated_plan(), ANNA_RECONNECT_WAIT_S="1")
        plan_id = running_plan_id(daemon)
        daemon.kill()
        code, out, text = finish(proc, err)
        assert code == 7, (out, text)
        flat = " ".join(text.split())
        assert "did not answer again within 1 s" in flat, text
        assert f"annactl show {plan_id}" in flat, text
        # a step that was spawned outlives the killed daemon until a restart kills it (the
        # daemon may also have died between marking it running and spawning it); the fixture
        # does what the restart would, so no loop runs on through the rest of the suite
        kill_left_steps(daemon)
        wait_for("no step process left", lambda: not step_processes(daemon), daemon=daemon)


# --------------------------------------------------------------------------- PLAN_RUNNING


def test_plan_running_has_its_own_exit_status_and_the_refused_plan_is_marked() -> None:
    with running_daemon(user_mode=True) as daemon:
        blocker, blocker_err = start_apply(daemon, gated_plan())
        running = running_plan_id(daemon)
        other = daemon.base / "other.json"
        other.write_text(json.dumps(make_plan([("w", "echo w > ~/w.txt", "LOW")])))
        proc = subprocess.run([sys.executable, "-m", "annactl.cli", "apply", str(other),
                               "--yes", "--json"], capture_output=True, text=True,
                              env=cli_env(daemon), timeout=WAIT_S * 2, check=False)
        assert proc.returncode == 10, (proc.stdout, proc.stderr)
        assert "PLAN_RUNNING" in proc.stdout + proc.stderr
        assert not (daemon.home / "w.txt").exists()
        plans = {p.plan_id: str(p.status) for p in daemon.client().list_plans().plans}
        assert "submitted" not in plans.values(), plans
        assert sorted(plans.values()) == ["refused", "running"]
        refused_id = next(i for i, s in plans.items() if s == "refused")
        record = daemon.client().get_plan(refused_id)
        assert record.error is not None and record.error.code == "PLAN_RUNNING"
        assert record.error.detail["running_plan"] == running
        open_gates(daemon.home, 1)
        code, _, _ = finish(blocker, blocker_err)
        assert code == 0


@pytest.mark.parametrize("status", ["refused"])
def test_a_refused_plan_maps_to_the_plan_running_status(status: str) -> None:
    from annactl.core.exit_codes import ExitStatus, exit_status_for_plan

    assert exit_status_for_plan(status) is ExitStatus.PLAN_RUNNING
    assert exit_status_for_plan("interrupted", after_rollback=True) is \
        ExitStatus.ROLLBACK_FAILED


# --------------------------------------------------------------------------- the follower


class _FlakyDaemon:
    """Answers ``get_plan`` only after ``down`` failed attempts (a daemon restarting)."""

    def __init__(self, record: Any, down: int) -> None:
        self.record = record
        self.down = down
        self.calls = 0

    def get_plan(self, plan_id: str) -> Any:
        self.calls += 1
        if self.calls <= self.down:
            from anna_common.errors import DaemonError

            raise DaemonError("annad at /x is not answering: Connection refused")
        return self.record


def _follower(status: str, down: int, wait_s: float
              ) -> tuple[Any, Iterator[Any], _FlakyDaemon, list[float]]:
    """A Follower on a stream that breaks at once, a fake daemon and a fake clock."""
    from anna_common.errors import DaemonError
    from anna_common.protocol.models import PlanRecord, StepRecord
    from anna_common.validate import validate
    from annactl.commands.follow import Follower
    from annactl.commands.prepared import Prepared
    from annactl.core.environment import local_context

    annotated = validate(make_plan([("a", "echo a > ~/a.txt", "LOW")]), local_context()).plan
    assert annotated is not None
    prepared = Prepared(plan_id="p1", digest=annotated.digest, annotated=annotated)
    record = PlanRecord(plan_id="p1", digest=annotated.digest, status=status,  # type: ignore[arg-type]
                        created_at=0, updated_at=0, caller_uid=0, source="file", request="",
                        annotated=annotated,
                        steps=[StepRecord(step_id="a", index=0, status="failed")])  # type: ignore[arg-type]
    daemon = _FlakyDaemon(record, down)
    now = [0.0]

    def pause(seconds: float) -> None:
        now[0] += seconds

    follower = Follower(daemon, prepared, wait_s=wait_s,  # type: ignore[arg-type]
                        clock=lambda: now[0], pause=pause)

    def broken() -> Iterator[Any]:
        raise DaemonError("annad at /x is not answering: Connection reset by peer")
        yield  # a generator

    return follower, broken(), daemon, now


def test_follower_waits_with_progress_and_ends_with_the_journal_outcome() -> None:
    follower, stream, daemon, now = _follower("interrupted", down=100, wait_s=300)
    events = list(follower.events(stream))
    assert daemon.calls == 101
    assert now[0] == pytest.approx(25.0)  # 100 polls of 0.25 s: bounded, and no real sleep
    notices = [e.message for e in events if e.type == "error"]
    assert notices[0].startswith("the event stream stopped") and "waiting up to 300 s" in \
        notices[0]
    assert len(notices) == 3  # the first, then one every 10 s
    assert events[-1].type == "plan_finished" and events[-1].status == "interrupted"
    assert follower.record is daemon.record


def test_follower_gives_up_after_the_bound_with_the_plan_id() -> None:
    from anna_common.errors import AnnaError

    follower, stream, _, now = _follower("succeeded", down=10**6, wait_s=5)
    with pytest.raises(AnnaError) as caught:
        list(follower.events(stream))
    assert caught.value.code == "DAEMON_UNAVAILABLE"
    assert "within 5 s" in caught.value.message and "p1" in caught.value.message
    assert caught.value.hint is not None and "annactl show p1" in caught.value.hint
    assert 5 <= now[0] < 5.5
