"""Added cost of the confinement per check: ``true`` confined vs unconfined (median of N).

CPU is counted over this process's whole tree: the confinement helper lives across runs
(one per confinement), so its commands' CPU is in its reaped children's time, and its own
start-up (once per session) is spread over the runs.

Run as root (the system daemon's case): .venv/bin/python bench/confine.py [RUNS]
As another user it measures the per-user daemon's case (a user namespace).
``bench/confine.py --view`` prints instead the read commands of
tests/daemon/test_confine_view.py run directly and confined, side by side (as root).
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

from _cpu import tree_cpu_s  # noqa: E402

from annad.confine.credentials import Identity  # noqa: E402
from annad.confine.runner import run_confined, run_shell  # noqa: E402


def _median_ms(run: object, runs: int) -> tuple[float, float]:
    """Median wall time, and CPU time per run of everything but this process, in ms."""
    times = []
    me = resource.getrusage(resource.RUSAGE_SELF)
    before = tree_cpu_s(os.getpid())
    for _ in range(runs):
        started = time.perf_counter()
        result = run()  # type: ignore[operator]
        times.append((time.perf_counter() - started) * 1000)
        assert result.ok, result
    mine = resource.getrusage(resource.RUSAGE_SELF)
    own = mine.ru_utime + mine.ru_stime - me.ru_utime - me.ru_stime
    used = tree_cpu_s(os.getpid()) - before - own
    return statistics.median(times), used / runs * 1000


def view() -> int:
    """The read commands, directly and confined: first line of each, and the verdict."""
    from tests.daemon.test_confine_view import READS, confined, direct

    print(f"{'command':38s} {'direct':34s} {'confined':34s} same")
    for command, same in READS:
        plain, walled = direct(command).strip(), confined(command).strip()
        first = (plain.splitlines() or [""])[0][:33], (walled.splitlines() or [""])[0][:33]
        print(f"{command[:38]:38s} {first[0]:34s} {first[1]:34s} "
              f"{'yes' if same(plain, walled) else 'NO'}")
    return 0


def main() -> int:
    """Print the medians and the difference."""
    if sys.argv[1:] == ["--view"]:
        return view()
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
    print("                                wall (median)   CPU of the process tree (mean)")
    for label, (wall, used) in (("unconfined `true`", plain), ("confined, owner", confined),
                                ("confined, capless root", root)):
        print(f"{label:30s} {wall:8.1f} ms {used:14.1f} ms")
    print(f"added per check: {confined[0] - plain[0]:.1f} ms wall, "
          f"{confined[1] - plain[1]:.1f} ms CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
