"""Added latency of the confinement per check: ``true`` confined vs unconfined (median of N).

Run as root (the system daemon's case): .venv/bin/python bench/confine.py [RUNS]
As another user it measures the per-user daemon's case (a user namespace).
"""

from __future__ import annotations

import os
import pwd
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annad.confine.credentials import Identity  # noqa: E402
from annad.confine.runner import run_confined, run_shell  # noqa: E402


def _median_ms(run: object, runs: int) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system of the children) in ms."""
    times, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        result = run()  # type: ignore[operator]
        times.append((time.perf_counter() - started) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
        assert result.ok, result
    return statistics.median(times), statistics.median(cpu)


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
        if os.geteuid() == 0 else (float("nan"), float("nan"))
    print(f"runs: {runs} each, as uid {os.geteuid()} "
          f"({'system daemon' if os.geteuid() == 0 else 'per-user daemon: user namespace'}); "
          f"load average {os.getloadavg()[0]:.1f}")
    print("                                wall (median)   CPU of children (median)")
    for label, (wall, used) in (("unconfined `true`", plain), ("confined, owner", confined),
                                ("confined, capless root", root)):
        print(f"{label:30s} {wall:8.1f} ms {used:14.1f} ms")
    print(f"added per check: {confined[0] - plain[0]:.1f} ms wall, "
          f"{confined[1] - plain[1]:.1f} ms CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
