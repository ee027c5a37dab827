"""Daemon overheads, measured side by side in one run against a real annad.

Run from the repository root:

    .venv/bin/python bench/executor.py [--steps 50] [--plans 6] [--mode user|system]
    .venv/bin/python bench/executor.py --big [--size-mib 256] [--mode user|system]
    .venv/bin/python bench/executor.py --captured [--steps 10] [--plans 3] [--tree DIR …]
        (as root: captured steps and the undo of a 5,000-file change set, bench/captured.py;
        each --tree, e.g. a ``git archive`` of main, is measured beside the others)
    .venv/bin/python bench/executor.py --captured --owner [--steps 10] [--plans 3]
        (as root: the same small captured step through a per-user daemon run as uid 65534,
        whose capture is in a user namespace, beside the root daemon's)

Prints, with the goals of issue 3:

- per-step overhead of executing through the daemon: submit + execute of plans of N
  trivial ``true`` INFO steps (run confined) over the real socket, per step, minus a bare
  ``bash -c true`` spawned the same number of times in the same run (goal ≤ 15 ms), in
  wall time and in CPU time (the daemon's process tree: the confinement helper and the
  commands it ran included; issue 20's goal); the same for a step that writes a file in
  the temporary home (the daemon snapshots it first);
- idle RSS of the daemon process after start-up and after the runs (goal ≤ 60 MB);
- the client: import time of ``annactl.core.daemon_client`` (stdlib http.client) against
  ``httpx``, and one ``health`` round trip with each.

Everything happens in a temporary directory (socket, state, home); the plans touch
nothing (``true``).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _cpu import tree_cpu_s
from captured import BIG_FILE, TREE, captured, load

from anna_common.plan import ActionPlan
from anna_common.risk import tiers
from tests.daemonfix import RunningDaemon, make_plan, running_daemon


def rss_mb(pid: int) -> float:
    """Resident set size of a process, MB (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def bare_bash(n: int, command: str = "true") -> float:
    """Seconds per bare ``bash --noprofile --norc -c COMMAND``."""
    started = time.perf_counter()
    for _ in range(n):
        subprocess.run(["/bin/bash", "--noprofile", "--norc", "-c", command], check=True,
                       stdin=subprocess.DEVNULL)
    return (time.perf_counter() - started) / n


def bare_bash_cpu(n: int) -> float:
    """CPU seconds (user + system) per bare ``bash -c true``, from this process's children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    bare_bash(n)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / n


def through_daemon(daemon: RunningDaemon, steps: int, command: str = "true",
                   risk: str = "INFO") -> tuple[float, float, float]:
    """(submit seconds, execute seconds per step, CPU seconds per executed step of the
    daemon's process tree) for one plan of ``steps`` ``command`` steps."""
    client = daemon.client()
    plan = ActionPlan.model_validate(make_plan([(f"s{i}", command, risk)
                                                for i in range(steps)]))
    started = time.perf_counter()
    submitted = client.submit(plan)
    submitted_at = time.perf_counter()
    cpu_before = tree_cpu_s(daemon.proc.pid) if daemon.proc is not None else 0.0
    word = tiers.plan_word(submitted.annotated)
    events = list(client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                                 high_confirmed=word is not None, confirm_word=word))
    done = time.perf_counter()
    cpu = (tree_cpu_s(daemon.proc.pid) - cpu_before) / steps if daemon.proc is not None else 0.0
    assert events[-1].status == "succeeded", events[-1]
    return submitted_at - started, (done - submitted_at) / steps, cpu


def client_costs(daemon: RunningDaemon) -> dict[str, float]:
    """Import time (fresh interpreter) and one raw health round trip, stdlib client vs httpx.

    Transport only: both return the JSON as a dict (building the pydantic models is the
    same cost for either and is reported on its own line).
    """
    code = {
        "stdlib": "import time; t=time.perf_counter(); import annactl.core.daemon_client as d; "
                  "i=time.perf_counter(); d.DaemonClient(__import__('pathlib').Path(S))"
                  "._call('GET', '/v1/health'); print(i-t, time.perf_counter()-i)",
        "httpx": "import time; t=time.perf_counter(); import httpx; i=time.perf_counter(); "
                 "c=httpx.Client(transport=httpx.HTTPTransport(uds=S)); "
                 "c.get('http://annad/v1/health').json(); print(i-t, time.perf_counter()-i)",
    }
    out: dict[str, float] = {}
    for name, source in code.items():
        runs = []
        for _ in range(5):
            proc = subprocess.run([sys.executable, "-c", f"S={str(daemon.socket)!r}; {source}"],
                                  capture_output=True, text=True, check=True,
                                  cwd=Path(__file__).resolve().parent.parent)
            runs.append(tuple(float(x) for x in proc.stdout.split()))
        out[f"{name} import"] = statistics.median(r[0] for r in runs)
        out[f"{name} first call"] = statistics.median(r[1] for r in runs)
    proc = subprocess.run([sys.executable, "-c", "import time; t=time.perf_counter(); "
                           "import anna_common.protocol.models; print(time.perf_counter()-t)"],
                          capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parent.parent)
    out["protocol models import"] = float(proc.stdout)
    return out


def captured_owner(plans: int, steps: int) -> None:
    """The small captured step through a per-user daemon that is not root (uid 65534: the
    capture in a user namespace), beside bare bash run by the same uid."""
    import json
    import os

    from tests.daemon.test_capture_user import OWNER, _as_owner, _owned_daemon, call, start
    from tests.daemonfix import stop_and_remove

    daemon = _owned_daemon()
    try:
        start(daemon)
        target = daemon.home / "bench.txt"
        write = f"echo x > {target}"
        call(daemon, "run", json.dumps([["w", write, "LOW"]]))  # warm-up
        per_step, bare = [], []
        for _ in range(plans):
            started = time.perf_counter()
            done = _as_owner(["/bin/bash", "--noprofile", "--norc", "-c",
                              f"for i in $(seq {steps}); do /bin/bash -c '{write}'; done"])
            assert done.returncode == 0, done.stderr
            bare.append((time.perf_counter() - started) / steps)
            ran = call(daemon, "run", json.dumps([[f"s{i}", write, "LOW"]
                                                  for i in range(steps)]))
            assert ran["events"][-1]["status"] == "succeeded", ran["events"][-1]
            assert not any("runs live" in r for r in ran["reasons"]), ran["reasons"]
            per_step.append(float(ran["execute_s"]) / steps)
        step_ms, bare_ms = statistics.median(per_step) * 1000, statistics.median(bare) * 1000
        print(f"captured steps ({plans} plans x {steps} steps), per-user daemon as uid "
              f"{OWNER} (user namespace), pid {os.getpid()}, load {load()}:")
        print(f"  small file step       {step_ms:8.1f} ms  bare bash {bare_ms:6.1f} ms  "
              f"overhead {step_ms - bare_ms:6.1f} ms  goal <= 30 ms  "
              f"{'OK' if step_ms - bare_ms <= 30 else 'MISSED'}")

        def timed(command: str, runs: int = 3) -> tuple[float, float]:
            through, bare = [], []
            for _ in range(runs):
                started = time.perf_counter()
                done = _as_owner(["/bin/bash", "--noprofile", "--norc", "-c", command])
                assert done.returncode == 0, done.stderr
                bare.append((time.perf_counter() - started) * 1000)
                ran = call(daemon, "run", json.dumps([["s", command, "LOW"]]))
                assert ran["events"][-1]["status"] == "succeeded", ran["events"][-1]
                through.append(float(ran["execute_s"]) * 1000)
            return statistics.median(through), statistics.median(bare)

        for label, command in (("50 MiB file", BIG_FILE), ("5,000-file tree", TREE)):
            daemon_ms, bare_ms = timed(command.format(home=daemon.home))
            print(f"  {label:<21} {daemon_ms:8.1f} ms  bare bash {bare_ms:6.1f} ms  "
                  f"ratio {daemon_ms / bare_ms:5.1f}x  load {load()}")
    finally:
        stop_and_remove(daemon)


def main() -> None:
    """Run the measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=50, help="steps per plan (at most 50)")
    parser.add_argument("--plans", type=int, default=6, help="plans to execute")
    parser.add_argument("--mode", choices=("user", "system"), default="user")
    parser.add_argument("--big", action="store_true",
                        help="only: peak RSS backing up and restoring one big file")
    parser.add_argument("--size-mib", type=int, default=256, help="size of the --big file")
    parser.add_argument("--captured", action="store_true",
                        help="only: captured file steps (root) against bare bash")
    parser.add_argument("--tree", type=Path, action="append", default=[],
                        help="with --captured: a source tree to measure (repeatable: their "
                        "plans alternate, side by side; default this one)")
    parser.add_argument("--no-big", action="store_true",
                        help="with --captured: leave out the 50 MiB file")
    parser.add_argument("--small-only", action="store_true",
                        help="with --captured: only the small step (no trees, no undo)")
    parser.add_argument("--owner", action="store_true",
                        help="with --captured: also a non-root per-user daemon's captured step")
    args = parser.parse_args()
    if args.captured:
        captured(args.plans, args.steps, args.tree, big=not args.no_big,
                 small_only=args.small_only)
        if args.owner:
            captured_owner(args.plans, args.steps)
        return
    if args.big:
        from bench.bigfile import report

        report(args.size_mib, user_mode=args.mode == "user")
        return

    with running_daemon(user_mode=args.mode == "user") as daemon:
        assert daemon.proc is not None
        time.sleep(2.0)  # let the first telemetry collection finish
        idle_start = rss_mb(daemon.proc.pid)
        through_daemon(daemon, 5)  # warm-up
        submits, per_step, bare, writes, bare_writes = [], [], [], [], []
        step_cpu, bare_cpu = [], []
        target = daemon.home / "bench.txt"
        write = f"echo x > {target}"
        for _ in range(args.plans):
            bare.append(bare_bash(args.steps))
            bare_cpu.append(bare_bash_cpu(args.steps))
            submit_s, step_s, cpu_s = through_daemon(daemon, args.steps)
            step_cpu.append(cpu_s)
            submits.append(submit_s)
            per_step.append(step_s)
            bare_writes.append(bare_bash(args.steps, write))
            writes.append(through_daemon(daemon, args.steps, write, "LOW")[1])
        time.sleep(1.0)
        idle_after = rss_mb(daemon.proc.pid)
        clients = client_costs(daemon)

    step_ms = statistics.median(per_step) * 1000
    bare_ms = statistics.median(bare) * 1000
    overhead = step_ms - bare_ms
    print(f"annad {args.mode} mode, {args.plans} plans x {args.steps} steps of `true`")
    print(f"  per step through the daemon   {step_ms:7.2f} ms  (median over plans)")
    print(f"  bare bash -c true             {bare_ms:7.2f} ms")
    print(f"  overhead per step             {overhead:7.2f} ms  goal <= 15 ms  "
          f"{'OK' if overhead <= 15 else 'MISSED'}")
    cpu_ms = statistics.median(step_cpu) * 1000
    bare_cpu_ms = statistics.median(bare_cpu) * 1000
    print(f"  CPU per INFO step             {cpu_ms:7.2f} ms  (daemon, confinement helper and "
          "command: the daemon's process tree while the plan executes)")
    print(f"  CPU per bare bash -c true     {bare_cpu_ms:7.2f} ms  overhead "
          f"{cpu_ms - bare_cpu_ms:.2f} ms  goal <= 15 ms  "
          f"{'OK' if cpu_ms - bare_cpu_ms <= 15 else 'MISSED'}")
    write_ms = statistics.median(writes) * 1000
    bare_write_ms = statistics.median(bare_writes) * 1000
    print(f"  a step that writes a file     {write_ms:7.2f} ms  (snapshot + flushed manifest)")
    print(f"  bare bash -c 'echo x > FILE'  {bare_write_ms:7.2f} ms  overhead "
          f"{write_ms - bare_write_ms:.2f} ms")
    print(f"  submit (validate+store) plan  {statistics.median(submits) * 1000:7.2f} ms "
          f"per {args.steps}-step plan")
    print(f"  idle RSS after start          {idle_start:7.1f} MB  goal <= 60 MB  "
          f"{'OK' if idle_start <= 60 else 'MISSED'}")
    print(f"  idle RSS after the runs       {idle_after:7.1f} MB  goal <= 60 MB  "
          f"{'OK' if idle_after <= 60 else 'MISSED'}")
    print("client (fresh interpreter, median of 5):")
    for name, seconds in clients.items():
        print(f"  {name:<20} {seconds * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
