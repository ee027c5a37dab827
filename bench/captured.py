"""Captured file steps and their undo, side by side for one or more source trees (as root).

Used by ``bench/executor.py --captured [--tree DIR …]``. Each tree gets a root-run daemon of
its own (``PYTHONPATH`` pointed at it: its ``annad``, its capture helper); the plans of the
trees alternate, so each figure of one tree is measured at the same load as the other's.
Per tree:

- the small captured file step: plans of ``steps`` ``echo x > FILE`` steps, per step,
  against bare bash running the same command the same number of times (goal: overhead
  ≤ 30 ms, issue 38 item 3), in wall time and in CPU time (the daemon's process tree);
- a 50 MiB file, and a 5,000-file tree made in 50 directories, each one step against bare
  bash (ratio);
- the undo of the 5,000-file change set: ``rollback`` of the plan that made the tree (the
  daemon removes it and compares every touched path with its pre-plan state), and of a
  plan that removed an existing 5,000-file tree (the daemon restores it from its backups),
  each beside its step's own time (goal: the undo no slower than the step).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

from _cpu import tree_cpu_s

from anna_common.plan import ActionPlan
from anna_common.risk import tiers
from tests.daemonfix import RunningDaemon, make_plan, running_daemon

BIG_FILE = f"head -c {50 << 20} /dev/urandom > {{home}}/big.bin"
"""A captured step writing a 50 MiB file (``home``: the daemon's)."""
TREE = ("cd $(mktemp -d -p {home}) && for i in $(seq 1 50); do mkdir d$i; "
        "for j in $(seq 1 100); do echo $i.$j > d$i/f$j; done; done")
"""A captured step writing a 5,000-file tree in 50 directories."""
REMOVE = "rm -rf {home}/old"
"""A captured step removing a 5,000-file tree made beforehand (its undo restores it)."""
MAKE_OLD = ("mkdir -p {home}/old && cd {home}/old && for i in $(seq 1 50); do mkdir d$i; "
            "for j in $(seq 1 100); do echo $i.$j > d$i/f$j; done; done")


def load() -> str:
    """The 1-minute load average (the figures are from a shared machine)."""
    return Path("/proc/loadavg").read_text().split()[0]


def bare(command: str, times: int = 1) -> float:
    """Seconds per bare ``bash --noprofile --norc -c COMMAND``."""
    started = time.perf_counter()
    for _ in range(times):
        subprocess.run(["/bin/bash", "--noprofile", "--norc", "-c", command], check=True,
                       stdin=subprocess.DEVNULL)
    return (time.perf_counter() - started) / times


def execute(daemon: RunningDaemon, commands: list[str], risk: str = "LOW"
            ) -> tuple[str, float, float]:
    """(plan id, execute seconds per step, CPU seconds per step of the daemon's process
    tree while it executes) of one plan of ``commands``, submitted first (not counted)."""
    client = daemon.client()
    plan = ActionPlan.model_validate(make_plan([(f"s{i}", command, risk)
                                                for i, command in enumerate(commands)]))
    submitted = client.submit(plan)
    word = tiers.plan_word(submitted.annotated)
    pid = daemon.proc.pid if daemon.proc is not None else os.getpid()
    cpu = tree_cpu_s(pid)
    started = time.perf_counter()
    events = list(client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                                 high_confirmed=word is not None, confirm_word=word))
    took = time.perf_counter() - started
    cpu = tree_cpu_s(pid) - cpu
    assert events[-1].status == "succeeded", events[-1]
    return submitted.plan_id, took / len(commands), cpu / len(commands)


def rollback(daemon: RunningDaemon, plan_id: str) -> float:
    """Seconds of the rollback of ``plan_id`` (asserted rolled back, every touched path
    compared with its pre-plan state)."""
    client = daemon.client()
    started = time.perf_counter()
    result = client.rollback(plan_id)  # no rollback command: only the daemon's own undo
    took = time.perf_counter() - started
    assert str(result.status) == "rolled_back", result
    return took


class Tree:
    """One source tree's daemon and its figures (milliseconds, lists of runs)."""

    def __init__(self, path: Path | None, daemon: RunningDaemon) -> None:
        self.name = str(path) if path is not None else "this tree"
        self.daemon = daemon
        self.runs: dict[str, list[float]] = {}

    def add(self, key: str, seconds: float) -> None:
        """One run's figure."""
        self.runs.setdefault(key, []).append(seconds * 1000)

    def ms(self, key: str) -> float:
        """The median of a figure's runs, ms."""
        return statistics.median(self.runs[key])


def _round(tree: Tree, steps: int, big: bool, small_only: bool) -> None:
    """One plan of each kind for ``tree`` (its bare-bash figures beside)."""
    home = tree.daemon.home
    write = f"echo x > {home / 'bench.txt'}"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    tree.add("bare small", bare(write, steps))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    tree.add("cpu bare small", (after.ru_utime + after.ru_stime - before.ru_utime
                                - before.ru_stime) / steps)
    _, took, cpu = execute(tree.daemon, [write] * steps)
    tree.add("small", took)
    tree.add("cpu small", cpu)
    if small_only:
        return
    kinds = [("50 MiB file", BIG_FILE)] if big else []
    for label, command in [*kinds, ("5,000-file tree", TREE)]:
        cmd = command.format(home=home)
        tree.add(f"bare {label}", bare(cmd))
        plan_id, took, _ = execute(tree.daemon, [cmd])
        tree.add(label, took)
        if label == "5,000-file tree":
            tree.add("undo 5,000-file tree", rollback(tree.daemon, plan_id))
    bare(MAKE_OLD.format(home=home))
    tree.add("bare remove tree", bare(REMOVE.format(home=home)))
    bare(MAKE_OLD.format(home=home))
    plan_id, took, _ = execute(tree.daemon, [REMOVE.format(home=home)])
    tree.add("remove tree", took)
    tree.add("undo remove tree", rollback(tree.daemon, plan_id))
    bare(REMOVE.format(home=home))


def _report(tree: Tree, plans: int, steps: int) -> None:
    print(f"{tree.name}: captured steps ({plans} plans x {steps} steps), root daemon, "
          f"load {load()}:")
    step, bare_ms = tree.ms("small"), tree.ms("bare small")
    print(f"  small file step       {step:8.1f} ms  bare bash {bare_ms:6.1f} ms  "
          f"overhead {step - bare_ms:6.1f} ms  goal <= 30 ms  "
          f"{'OK' if step - bare_ms <= 30 else 'MISSED'}")
    cpu, bare_cpu = tree.ms("cpu small"), tree.ms("cpu bare small")
    print(f"  CPU per small step    {cpu:8.1f} ms  bare bash {bare_cpu:6.1f} ms  "
          f"overhead {cpu - bare_cpu:6.1f} ms  (the daemon's process tree: daemon, capture "
          "helper, step)")
    for label in ("50 MiB file", "5,000-file tree", "remove tree"):
        if label in tree.runs:
            ms, bare_ms = tree.ms(label), tree.ms(f"bare {label}")
            print(f"  {label:<21} {ms:8.1f} ms  bare bash {bare_ms:6.1f} ms  "
                  f"ratio {ms / bare_ms:5.1f}x")
    for label, step_key in (("undo 5,000-file tree", "5,000-file tree"),
                            ("undo remove tree", "remove tree")):
        if label not in tree.runs:
            continue
        ms, step = tree.ms(label), tree.ms(step_key)
        print(f"  {label:<21} {ms:8.1f} ms  its step {step:8.1f} ms  ratio "
              f"{ms / step:5.2f}  goal <= 1  {'OK' if ms <= step else 'MISSED'}")


def captured(plans: int, steps: int, trees: list[Path], *, big: bool = True,
             small_only: bool = False) -> None:
    """Captured file steps and their undo for each of ``trees`` (none: this one), plans
    alternating between the trees; see the module text."""
    if os.geteuid() != 0:
        sys.exit("captured steps need root: run this as root")
    with ExitStack() as stack:
        paths: list[Path | None] = [t.resolve() for t in trees] or [None]
        running = [Tree(path, stack.enter_context(running_daemon(
            user_mode=True, env={"PYTHONPATH": str(path)} if path is not None else None)))
            for path in paths]
        time.sleep(2.0)
        for tree in running:  # warm-up
            execute(tree.daemon, [f"echo x > {tree.daemon.home / 'bench.txt'}"] * 3)
        for _ in range(plans):
            for tree in running:
                _round(tree, steps, big, small_only)
        for tree in running:
            _report(tree, plans, steps)
