"""kill -9 during a per-user daemon's commit and rollback: issue 19's 30 trials of each (as root).

    .venv/bin/python bench/faults_user.py [--trials 30]

Runs tests/daemon/test_faults_capture_user.py with ``--trials`` trials of each kind (the
suite runs 6, to stay quick): a per-user daemon of uid 65534, its capture in a user
namespace, killed with SIGKILL the moment the k-th file of a 600-path commit (or of its
rollback) landed, k moving through the whole change set across the trials; started again,
the tree must be exactly before or after the step, and the rollback (run again when it was
the one killed) byte-exact. Prints pytest's summary, how many kills came midway (the
module's last test checks at least a third of each), the wall time and the load average.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    """Run the trials; exit with pytest's status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=30, help="trials of each kind")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("the per-user daemon is run as uid 65534 by root: run this as root")
    load = Path("/proc/loadavg").read_text().split()[0]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", "-s",
         "tests/daemon/test_faults_capture_user.py"],
        cwd=REPO, env={**os.environ, "ANNA_FAULT_TRIALS": str(args.trials)}, check=False,
        capture_output=True, text=True)
    print(done.stdout[-3000:], done.stderr[-2000:], sep="\n")
    print(f"{args.trials} trials each of kill -9 during the commit and during the rollback, "
          f"per-user daemon: pytest status {done.returncode}, "
          f"{time.monotonic() - started:.0f} s, load {load} at the start, "
          f"{Path('/proc/loadavg').read_text().split()[0]} at the end")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
