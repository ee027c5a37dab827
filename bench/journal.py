"""The journal at 100, 10,000 and 100,000 plans, side by side (issue 22 item 6).

Each journal is a real one (``annad.journal.store.Journal``, SQLite in WAL) filled with plans
of 8 chained events each (the plan_submitted seal, step events, status changes), as the
daemon writes them. For the *oldest* plan, the one whose checks used to re-hash every later
event, it times (median of ``--rounds``, CPU-independent wall clock of this process):

- ``show``: the full record (``records.plan_record``: row, steps, undo results) and its
  event reads (``events_of``, ``last_body``), what ``GET /v1/plans/{id}`` and preview read;
- ``history``: a page of 200 plans (``list_plans``), what ``annactl history`` reads (the
  100 column lists only 100: compare 10,000 with 100,000 there);
- ``rollback (journal)``: ``check_plan``, the chain check execute and rollback run before
  anything else, plus its status write and the write's chained event.

The goal is flat: the 100,000 column within 2x of the 100 one. Before issue 22 (main
695b9f5): show 4 ms at 100 plans and 306 ms at 10,000 (three scans of ``events``, no index
on ``plan_id``); check_plan ~24 µs per event written after the plan.

Run: .venv/bin/python bench/journal.py [--sizes 100,10000,100000] [--rounds 15]

``--daemon`` (issue 38 item 1): the whole daemon over such a journal, per size: start to
first answer (``GET /v1/plans?limit=1``), apply (submit and execute a one-step file edit)
and rollback (median of ``--rounds``, wall), the daemon's CPU per rollback, ``annactl
history --all --json`` (wall, to /dev/null), idle RSS after start and after ``history
--all`` (MB, steady for 2 s). ``--tree DIR`` runs another checkout's daemon, client and
journal code (its own ``fill``) beside this one: ``--tree /work/main`` is "before". The
figures and the machine's load are in docs/performance.md.

Run: .venv/bin/python bench/journal.py --daemon [--tree DIR] [--sizes ...] [--rounds 3]

``--migration OLD_TREE``: a journal written by an older checkout (schema version 1), opened by
this one (the migration), retention's first pass (every seeded plan measured once), a reopen.

Run: .venv/bin/python bench/journal.py --migration /tmp/anna-main-33b370e [--sizes ...]
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from anna_common.plan import canonical_json  # noqa: E402
from anna_common.protocol.models import PlanStatus, StepStatus  # noqa: E402
from anna_common.risk.rules.base import AssessContext  # noqa: E402
from anna_common.validate import validate  # noqa: E402
from annad.journal.integrity import GENESIS, event_hash, seal_of  # noqa: E402
from annad.journal.records import plan_record  # noqa: E402
from annad.journal.rows import PlanRow  # noqa: E402
from annad.journal.store import Journal  # noqa: E402
from tests.daemonfix import make_plan  # noqa: E402

STEPS = 3


def _template() -> tuple[str, str, str]:
    """(digest, plan json, annotated json) of a real three-step plan, annotated by Anna."""
    steps = [(f"s{i}", f"touch ~/bench-{i}", "LOW") for i in range(STEPS)]
    annotated = validate(make_plan(steps), AssessContext(home="/home/bench")).plan
    assert annotated is not None
    plan_json = canonical_json(annotated.plan.model_dump(mode="json")).decode()
    return annotated.digest, plan_json, annotated.model_dump_json()


def fill(journal: Journal, count: int, *, uid: int = 1000) -> str:
    """Write ``count`` succeeded plans of 8 chained events each; return the oldest id.

    The rows and their hash chain are exactly what the daemon writes, computed here in bulk
    (one ``executemany`` per batch) so that 100,000 plans take a minute, not an hour."""
    digest, plan_json, annotated_json = _template()
    first = ""
    prev, row_id = GENESIS, 0
    for start in range(0, count, 1000):
        plans, steps, events = [], [], []
        for n in range(start, min(count, start + 1000)):
            now = 1_700_000_000.0 + n
            plan_id = f"20240101-000000-{n:06x}{secrets.token_hex(1)}"
            first = first or plan_id
            row = PlanRow(plan_id, digest, PlanStatus.SUCCEEDED, now, now, uid, "model",
                          "bench", "/home/bench", plan_json, annotated_json, None)
            plans.append((plan_id, digest, str(row.status), now, now, uid, "model", "bench",
                          "/home/bench", plan_json, annotated_json, None))
            steps += [(plan_id, i, f"s{i}", str(StepStatus.SUCCEEDED)) for i in range(STEPS)]
            bodies: list[tuple[str, str | None, dict[str, Any]]] = [
                ("plan_submitted", None, {**seal_of(row), "status": "submitted"}),
                ("plan_status", None, {"status": "running"})]
            for i in range(STEPS):
                bodies += [("step_started", f"s{i}", {}),
                           ("step_finished", f"s{i}", {"exit_code": 0})]
            bodies.append(("plan_status", None, {"status": "succeeded"}))
            for kind, step_id, body in bodies:
                row_id += 1
                text = canonical_json(body).decode()
                digest_ = event_hash(prev, row_id, now, plan_id, kind, step_id, text)
                events.append((row_id, now, plan_id, kind, step_id, text, prev, digest_))
                prev = digest_
        with journal._tx():
            if hasattr(journal, "set_backup_sizes"):  # what the daemon keeps as plans end
                journal._db.executemany(
                    "INSERT INTO backup_sizes(plan_id, bytes, removable, finished_at, stale) "
                    "VALUES (?, 4096, 0, ?, 0)", [(p[0], p[4]) for p in plans])
            journal._db.executemany(
                "INSERT INTO plans VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", plans)
            journal._db.executemany(
                "INSERT INTO steps(plan_id, idx, step_id, status) VALUES (?, ?, ?, ?)", steps)
            journal._db.executemany(
                "INSERT INTO events(id, ts, plan_id, kind, step_id, body, prev_hash, hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", events)
    # the daemon's many small writes let SQLite checkpoint as it goes; one bulk fill leaves a
    # WAL of the whole journal that every read would search
    journal._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return first


def median_ms(action: Callable[[], object], rounds: int) -> float:
    """Median wall time of ``action`` in milliseconds."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def measure(count: int, rounds: int, base: Path) -> dict[str, float]:
    """The three figures for a journal of ``count`` plans."""
    journal = Journal(base / f"journal-{count}.sqlite3")
    started = time.perf_counter()
    oldest = fill(journal, count)
    print(f"  {count:>7} plans written in {time.perf_counter() - started:.1f} s", flush=True)
    row = journal.get_plan(oldest)
    assert row is not None

    def show() -> None:
        plan_record(row, journal)
        journal.events_of(oldest, "verify")
        journal.last_body(oldest, "preview")

    def rollback() -> None:
        journal.check_plan(oldest)
        journal.set_plan_status(oldest, PlanStatus.SUCCEEDED)

    figures = {"show": median_ms(show, rounds),
               "history": median_ms(lambda: journal.list_plans(200), rounds),
               "rollback (journal)": median_ms(rollback, rounds)}
    assert journal.verify().ok
    journal.close()
    return figures


def main() -> None:
    """Print the figures side by side and the ratio of the largest to the smallest."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,10000,100000")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--daemon", action="store_true")
    parser.add_argument("--tree", type=Path, default=ROOT)
    parser.add_argument("--migration", type=Path, metavar="OLD_TREE",
                        help="a journal written by OLD_TREE, opened and measured by this one")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.migration:
        from bench.journal_daemon import measure_migration

        results = {n: measure_migration(n, args.migration.resolve()) for n in sizes}
    elif args.daemon:
        from bench.journal_daemon import measure_daemon

        results = {n: measure_daemon(n, args.rounds or 3, args.tree.resolve()) for n in sizes}
    else:
        with tempfile.TemporaryDirectory(prefix="anna-bench-journal-") as tmp:
            results = {n: measure(n, args.rounds or 15, Path(tmp)) for n in sizes}
    print(f"\n{'(ms, MB)':<20}" + "".join(f"{n:>12,}" for n in sizes) + f"{'ratio':>10}")
    for name in results[sizes[0]]:
        row = [results[n][name] for n in sizes]
        print(f"{name:<20}" + "".join(f"{v:>12.2f}" for v in row)
              + f"{row[-1] / row[0] if row[0] else 0:>9.2f}x")


if __name__ == "__main__":
    main()
