"""Added latency of the confinement per check: ``true`` confined vs unconfined (median of N).

Run as root (the system daemon's case): .venv/bin/python bench/confine.py [RUNS]
As another user it measures the per-user daemon's case (a user namespace).
"""

from __future__ import annotations

import os
import pwd
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annad.runner import Identity, run_confined, run_shell  # noqa: E402


def _median_ms(run: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = run()  # type: ignore[operator]
        times.append((time.perf_counter() - started) * 1000)
        assert result.ok, result
    return statistics.median(times)


def main() -> int:
    """Print the medians and the difference."""
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    me = pwd.getpwuid(os.geteuid())
    owner = Identity(uid=me.pw_uid, gid=me.pw_gid, home="/tmp", user=me.pw_name)
    if os.geteuid() == 0:
        owner = Identity(uid=65534, gid=65534, groups=(65534,), home="/tmp", user="nobody")
    plain = _median_ms(lambda: run_shell("true", identity=owner, cwd="/tmp"), runs)
    confined = _median_ms(lambda: run_confined("true", owner, cwd="/tmp"), runs)
    root = _median_ms(lambda: run_confined("true", owner, root_read=True), runs) \
        if os.geteuid() == 0 else float("nan")
    print(f"runs: {runs} each, as uid {os.geteuid()} "
          f"({'system daemon' if os.geteuid() == 0 else 'per-user daemon: user namespace'})")
    print(f"unconfined `true`:            {plain:7.1f} ms (median)")
    print(f"confined `true` (owner):      {confined:7.1f} ms (median)")
    print(f"confined `true` (capless root): {root:5.1f} ms (median)")
    print(f"added per check:              {confined - plain:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
