"""What the kill -9 benches share: run one fault module's trials under pytest, as root."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def trials(description: str, module: str, *, why_root: str
           ) -> tuple[int, subprocess.CompletedProcess[str], str]:
    """Parse ``--trials``, run ``module`` with that many trials of each kind; (trials, the
    finished pytest, "N s, load A at the start, B at the end")."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--trials", type=int, default=30, help="trials of each kind")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit(why_root)
    load = Path("/proc/loadavg").read_text().split()[0]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", "-s", module],
        cwd=REPO, env={**os.environ, "ANNA_FAULT_TRIALS": str(args.trials)}, check=False,
        capture_output=True, text=True)
    took = (f"{time.monotonic() - started:.0f} s, load {load} at the start, "
            f"{Path('/proc/loadavg').read_text().split()[0]} at the end")
    return args.trials, done, took
