"""What the capture's walls cost a step, beside a fork that puts up none (as root).

    .venv/bin/python bench/capture_walls.py [--runs 30]

Prints the one-time cost of compiling the capture's seccomp program (the daemon caches it),
its size, and per step — in a forked child, as the capture helper's child does it — the
median time of the Landlock scope, of loading the seccomp program and of keeping only the
file capabilities, against a fork that does nothing (the floor).
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annad.confine import capture_filter, capture_walls, landlock, walls


def _child(program: bytes, walled: bool) -> list[float]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        marks = [time.perf_counter()]
        if walled:
            landlock.scope_only()
            marks.append(time.perf_counter())
            walls.load_filter(program)
            marks.append(time.perf_counter())
            capture_walls.keep_file_capabilities(0)
            marks.append(time.perf_counter())
        os.write(write, " ".join(str(b - a) for a, b in itertools.pairwise(marks)).encode())
        os._exit(0)
    os.close(write)
    data = os.read(read, 256).split()
    os.close(read)
    os.waitpid(pid, 0)
    return [float(x) for x in data]


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    if os.geteuid() != 0:
        sys.exit("the capture's walls need root: run this as root")
    start = time.perf_counter()
    program = capture_filter.program()
    print(f"seccomp program: compiled in {(time.perf_counter() - start) * 1000:.0f} ms once "
          f"per daemon, {len(program)} bytes ({len(program) // 8} instructions)")
    parts = [_child(program, walled=True) for _ in range(runs)]
    for index, name in enumerate(("landlock scope", "seccomp load", "capabilities")):
        print(f"  {name:16} {statistics.median(p[index] for p in parts) * 1000:6.2f} ms "
              f"(median of {runs})")
    total = statistics.median(sum(p) for p in parts) * 1000
    print(f"  all walls        {total:6.2f} ms per captured step")


if __name__ == "__main__":
    main()
