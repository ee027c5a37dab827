"""A captured step that changes too much to check is refused, quickly, with nothing landed.

Real root daemons (tests/daemonfix.py), real captures. A million files, a 20 GiB sparse
file, a directory chain deeper than the limit or longer than any path the kernel resolves,
and a writer that would fill the state disk each end in ``OBSERVED_CHANGE_TOO_LARGE`` with
the counts and the limits named, nothing of them on the real tree and the layers gone;
a real admin task — a 50 MiB file, a 5,000-file tree — lands and rolls back. The same
steps through a per-user daemon: tests/daemon/test_capture_bounds_user.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from anna_common.plan import ActionPlan
from anna_common.risk import tiers
from annad.capture.bounds import Watch
from annad.stepspec import Bounds
from tests.daemon.test_faults import tmpfs
from tests.daemonfix import IS_ROOT, RunningDaemon, layers_left, make_plan, running_daemon

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="captured steps need a root daemon")

TOO_LARGE = "OBSERVED_CHANGE_TOO_LARGE"
SMALL = {"ANNAD_CAPTURE_MAX_FILES": "300", "ANNAD_CAPTURE_MAX_BYTES": str(32 << 20),
         "ANNAD_PREVIEW_TIMEOUT_S": "5"}
"""Limits small enough that the state-disk watch (twice them) stops a writer in time."""

# the hostile steps, in a fresh directory T of the daemon's home (none exists before)
MILLION = "mkdir -p {T} && cd {T} && seq 1000000 | xargs touch"
SPARSE = "mkdir -p {T} && truncate -s 20G {T}/sparse"
DEEP = "mkdir -p {T} && cd {T} && for i in $(seq 100); do mkdir d && cd d || exit 1; done"
LONG = ("mkdir -p {T} && cd {T} && n=$(printf 'n%.0s' $(seq 200)) && "
        "for i in $(seq 25); do mkdir $n && cd $n || exit 1; done")
FILL = "mkdir -p {T} && dd if=/dev/zero of={T}/fill bs=1M count=8192 status=none"
QUICK = "mkdir -p {T} && cd {T} && seq 500 | xargs touch"
# real admin tasks that must pass under the default limits
BIG = "mkdir -p {T} && head -c 52428800 /dev/urandom > {T}/big.bin"
TREE = ("mkdir -p {T} && cd {T} && for i in $(seq 50); do mkdir d$i && "
        "(cd d$i && seq 100 | sed 's/^/f/' | xargs touch); done")


def run(daemon: RunningDaemon, command: str) -> tuple[str, Any]:
    """Submit and execute one step; (plan id, the last event)."""
    client = daemon.client()
    submitted = client.submit(ActionPlan.model_validate(make_plan([("s", command, "LOW")])))
    word = tiers.plan_word(submitted.annotated)
    events = list(client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                                 high_confirmed=word is not None, confirm_word=word))
    return submitted.plan_id, events[-1]


def peak_rss_mb(daemon: RunningDaemon) -> float:
    """The daemon's peak resident set (VmHWM), MB."""
    assert daemon.proc is not None
    for line in Path(f"/proc/{daemon.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@pytest.fixture(scope="module")
def daemon() -> Iterator[RunningDaemon]:
    """A root daemon with the default limits."""
    with running_daemon(user_mode=True) as started:
        yield started


@pytest.fixture(scope="module")
def small() -> Iterator[RunningDaemon]:
    """A root daemon with small limits (300 files, 32 MiB)."""
    with running_daemon(user_mode=True, env=SMALL) as started:
        yield started


def refused(daemon: RunningDaemon, name: str, step: str, *words: str) -> str:
    """Run the hostile ``step``; it must be refused as too large, with ``words`` in the
    message, nothing landed and no layer left. Returns the message."""
    top = daemon.home / "bounds" / name
    _, last = run(daemon, step.format(T=top))
    assert last.status == "failed" and last.code == TOO_LARGE, last
    assert "changes too much to check" in last.message, last.message
    assert "nothing of it landed" in last.message, last.message
    for word in words:
        assert word in last.message, last.message
    assert not top.exists(), "something of a refused step landed"
    assert layers_left(daemon.state) == []
    return str(last.message)


def test_a_million_files_are_stopped_while_they_are_made(small: RunningDaemon) -> None:
    message = refused(small, "million", MILLION, "limit 300 files")
    assert "stopped" in message  # by the state-disk watch, long before a million
    assert peak_rss_mb(small) < 250, "the daemon's memory grew with the change set"


def test_a_20_gib_sparse_file_is_refused_by_its_apparent_size(daemon: RunningDaemon) -> None:
    refused(daemon, "sparse", SPARSE, "20.0 GiB or more", "1.0 GiB")


def test_a_chain_deeper_than_the_limit_is_refused(daemon: RunningDaemon) -> None:
    refused(daemon, "deep", DEEP, "65 levels deep", "64 levels deep")


def test_a_path_longer_than_the_kernel_resolves_is_refused(daemon: RunningDaemon) -> None:
    refused(daemon, "long", LONG, "paths under 4096 bytes")


def test_a_writer_filling_the_state_disk_is_stopped(small: RunningDaemon) -> None:
    """8 GiB of zeros: stopped once the layers took twice the limit (32 MiB), not at
    8 GiB and never at a full disk."""
    refused(small, "fill", FILL, "stopped", "32.0 MiB")


def test_files_past_the_limit_made_in_a_blink_are_refused_at_read_back(
        small: RunningDaemon) -> None:
    refused(small, "quick", QUICK, "more than 300 files")


@pytest.mark.parametrize(("name", "step", "count"), [("big", BIG, 1), ("tree", TREE, 5050)])
def test_a_real_admin_task_lands_and_rolls_back(daemon: RunningDaemon, name: str, step: str,
                                                count: int) -> None:
    top = daemon.home / "bounds" / name
    plan_id, last = run(daemon, step.format(T=top))
    assert last.status == "succeeded", last
    assert sum(1 for _ in top.rglob("*")) == count
    assert layers_left(daemon.state) == []
    assert daemon.client().rollback(plan_id).status == "rolled_back"
    assert not top.exists()



def test_the_disk_watch_stops_a_step_only_for_what_its_own_layers_hold(tmp_path: Path) -> None:
    """The watch reads the whole state disk; another program filling that disk while a step
    runs is not the step's change. Before, such a fill refused the step as changing too much
    (seen with two suites side by side: test_faults' filler beside a waiting step).
    The disk is a tmpfs of the test's own: on a shared one, a suite beside it freeing
    entries while this step makes them hid the step's growth (pair 8)."""
    with tmpfs(tmp_path / "disk", size="8m") as disk:
        run_dir = disk / "step-run"
        elsewhere = disk / "other-program"
        run_dir.mkdir()
        elsewhere.mkdir()
        watch = Watch(run_dir, Bounds(max_files=10), None)
        crowd = 1_100  # past the watch's entry threshold (the limit and 1,000 more)
        for i in range(crowd):
            (elsewhere / str(i)).touch()
        assert not watch.check(), watch.why
        assert watch.why is None
        for i in range(crowd):
            (run_dir / str(i)).touch()
        assert watch.check()
        assert watch.why is not None and "changes too much" in watch.why
