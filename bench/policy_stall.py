"""A pathological policy glob against the real daemon (issue 21 item 4).

A user's own ``~/.config/anna/policy.toml`` with ``path = "/**/**/**/**/**/**/**/zz"``
once froze the whole daemon: its glob became a backtracking regex, matched under the GIL.
This starts a real per-user annad (tests/daemonfix.py) in a temporary directory, writes
that policy into the daemon's home, and then, with two real clients on the socket:

- client A submits a one-step plan whose path has many components (``touch /tmp/a/…/a``)
  and the time its submit takes is measured;
- client B asks for ``/v1/health`` in a loop while A's submit runs; its slowest and median
  answers are printed.

Then the same with a plain policy (``path = "/etc/ssh/**"``) as the baseline, and with
the costliest glob the parser still accepts (four ``**``, stars and a set). A policy the
daemon refuses at parse time (a coded ``POLICY_INVALID``) is reported as such: the submit is
refused at once, which is the intended answer to such a file.
Run: .venv/bin/python bench/policy_stall.py [COMPONENTS]
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from anna_common.errors import AnnaError  # noqa: E402
from anna_common.plan import ActionPlan  # noqa: E402
from tests.daemonfix import make_plan, new_daemon, stop_and_remove  # noqa: E402

PATHOLOGICAL = "/**/**/**/**/**/**/**/zz"
PLAIN = "/etc/ssh/**"
WORST_ALLOWED = "/**/**/**/*z*[!a]z/**"
"""The most ``**`` a rule may hold, with stars and a set between them."""


def one_run(glob: str, components: int) -> dict[str, object]:
    """Submit time and health latencies with ``glob`` as the user's deny rule."""
    daemon = new_daemon(user_mode=True).start()
    try:
        policy = daemon.home / ".config" / "anna" / "policy.toml"
        policy.parent.mkdir(parents=True, exist_ok=True)
        policy.write_text(f'[[rule]]\nid = "stall"\naction = "deny"\npath = "{glob}"\n')
        target = "/tmp/" + "/".join(["a"] * components)
        plan = ActionPlan.model_validate(make_plan([("t", f"touch {target}", "LOW")]))
        result: dict[str, object] = {}
        done = threading.Event()

        def submit() -> None:
            client = daemon.client()
            start = time.perf_counter()
            try:
                client.submit(plan, source="file")
                result["submit"] = "stored"
            except AnnaError as exc:
                result["submit"] = str(exc.code)
            finally:
                result["submit_s"] = time.perf_counter() - start
                client.close()
                done.set()

        latencies: list[float] = []
        health = daemon.client()
        health.health()  # connection warm
        thread = threading.Thread(target=submit)
        thread.start()
        while not done.is_set():
            start = time.perf_counter()
            health.health()
            latencies.append(time.perf_counter() - start)
        thread.join()
        health.close()
        result["health_max_s"] = max(latencies)
        result["health_median_s"] = statistics.median(latencies)
        result["health_calls"] = len(latencies)
        return result
    finally:
        stop_and_remove(daemon)


def main() -> None:
    """Print both runs side by side."""
    components = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    for glob in (PLAIN, WORST_ALLOWED, PATHOLOGICAL):
        r = one_run(glob, components)
        print(f"{glob:28} submit {r['submit']:>16} in {r['submit_s']:7.3f} s; other client's "
              f"health: max {r['health_max_s']:7.3f} s, median {r['health_median_s']:.4f} s "
              f"over {r['health_calls']} calls")


if __name__ == "__main__":
    main()
