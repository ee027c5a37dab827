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

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _faults import trials


def main() -> int:
    """Run the trials; exit with pytest's status."""
    count, done, took = trials(__doc__.split("\n\n")[0], "tests/daemon/test_faults_capture_user.py",
                               why_root="the per-user daemon is run as uid 65534 by root: run this as root")
    print(done.stdout[-3000:], done.stderr[-2000:], sep="\n")
    print(f"{count} trials each of kill -9 during the commit and during the rollback, "
          f"per-user daemon: pytest status {done.returncode}, {took}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
