"""A long soak of one daemon: its memory curve while plans keep coming (issue 38: flat).

The real per-user daemon (tests/daemonfix.py) does bench/daemon_memory.py's round of work
(submit, checks, preview, execute, rollback of a file edit; telemetry, history, a policy
check, the audit chain) again and again for ``--minutes``; every ``--every`` seconds it prints
the plans run so far, the journal's size and the daemon's VmRSS (MB, 10^6 bytes), and at the
end the curve's first, last and highest points.

Run: .venv/bin/python bench/soak.py [--minutes 30] [--every 60]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from daemon_memory import status, work_round

from tests.daemonfix import running_daemon


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=60.0)
    args = parser.parse_args()
    curve: list[tuple[float, int, float]] = []
    with running_daemon(user_mode=True) as daemon:
        assert daemon.proc is not None
        started = time.monotonic()
        deadline = started + args.minutes * 60
        rounds, next_sample = 0, started
        while True:
            now = time.monotonic()
            if now >= next_sample or now >= deadline:
                rss = status(daemon.proc.pid)["VmRSS"] * 1024 / 1e6
                journal = sum(p.stat().st_size for p in daemon.state.glob("journal.sqlite3*")
                              if p.is_file()) / 1e6
                curve.append((now - started, rounds, rss))
                print(f"{(now - started) / 60:6.1f} min  {rounds:6d} plans  journal "
                      f"{journal:7.1f} MB  rss {rss:6.1f} MB  load {os.getloadavg()[0]:.1f}",
                      flush=True)
                next_sample += args.every
            if now >= deadline:
                break
            work_round(daemon, rounds)
            rounds += 1
    first, last = curve[0][2], curve[-1][2]
    print(f"rss first {first:.1f} MB, last {last:.1f} MB, highest "
          f"{max(c[2] for c in curve):.1f} MB, over {rounds} plans")


if __name__ == "__main__":
    main()
