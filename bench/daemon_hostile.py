"""A real per-user annad under hostile input (issue 22): idle memory, nested submits, and
health latency while a hostile plan is analysed.

Prints: the daemon's RSS and peak RSS idle after start; the submit of
``echo $($($(…)))`` nested 25, 30 and 100 deep (status, time, RSS/peak); a 15-step plan of
the costliest 4 KB commands known (a brace list with no close, 1,000 extglobs, 300 nested
subscripts) submitted while another client polls ``/v1/health`` (the submit's time and the
health latencies: count, median, max); the RSS idle after that work.

Before (main 695b9f5, issue 22): nested 25 deep 46 s and 797 MB, 30 deep over 90 s and
1.6 GB; a 63 KB plan of 15 such steps 12 s, health 0.6-1.7 s meanwhile; idle 60-67 MiB.
Goal: idle RSS <= 60 MB.

Run: .venv/bin/python bench/daemon_hostile.py
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.daemonfix import RunningDaemon, http, make_plan, running_daemon

HOSTILE = [";{" + "," * 4000 + ";", "ls " + "@(a|" * 1000, "echo ${a[" * 300 + "1" + "]}" * 300]
"""The costliest 4 KB commands known (tests/worst_inputs.py)."""


def memory(pid: int) -> str:
    """VmRSS and VmHWM of a process."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text()
                  .splitlines() if ":" in line)
    return f"rss {fields['VmRSS'].strip()}, peak {fields['VmHWM'].strip()}"


def submit(daemon: RunningDaemon, steps: list[tuple[str, str, str]]) -> tuple[int, float]:
    """Submit a plan; (HTTP status, seconds)."""
    started = time.monotonic()
    status, _ = http(daemon.socket, "POST", "/v1/plans",
                     {"plan": make_plan(steps), "request": "bench", "source": "model"})
    return status, time.monotonic() - started


def scenario(daemon: RunningDaemon) -> None:
    """The figures, printed as they are measured."""
    assert daemon.proc is not None
    pid = daemon.proc.pid
    for _ in range(5):
        http(daemon.socket, "GET", "/v1/health")
    time.sleep(8)  # idle: nothing in flight
    print(f"idle after start: {memory(pid)}")
    for depth in (25, 30, 100):
        status, seconds = submit(daemon, [("s1", "echo " + "$(" * depth + "x" + ")" * depth,
                                           "HIGH")])
        print(f"nested $( {depth:>3} deep: HTTP {status} in {seconds:.3f} s; {memory(pid)}")
    steps = [(f"s{i}", HOSTILE[i % 3], "HIGH") for i in range(15)]
    latencies: list[float] = []
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            started = time.monotonic()
            http(daemon.socket, "GET", "/v1/health")
            latencies.append(time.monotonic() - started)

    poller = threading.Thread(target=poll)
    poller.start()
    status, seconds = submit(daemon, steps)
    stop.set()
    poller.join()
    latencies.sort()
    size = len(json.dumps(make_plan(steps)))
    print(f"hostile 15-step plan ({size} bytes): HTTP {status} in {seconds:.2f} s; health "
          f"meanwhile: {len(latencies)} answers, median {latencies[len(latencies) // 2] * 1000:.0f}"
          f" ms, max {latencies[-1] * 1000:.0f} ms")
    time.sleep(8)
    print(f"idle after that work: {memory(pid)}")


def main() -> None:
    """Run the scenario on a fresh daemon in a temporary directory."""
    with running_daemon(user_mode=True) as daemon:
        scenario(daemon)


if __name__ == "__main__":
    main()
