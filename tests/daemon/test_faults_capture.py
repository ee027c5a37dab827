"""kill -9 at any moment of a commit or a rollback: the tree is before or after, never torn.

Each trial kills the real daemon the moment a condition holds (the k-th file of the change
set landed, the k-th file of a rollback put back — k moves through the whole set across
trials), starts it again (start-up recovery finishes a commit from its record) and checks
the tree: exactly as before the plan or exactly as the step left it; then the rollback (run
again when it was the one killed) must give back every byte.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from anna_common.plan import ActionPlan
from anna_common.risk import tiers
from annactl.core.daemon_client import DaemonClient
from tests.daemonfix import IS_ROOT, RunningDaemon, make_plan, running_daemon
from tests.treeprint import fingerprint

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="captured steps need a root daemon")

TRIALS = 30
FILES = 300
KILL_WAIT_S = 60.0




def tree(top: Path) -> None:
    """FILES files to rewrite and an old directory of FILES files to delete."""
    (top / "old").mkdir(parents=True)
    for i in range(FILES):
        (top / f"f{i:04d}").write_text(f"original {i}\n" * 50)
        (top / "old" / f"o{i:04d}").write_text(f"old {i}\n" * 50)


STEP = ("cd {T} && for i in $(seq -f %04g 0 {last}); do echo new $i > f$i; done && "
        "rm -rf old && mkdir fresh && echo x > fresh/x")


def stepped(top: Path) -> bool:
    """Whether ``top`` is exactly what STEP leaves."""
    names = sorted(p.name for p in top.iterdir())
    return names == sorted([f"f{i:04d}" for i in range(FILES)] + ["fresh"]) and all(
        (top / f"f{i:04d}").read_text() == f"new {i:04d}\n" for i in range(FILES)) and \
        (top / "fresh" / "x").read_text() == "x\n"


def kill_when(daemon: RunningDaemon, condition: Callable[[], bool],
              action: Callable[[], object]) -> bool:
    """Run ``action`` in a thread, SIGKILL the daemon once ``condition()`` holds; True when
    the kill came while the action was still under way."""
    worker = threading.Thread(target=_quietly, args=(action,))
    worker.start()
    deadline = time.monotonic() + KILL_WAIT_S
    while not condition() and worker.is_alive():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.0005)
    midway = worker.is_alive()
    daemon.kill()
    worker.join(timeout=30)
    return midway


def _execute(client: DaemonClient, plan_id: str, digest: str, word: str | None) -> object:
    return list(client.execute(plan_id, digest, confirmed=True, high_confirmed=True,
                               confirm_word=word))


def _quietly(action: Callable[[], object]) -> None:
    with contextlib.suppress(Exception):  # the daemon dies under the request: expected
        action()


def landed(path: Path, text: str) -> Callable[[], bool]:
    """True once ``path`` holds ``text`` (read without raising while it is replaced)."""
    def check() -> bool:
        with contextlib.suppress(OSError):
            return path.read_text() == text
        return False
    return check


HITS: dict[str, int] = {"commit": 0, "rollback": 0}
"""Kills that came while the commit (or the rollback) was under way, over the trials."""


@pytest.fixture(scope="module")
def daemon() -> Iterator[RunningDaemon]:
    """One daemon for the trials (each kills and restarts it: the restart is under test)."""
    with running_daemon(user_mode=True) as started:
        yield started


def _submit(daemon: RunningDaemon, top: Path) -> tuple[str, str, str | None]:
    submitted = daemon.client().submit(ActionPlan.model_validate(make_plan([
        ("s", STEP.format(T=top, last=f"{FILES - 1:04d}"), "HIGH")])))
    return submitted.plan_id, submitted.digest, tiers.plan_word(submitted.annotated)


@pytest.mark.parametrize("trial", range(TRIALS))
def test_kill_9_during_the_commit_recovers_to_before_or_after(daemon: RunningDaemon,
                                                              trial: int) -> None:
    top = daemon.base / "w" / f"c{trial}"
    tree(top)
    before = fingerprint(top)
    k = trial * FILES // TRIALS
    plan_id, digest, word = _submit(daemon, top)
    HITS["commit"] += kill_when(daemon, landed(top / f"f{k:04d}", f"new {k:04d}\n"),
                                functools.partial(_execute, daemon.client(), plan_id, digest,
                                                  word))
    daemon.start()
    client = daemon.client()
    assert stepped(top), "the tree is torn after recovery"
    # killed mid-commit: interrupted; killed as the plan ended: succeeded already
    record = client.get_plan(plan_id)
    assert record.status in ("interrupted", "succeeded")
    # the step ran to its end and recovery landed all it changed: never shown failed
    assert [s.status for s in record.steps] == ["succeeded"], record.steps
    assert not list(daemon.state.rglob("commit.json"))
    result = client.rollback(plan_id)
    assert result.status == "rolled_back", result.undo
    assert fingerprint(top) == before, "the rollback is not byte-exact"


@pytest.mark.parametrize("trial", range(TRIALS))
def test_kill_9_during_the_rollback_finishes_byte_exact_when_run_again(
        daemon: RunningDaemon, trial: int) -> None:
    top = daemon.base / "w" / f"r{trial}"
    tree(top)
    before = fingerprint(top)
    plan_id, digest, word = _submit(daemon, top)
    client = daemon.client()
    events = list(client.execute(plan_id, digest, confirmed=True, high_confirmed=True,
                                 confirm_word=word))
    assert events[-1].status == "succeeded", events[-1]
    k = trial * FILES // TRIALS
    # the rollback puts the old tree back first (the deletion is the newest target), then
    # each rewritten file: the condition walks both across the trials
    probe = top / "old" / f"o{k:04d}" if trial % 2 else top / f"f{k:04d}"
    text = f"old {k}\n" * 50 if trial % 2 else f"original {k}\n" * 50
    HITS["rollback"] += kill_when(daemon, landed(probe, text),
                                  functools.partial(client.rollback, plan_id))
    daemon.start()
    result = daemon.client().rollback(plan_id)
    assert result.status == "rolled_back", result.undo
    assert fingerprint(top) == before, "the second rollback is not byte-exact"


def test_the_kills_came_while_the_work_was_under_way() -> None:
    """The trials above test what they say: most kills hit a commit or a rollback midway
    (checked when all the trials ran, as in a full run of this file)."""
    if sum(HITS.values()) == 0:
        pytest.skip("the trials did not run in this session")
    assert HITS["commit"] >= TRIALS // 3, HITS
    assert HITS["rollback"] >= TRIALS // 3, HITS
