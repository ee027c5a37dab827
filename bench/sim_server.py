"""Serve the simulated tiny model of bench/everyday.py on loopback until interrupted.

    .venv/bin/python bench/sim_server.py [--speedup 10]     # prints "URL http://127.0.0.1:P"

Point any bench at it (``bench/golden.py --provider openai --url URL/v1 --model sim``) to
compare two checkouts against the same simulated model (``ANNA_CODE`` for everyday.py, or
the other checkout's own bench/golden.py). Times are ``--speedup`` times faster than the
model it plays (SmolLM2-135M on 2 cores); pass the bench a timeout and budget divided alike.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from everyday import _fakellm, simulated


def main() -> int:
    """Serve until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--speedup", type=float, default=10.0)
    args = parser.parse_args()
    server = _fakellm().FakeLLM(models=("sim",)).start()
    server.cap_tokens = True
    server.responder = simulated(args.speedup)
    print(f"URL {server.base_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
