"""What the special-file walls and the preview's memory watch cost, per use.

    .venv/bin/python bench/walls.py [--runs 50] [--processes 10]

Prints the time to compute a captured step's Landlock file rules from this machine's mount
plan (``annad.confine.capture_walls.file_rules``: done once per captured step, in the step's
process) and the time of one look of the preview helper's memory watch over N sleeping
processes (``annad.confine.memwatch``: done at most every 50 ms while a per-user daemon's
previewed step runs). Medians; run beside nothing else for figures to compare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annad.capture.layers import mount_plan
from annad.confine.capture_walls import file_rules
from annad.confine.memwatch import descendants, resident


def _median_ms(action: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        action()  # type: ignore[operator]
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def main() -> int:
    """Measure and print."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--processes", type=int, default=10)
    args = parser.parse_args()
    plan, _ = mount_plan(Path("/proc/self/mountinfo").read_text(), "/nonexistent")
    files, trees, entries = file_rules(plan)
    rules_ms = _median_ms(lambda: file_rules(plan), args.runs)
    print(f"file rules: {rules_ms:.2f} ms median ({len(files)} files, {len(trees)} trees, "
          f"{len(entries)} entry-only directories)")
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(args.processes)]
    try:
        look_ms = _median_ms(lambda: resident(descendants(os.getpid())), args.runs)
    finally:
        for proc in sleepers:
            proc.kill()
            proc.wait()
    print(f"memory watch: {look_ms:.2f} ms median per look over {args.processes} processes "
          f"({look_ms / 50 * 100:.1f}% of a core at one look per 50 ms)")
    print(f"load average: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
