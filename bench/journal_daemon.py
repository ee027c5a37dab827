"""``bench/journal.py --daemon``: the real daemon over a journal of N plans (issue 38 item 1).

Each size gets a fresh per-user daemon (tests/daemonfix.py) whose journal was filled first
by the measured tree's own ``bench.journal.fill`` (in a subprocess with that tree on
``sys.path``, so an older checkout writes the schema it reads). Times are wall clock of
this process; CPU is the daemon's (``/proc/PID/stat``); RSS is VmRSS once steady.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tests.daemonfix import RunningDaemon, http, make_plan, new_daemon, stop_and_remove

STEADY_S = 2.0
_FILL = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from annad.journal.store import Journal
from bench.journal import fill
journal = Journal(Path(sys.argv[2]))
fill(journal, int(sys.argv[3]))
journal.close()
"""


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024 / 1e6
    return 0.0


def _steady_rss(pid: int) -> float:
    last, since = -1.0, time.monotonic()
    while True:
        now = _rss_mb(pid)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= STEADY_S:
            return now
        time.sleep(0.2)


def _round(daemon: RunningDaemon, n: int) -> tuple[float, float, float]:
    """(apply s, rollback s, daemon CPU s of the rollback) of one edit plan."""
    from anna_common.plan import ActionPlan

    client = daemon.client()
    target = daemon.home / "bench.conf"
    target.write_text("value=1\n")
    plan = make_plan([("edit", f"sed -i s/value=1/value={n + 2}/ ~/bench.conf", "LOW")])
    started = time.perf_counter()
    response = client.submit(ActionPlan.model_validate(plan), request=f"bench {n}")
    events = list(client.execute(response.plan_id, response.digest, confirmed=True,
                                 high_confirmed=False))
    applied = time.perf_counter() - started
    assert events[-1].status == "succeeded", events[-1]
    assert daemon.proc is not None
    cpu = _cpu_s(daemon.proc.pid)
    started = time.perf_counter()
    assert client.rollback(response.plan_id).status == "rolled_back"
    return applied, time.perf_counter() - started, _cpu_s(daemon.proc.pid) - cpu


def measure_daemon(count: int, rounds: int, tree: Path) -> dict[str, float]:
    """The daemon's figures over a journal of ``count`` plans, in ms and MB."""
    daemon = new_daemon(user_mode=True, env={"PYTHONPATH": str(tree)})
    try:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", _FILL, str(tree),
                        str(daemon.state / "journal.sqlite3"), str(count)], check=True)
        print(f"  {count:>7} plans written in {time.perf_counter() - started:.1f} s "
              f"({tree})", flush=True)
        os.sync()  # the fill's dirty pages on disk now, not during the daemon's fsyncs
        started = time.perf_counter()
        daemon.start()
        status, _ = http(daemon.socket, "GET", "/v1/plans?limit=1")
        start_s = time.perf_counter() - started
        assert status == 200 and daemon.proc is not None
        pid = daemon.proc.pid
        idle = _steady_rss(pid)
        walls = [_round(daemon, n) for n in range(rounds)]
        env = {**daemon.env, "ANNA_SOCKET": str(daemon.socket), "ANNA_AUTOSTART": "0"}
        started = time.perf_counter()
        with open(os.devnull, "w") as sink:
            listed = subprocess.run([sys.executable, "-m", "annactl.cli", "history", "--all",
                                     "--json"], env=env, stdout=sink, stderr=subprocess.PIPE,
                                    check=False, cwd=str(tree), timeout=1800)
        history_s = time.perf_counter() - started
        if listed.returncode != 0:  # main's at 100,000 plans: the client's read timed out
            print(f"  history --all FAILED after {history_s:.1f} s: "
                  f"{listed.stderr.decode()[-300:]}", flush=True)
        after = _steady_rss(pid)
    finally:
        stop_and_remove(daemon)
    return {"start": start_s * 1000,
            "apply": statistics.median(w[0] for w in walls) * 1000,
            "rollback": statistics.median(w[1] for w in walls) * 1000,
            "rollback CPU": statistics.median(w[2] for w in walls) * 1000,
            "history --all": history_s * 1000,
            "idle RSS MB": idle, "RSS after --all MB": after}


def measure_migration(count: int, old: Path) -> dict[str, float]:
    """Open a journal of ``count`` plans written by the older checkout ``old`` with this
    tree's journal (the schema migration), run retention's first pass (which measures every
    seeded plan once), then open it again: seconds, wall and CPU of this process."""
    import shutil
    import tempfile

    from annad.execution.retention import Policy, Retention
    from annad.journal.store import Journal

    base = Path(tempfile.mkdtemp(prefix="anna-bench-migrate-"))
    try:
        path = base / "journal.sqlite3"
        subprocess.run([sys.executable, "-c", _FILL, str(old), str(path), str(count)],
                       check=True)
        os.sync()
        figures: dict[str, float] = {}
        wall, cpu = time.perf_counter(), time.process_time()
        journal = Journal(path)
        figures["open + migrate s"] = time.perf_counter() - wall
        figures["open + migrate CPU s"] = time.process_time() - cpu
        wall, cpu = time.perf_counter(), time.process_time()
        Retention(journal=journal, backups=base / "backups",
                  policy=Policy(keep_days=30, max_bytes=1 << 30)).measure()
        figures["first pass s"] = time.perf_counter() - wall
        figures["first pass CPU s"] = time.process_time() - cpu
        journal.close()
        wall = time.perf_counter()
        Journal(path).close()
        figures["reopen s"] = time.perf_counter() - wall
        return figures
    finally:
        shutil.rmtree(base, ignore_errors=True)
