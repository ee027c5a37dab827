"""kill -9 during a rollback: a removed tree and an in-place restore on a full disk (issue 35).

    .venv/bin/python bench/faults_undo.py [--trials 30]

Runs tests/daemon/test_faults_undo.py with ``--trials`` trials of each kind (the suite runs
3, to stay quick), on a per-user daemon (run as root) and on the root daemon: each killed
with SIGKILL the moment its rollback is visibly under way — a tree of 400 files the plan made
no longer whole, or a 5 MiB file on a full 12 MiB tmpfs (in a private mount namespace) no longer what the step left, so restored
in place — then started again and rolled back again. Prints the counts: trials, kills that
came midway, files torn at the kill (an in-place restore cut short: recorded, finished by
the next rollback), torn after the second rollback, false ``rolled_back`` claims, and second
rollbacks that were byte-exact; then the wall time and the load average.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _faults import trials


def main() -> int:
    """Run the trials; exit with pytest's status."""
    count, done, took = trials(__doc__.split("\n\n")[0], "tests/daemon/test_faults_undo.py",
                               why_root="the full disk is a tmpfs mounted in a private mount namespace: run as root")
    counts = re.search(r"FAULTS_UNDO (\{.*\})", done.stdout)
    print(done.stdout[-1500:] if counts is None else "", done.stderr[-1500:], sep="\n")
    print(f"{count} trials each of kill -9 during a rollback (a removed tree, an in-place "
          f"restore on a full disk), per-user and root daemons: "
          f"{counts.group(1) if counts else 'no counts'}; pytest status {done.returncode}, "
          f"{took}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
