"""A long soak of one daemon: its memory curve while plans keep coming (issue 38: flat).

The real per-user daemon (tests/daemonfix.py) does bench/daemon_memory.py's round of work
(submit, checks, preview, execute, rollback of a file edit; telemetry, history, a policy
check, the audit chain) again and again for ``--minutes``; every ``--every`` seconds it prints
the plans run so far, the journal's size and the daemon's VmRSS (MB, 10^6 bytes; anonymous
and file-backed), and at the end the curve's first, last and highest points.

``--trace DIR`` runs the daemon under tracemalloc (bench/_traced_daemon.py) and, at each
sample, has it write a snapshot and its live objects by type into DIR; ``--compare DIR``
then prints what grew between two snapshots, grouped by traceback.
``--tree PATH`` runs another checkout's daemon (e.g. a ``git worktree`` of main) with this
bench, so two trees can soak side by side.

Run: .venv/bin/python bench/soak.py [--minutes 30] [--every 60] [--trace DIR] [--tree PATH]
[--env NAME=VALUE ...] [--without audit|history|policy|telemetry ...]; .venv/bin/python bench/soak.py --compare DIR [--first N --last M]
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from daemon_memory import ROUND_PARTS, status, work_round

from tests.daemonfix import RunningDaemon, new_daemon, stop_and_remove
from tests.waiting import wait_until

HERE = Path(__file__).resolve().parent


def traced(daemon: RunningDaemon, out: Path) -> None:
    """Make the daemon run under tracemalloc, writing its snapshots into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    module = daemon.argv.index("-m")
    daemon.argv[module:module + 2] = [str(HERE / "_traced_daemon.py")]
    daemon.env["ANNA_BENCH_TRACE_DIR"] = str(out)


def snapshot(daemon: RunningDaemon, out: Path) -> None:
    """Ask a traced daemon for a snapshot and wait until it is written."""
    assert daemon.proc is not None
    n = len(list(out.glob("done-*")))
    daemon.proc.send_signal(signal.SIGUSR1)
    wait_until((out / f"done-{n}").exists, "the tracemalloc snapshot", timeout=300)


def compare(out: Path, first: int, last: int, top: int) -> None:
    """What grew between two snapshots, by traceback, then by line."""
    import tracemalloc

    before = tracemalloc.Snapshot.load(str(out / f"snap-{first}.pickle"))
    after = tracemalloc.Snapshot.load(str(out / f"snap-{last}.pickle"))
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__)]
    before, after = before.filter_traces(ignore), after.filter_traces(ignore)
    total = sum(s.size_diff for s in after.compare_to(before, "filename"))
    print(f"traced growth {first} -> {last}: {total / 1e3:.1f} kB")
    for stat in after.compare_to(before, "lineno")[:top]:
        print(f"  {stat.size_diff / 1e3:+9.1f} kB {stat.count_diff:+7d}  {stat.traceback[0]}")
    for stat in after.compare_to(before, "traceback")[:top // 2]:
        print(f"{stat.size_diff / 1e3:+9.1f} kB {stat.count_diff:+7d} blocks")
        for line in stat.traceback.format(limit=12):
            print("   " + line)


def soak(args: argparse.Namespace) -> None:
    """Run the rounds and print the curve."""
    env = dict(item.split("=", 1) for item in args.env)
    daemon = new_daemon(user_mode=True, env=env)
    if args.tree:
        tree = Path(args.tree).resolve()
        daemon.env["PYTHONPATH"] = str(tree)
        if (tree / ".venv" / "bin" / "python").exists():
            daemon.argv[0] = str(tree / ".venv" / "bin" / "python")
    if args.trace:
        traced(daemon, Path(args.trace))
    curve: list[tuple[float, int, float]] = []
    try:
        daemon.start()
        assert daemon.proc is not None
        started = time.monotonic()
        deadline = started + args.minutes * 60
        rounds, next_sample = 0, started
        while True:
            now = time.monotonic()
            if now >= next_sample or now >= deadline:
                if args.trace:
                    snapshot(daemon, Path(args.trace))
                fields = status(daemon.proc.pid)
                rss = fields["VmRSS"] * 1024 / 1e6
                journal = sum(p.stat().st_size for p in daemon.state.glob("journal.sqlite3*")
                              if p.is_file()) / 1e6
                curve.append((now - started, rounds, rss))
                print(f"{(now - started) / 60:6.1f} min  {rounds:6d} plans  journal "
                      f"{journal:7.1f} MB  rss {rss:6.1f} MB (anon "
                      f"{fields['RssAnon'] * 1024 / 1e6:5.1f}, file "
                      f"{fields['RssFile'] * 1024 / 1e6:5.1f})  threads "
                      f"{len(os.listdir(f'/proc/{daemon.proc.pid}/task'))}  "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
                next_sample += args.every
            if now >= deadline:
                break
            work_round(daemon, rounds, frozenset(args.without))
            rounds += 1
    finally:
        threading.Thread(target=stop_and_remove, args=(daemon,)).start()
    first, last = curve[0][2], curve[-1][2]
    print(f"rss first {first:.1f} MB, last {last:.1f} MB, highest "
          f"{max(c[2] for c in curve):.1f} MB, over {rounds} plans")


def main() -> None:
    """Soak, or compare two snapshots of an earlier traced soak."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=60.0)
    parser.add_argument("--trace", metavar="DIR", help="run under tracemalloc, snapshots here")
    parser.add_argument("--tree", metavar="PATH", help="the daemon of this checkout instead")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--without", action="append", default=[], choices=ROUND_PARTS,
                        help="leave this read out of each round")
    parser.add_argument("--compare", metavar="DIR", help="compare two snapshots in DIR")
    parser.add_argument("--first", type=int, default=1)
    parser.add_argument("--last", type=int, default=-1)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    if args.compare:
        last = args.last if args.last >= 0 else len(list(Path(args.compare).glob("done-*"))) - 1
        compare(Path(args.compare), args.first, last, args.top)
        return
    soak(args)


if __name__ == "__main__":
    main()
