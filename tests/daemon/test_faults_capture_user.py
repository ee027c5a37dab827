"""kill -9 during a per-user (non-root) daemon's commit or rollback: before or after, never torn.

The trials of tests/daemon/test_faults_capture.py, fewer of them (6 of each kind in the
suite; ``bench/faults_user.py`` runs 30 of each), on the daemon of
tests/daemon/test_capture_user.py (uid 65534, its capture in a user namespace): the daemon
is killed the moment the k-th file of the change set (or of the rollback) landed, started
again (its start-up finishes a commit from its record), and the tree must be exactly as
before the plan or as the step left it; the rollback, run again when it was the one killed,
gives back every byte.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon.test_capture_user import OWNER, _owned_daemon, call, pytestmark, start
from tests.daemon.test_faults_capture import FILES, STEP, kill_when, landed, stepped, tree
from tests.daemonfix import RunningDaemon, stop_and_remove
from tests.treeprint import fingerprint

__all__ = ["pytestmark"]

TRIALS = int(os.environ.get("ANNA_FAULT_TRIALS", "6"))
"""Trials of each kind: 6 in the suite; bench/faults_user.py runs the 30 of issue 19."""
HITS: dict[str, int] = {"commit": 0, "rollback": 0}


@pytest.fixture(scope="module")
def owner() -> Iterator[RunningDaemon]:
    """One per-user daemon of uid 65534 for the trials (each kills and restarts it)."""
    daemon = _owned_daemon()
    try:
        yield start(daemon)
    finally:
        stop_and_remove(daemon)


def _tree(daemon: RunningDaemon, name: str) -> Path:
    top = daemon.home / "w" / name
    tree(top)
    for path in [daemon.home / "w", top, *top.rglob("*")]:
        os.lchown(path, OWNER, OWNER)
    return top


def _submit(daemon: RunningDaemon, top: Path) -> dict[str, str]:
    step = STEP.format(T=top, last=f"{FILES - 1:04d}")
    return {k: str(v or "") for k, v in call(daemon, "submit", json.dumps(
        [["s", step, "HIGH"]])).items()}


def _quiet_call(daemon: RunningDaemon, *args: str) -> None:
    try:
        call(daemon, *args)
    except AssertionError:
        return  # the daemon died under the request: expected


@pytest.mark.parametrize("trial", range(TRIALS))
def test_kill_9_during_the_commit_recovers_to_before_or_after(owner: RunningDaemon,
                                                              trial: int) -> None:
    top = _tree(owner, f"c{trial}")
    before = fingerprint(top)
    k = trial * FILES // TRIALS
    plan = _submit(owner, top)
    HITS["commit"] += kill_when(owner, landed(top / f"f{k:04d}", f"new {k:04d}\n"),
                                functools.partial(_quiet_call, owner, "execute",
                                                  plan["plan_id"], plan["digest"],
                                                  plan["word"]))
    start(owner)
    assert stepped(top), "the tree is torn after recovery"
    assert call(owner, "status", plan["plan_id"])["status"] in ("interrupted", "succeeded")
    assert not list(owner.state.rglob("commit.json"))
    rolled = call(owner, "rollback", plan["plan_id"])
    assert rolled["status"] == "rolled_back", rolled["undo"]
    assert fingerprint(top) == before, "the rollback is not byte-exact"


@pytest.mark.parametrize("trial", range(TRIALS))
def test_kill_9_during_the_rollback_finishes_byte_exact_when_run_again(
        owner: RunningDaemon, trial: int) -> None:
    top = _tree(owner, f"r{trial}")
    before = fingerprint(top)
    plan = _submit(owner, top)
    ran = call(owner, "execute", plan["plan_id"], plan["digest"], plan["word"])
    assert ran["status"] == "succeeded", ran
    k = trial * FILES // TRIALS
    probe = top / "old" / f"o{k:04d}" if trial % 2 else top / f"f{k:04d}"
    text = f"old {k}\n" * 50 if trial % 2 else f"original {k}\n" * 50
    HITS["rollback"] += kill_when(owner, landed(probe, text), functools.partial(
        _quiet_call, owner, "rollback", plan["plan_id"]))
    start(owner)
    rolled = call(owner, "rollback", plan["plan_id"])
    assert rolled["status"] == "rolled_back", rolled["undo"]
    assert fingerprint(top) == before, "the second rollback is not byte-exact"


def test_the_kills_came_while_the_work_was_under_way() -> None:
    """Most kills hit a commit or a rollback midway (when all the trials ran)."""
    if sum(HITS.values()) == 0:
        pytest.skip("the trials did not run in this session")
    print(f"\nkills midway of {TRIALS} trials each: {HITS}")  # bench/faults_user.py shows it
    assert HITS["commit"] >= TRIALS // 3, HITS
    assert HITS["rollback"] >= TRIALS // 3, HITS
