"""annad under tracemalloc, for bench/soak.py ``--trace DIR`` only (never shipped).

Runs ``annad.main`` as ``python -m annad.main`` would, with tracemalloc started first
(frames: ``ANNA_BENCH_TRACE_FRAMES``, default 20). On SIGUSR1 it writes, into the directory
``ANNA_BENCH_TRACE_DIR``, ``snap-N.pickle`` (the tracemalloc snapshot) and ``objects-N.txt``
(live objects by type from the collector, the threads and the open file descriptors), and
then ``done-N`` so the bench knows the files are whole. It lives in bench/ so that no daemon
that is installed can be asked to do this.
"""

from __future__ import annotations

import collections
import gc
import os
import signal
import sys
import threading
import tracemalloc
from pathlib import Path
from types import FrameType


def _dump(_signum: int, _frame: FrameType | None) -> None:
    out = Path(os.environ["ANNA_BENCH_TRACE_DIR"])
    n = len(list(out.glob("done-*")))
    gc.collect()
    tracemalloc.take_snapshot().dump(str(out / f"snap-{n}.pickle"))
    counts = collections.Counter(type(o).__qualname__ for o in gc.get_objects())
    lines = [f"threads {threading.active_count()}: "
             + ", ".join(sorted(t.name for t in threading.enumerate())),
             f"fds {len(os.listdir('/proc/self/fd'))}",
             f"traced {tracemalloc.get_traced_memory()}"]
    lines += [f"{count:9d} {name}" for name, count in counts.most_common(80)]
    (out / f"objects-{n}.txt").write_text("\n".join(lines) + "\n")
    (out / f"done-{n}").touch()


def main() -> None:
    """Start tracing, arm the signal, and run the daemon's entry point."""
    tracemalloc.start(int(os.environ.get("ANNA_BENCH_TRACE_FRAMES", "20")))
    signal.signal(signal.SIGUSR1, _dump)
    from annad.main import main as daemon_main

    sys.argv[0] = "annad"
    sys.exit(daemon_main())


if __name__ == "__main__":
    main()
