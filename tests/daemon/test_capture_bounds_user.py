"""The limits of tests/daemon/test_capture_bounds.py on a per-user daemon that is not root.

The daemon of tests/daemon/test_capture_user.py (uid 65534, its capture in a user namespace
with ``userxattr`` overlays): the same hostile steps end in ``OBSERVED_CHANGE_TOO_LARGE``
with nothing landed and no layer left; a 50 MiB file and a 5,000-file tree land.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.daemon.test_capture_bounds import (
    BIG,
    DEEP,
    FILL,
    LONG,
    MILLION,
    QUICK,
    SMALL,
    SPARSE,
    TOO_LARGE,
    TREE,
)
from tests.daemon.test_capture_user import _owned_daemon, call, pytestmark, start
from tests.daemonfix import RunningDaemon, layers_left, stop_and_remove

__all__ = ["pytestmark"]


@pytest.fixture(scope="module")
def owner() -> Iterator[RunningDaemon]:
    """A per-user daemon of uid 65534 with the default limits."""
    daemon = _owned_daemon()
    try:
        yield start(daemon)
    finally:
        stop_and_remove(daemon)


@pytest.fixture(scope="module")
def small() -> Iterator[RunningDaemon]:
    """The same with small limits (300 files, 32 MiB)."""
    daemon = _owned_daemon(env=SMALL)
    try:
        yield start(daemon)
    finally:
        stop_and_remove(daemon)


def run(daemon: RunningDaemon, command: str) -> dict[str, Any]:
    """Submit and execute one step as the owner; the driver's account of it."""
    ran = call(daemon, "run", json.dumps([["s", command, "LOW"]]))
    assert not any("runs live" in r for r in ran["reasons"]), ran["reasons"]  # captured
    return ran


@pytest.mark.parametrize(("which", "name", "step", "words"), [
    ("small", "million", MILLION, ("stopped", "limit 300 files")),
    ("owner", "sparse", SPARSE, ("20.0 GiB or more",)),
    ("owner", "deep", DEEP, ("65 levels deep",)),
    ("owner", "long", LONG, ("paths under 4096 bytes",)),
    ("small", "fill", FILL, ("stopped", "32.0 MiB")),
    ("small", "quick", QUICK, ("more than 300 files",)),
])
def test_too_much_to_check_is_refused_and_nothing_lands(
        request: pytest.FixtureRequest, which: str, name: str, step: str,
        words: tuple[str, ...]) -> None:
    daemon: RunningDaemon = request.getfixturevalue(which)
    top = daemon.home / "bounds" / name
    last = run(daemon, step.format(T=top))["events"][-1]
    assert last["status"] == "failed" and last["code"] == TOO_LARGE, last
    assert "changes too much to check" in last["message"], last
    for word in words:
        assert word in last["message"], last
    assert not top.exists(), "something of a refused step landed"
    assert layers_left(daemon.state) == []


@pytest.mark.parametrize(("name", "step", "count"), [("big", BIG, 1), ("tree", TREE, 5050)])
def test_a_real_admin_task_lands_and_rolls_back(owner: RunningDaemon, name: str, step: str,
                                                count: int) -> None:
    top = owner.home / "bounds" / name
    ran = run(owner, step.format(T=top))
    assert ran["events"][-1]["status"] == "succeeded", ran["events"][-1]
    assert sum(1 for _ in top.rglob("*")) == count
    assert layers_left(owner.state) == []
    assert call(owner, "rollback", ran["plan_id"])["status"] == "rolled_back"
    assert not top.exists()


def test_a_directory_the_step_made_unreadable_is_refused_not_skipped(
        owner: RunningDaemon) -> None:
    """The daemon (not root) cannot read a directory of the upper layer the step chmod-ed
    to 0: what is in it cannot be judged, so nothing lands (it was skipped unseen)."""
    top = owner.home / "bounds" / "shut"
    last = run(owner, f"mkdir -p {top}/x && echo a > {top}/x/f && chmod 0 {top}/x"
               )["events"][-1]
    assert last["status"] == "failed" and last["code"] == "OBSERVED_CHANGE_REFUSED", last
    assert "cannot be read back" in last["message"], last
    assert not top.exists()
    assert layers_left(owner.state) == []
