"""kill -9 at any moment of a rollback: a tree the plan made being removed, a file being
restored in place on a full target disk. Never torn, never a false claim, and the rollback
run again after the restart is byte-exact.

Each trial applies a plan, starts its rollback, SIGKILLs the real per-user daemon the moment
the undo is visibly under way (the tree no longer whole; the file no longer what the step
left), starts it again (start-up recovery removes what a killed removal left) and rolls back
again. The full disk is a small tmpfs mounted in a private mount namespace that a helper
holds (tests/daemon/fullfs_holder.py): the daemon enters it (``nsenter -m``), the test reads
it through ``/proc/<holder>/root``; the machine's own mount table never has it.

``ANNA_FAULT_TRIALS`` sets the trials of each kind (3 here; bench/faults_undo.py runs 30 and
prints the counts).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from anna_common.plan import ActionPlan
from anna_common.risk import tiers
from tests.daemon.test_faults_capture import kill_when
from tests.daemonfix import IS_ROOT, RunningDaemon, make_plan, new_daemon, stop_and_remove
from tests.treeprint import fingerprint

pytestmark = pytest.mark.skipif(not IS_ROOT or shutil.which("nsenter") is None,
                                reason="needs root (a tmpfs in a private mount namespace)")

TRIALS = int(os.environ.get("ANNA_FAULT_TRIALS", "3"))
FILES = 400
BIG = 5 << 20
KILL_WAIT_S = 60.0
COUNTS: dict[str, int] = {"trials": 0, "midway": 0, "torn_at_kill": 0, "torn_after": 0,
                          "false_claims": 0, "second_byte_exact": 0}
"""Over every trial of the module: what bench/faults_undo.py prints."""


@pytest.fixture(scope="module", params=["per-user", "root"])
def held(request: pytest.FixtureRequest) -> Iterator[tuple[RunningDaemon, Path]]:
    """A per-user or root daemon inside a private mount namespace whose ``<base>/full`` is a
    12 MiB tmpfs; yields it and the tmpfs as the test sees it (through the holder's root)."""
    daemon = new_daemon(user_mode=request.param == "per-user")
    full = daemon.base / "full"
    full.mkdir()
    holder = subprocess.Popen(
        ["unshare", "-m", "--propagation", "private", sys.executable,
         str(Path(__file__).with_name("fullfs_holder.py")), str(full), "12m"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        line = holder.stdout.readline().strip()
        if line != "ready":
            pytest.skip(f"no tmpfs in a private mount namespace here: {line}")
        daemon.argv = ["nsenter", "-t", str(holder.pid), "-m", "--", *daemon.argv]
        daemon.start()
        yield daemon, Path(f"/proc/{holder.pid}/root{full}")
    finally:
        stop_and_remove(daemon)
        if holder.stdin is not None:
            holder.stdin.close()
        holder.wait(timeout=30)


def _apply(daemon: RunningDaemon, command: str) -> tuple[str, str]:
    client = daemon.client()
    sub = client.submit(ActionPlan.model_validate(make_plan([("s", command, "MEDIUM")])))
    high = sub.annotated.final_risk == "HIGH"
    events = list(client.execute(sub.plan_id, sub.digest, confirmed=True, high_confirmed=high,
                                 confirm_word=tiers.plan_word(sub.annotated) if high else None))
    assert events[-1].status == "succeeded", [(e.type, e.message) for e in events]
    return sub.plan_id, tiers.rollback_word(sub.annotated) or ""


def _second_rollback(daemon: RunningDaemon, plan_id: str, word: str, top: Path,
                     before: object) -> None:
    """Start again, roll back again: rolled_back and byte-exact, or counted as a failure."""
    daemon.start()
    client = daemon.client()
    status = str(client.get_plan(plan_id).status)
    if status != "rolled_back":  # the killed one had not finished: this one does
        result = client.rollback(plan_id, confirm_word=word or None)
        status = str(result.status)
    exact = fingerprint(top) == before
    COUNTS["trials"] += 1
    COUNTS["torn_after"] += not exact
    COUNTS["false_claims"] += status == "rolled_back" and not exact
    COUNTS["second_byte_exact"] += status == "rolled_back" and exact
    assert status == "rolled_back", client.get_plan(plan_id).error
    assert exact, "the second rollback is not byte-exact"
    assert not list(top.parent.rglob("*.anna-remove-*")), "a removal's leftover stayed"


@pytest.mark.parametrize("trial", range(TRIALS))
def test_kill_9_while_the_rollback_removes_a_tree_the_plan_made(
        held: tuple[RunningDaemon, Path], trial: int) -> None:
    daemon, _ = held
    top = daemon.base / "w" / f"t{trial}"
    top.mkdir(parents=True)
    (top / "keep").write_text("the person's\n")
    before = fingerprint(top)
    plan_id, word = _apply(daemon, f"mkdir {top}/made && cd {top}/made && "
                           f"for i in $(seq 1 {FILES}); do echo $i > f$i; done")
    made = top / "made"

    def under_way() -> bool:
        with contextlib.suppress(OSError):
            return not made.is_dir() or len(os.listdir(made)) < FILES
        return True

    COUNTS["midway"] += kill_when(daemon, under_way, lambda: daemon.client().rollback(
        plan_id, confirm_word=word or None))
    _second_rollback(daemon, plan_id, word, top, before)


def _fill(full: Path, leave: int) -> None:
    """Fill the tmpfs up to ``leave`` bytes free (a filler beside the plan's files)."""
    filler = full / "filler"
    filler.unlink(missing_ok=True)
    room = os.statvfs(full).f_bavail * os.statvfs(full).f_frsize - leave
    with filler.open("wb") as out:
        while room > 0:
            room -= out.write(b"\0" * min(room, 1 << 20))


@pytest.mark.parametrize("trial", range(TRIALS))
def test_kill_9_during_an_in_place_restore_on_a_full_disk(
        held: tuple[RunningDaemon, Path], trial: int) -> None:
    daemon, seen = held
    (seen / "filler").unlink(missing_ok=True)
    top_seen = seen / f"i{trial}"
    top_seen.mkdir()
    (top_seen / "big").write_bytes(b"original " * (BIG // 9))
    before = fingerprint(top_seen)
    real = daemon.base / "full" / f"i{trial}" / "big"
    plan_id, word = _apply(
        daemon, f"python3 -c \"open('{real}','wb').write(b'new '*{BIG // 4})\"")
    stepped = (top_seen / "big").read_bytes()
    assert stepped.startswith(b"new ")
    _fill(seen, 1 << 20)  # no room for a temporary copy: the restore goes in place

    def under_way() -> bool:
        with contextlib.suppress(OSError), (top_seen / "big").open("rb") as f:
            return f.read(4) != b"new " or os.fstat(f.fileno()).st_size != len(stepped)
        return True

    try:
        COUNTS["midway"] += kill_when(daemon, under_way, lambda: daemon.client().rollback(
            plan_id, confirm_word=word or None))
        now = (top_seen / "big").read_bytes()
        torn = now not in (stepped, b"original " * (BIG // 9))
        COUNTS["torn_at_kill"] += torn  # recorded (its marker): the next rollback finishes it
        _second_rollback(daemon, plan_id, word, top_seen, before)
    finally:
        (seen / "filler").unlink(missing_ok=True)
        shutil.rmtree(top_seen, ignore_errors=True)  # room for the next trial's step


def test_the_counts() -> None:
    """The figures of the trials above (printed; bench/faults_undo.py reads them)."""
    if not COUNTS["trials"]:
        pytest.skip("the trials did not run in this session")
    print(f"\nFAULTS_UNDO {COUNTS}")
    assert COUNTS["false_claims"] == 0
    assert COUNTS["second_byte_exact"] == COUNTS["trials"]
