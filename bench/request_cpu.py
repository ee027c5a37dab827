"""Anna's own CPU for one request with an instant model (issue 38 item 2: goal ≤ 0.3 s).

``annactl ask --dry-run --no-templates REQUEST`` against a real per-user daemon and a fake
model server on loopback (tests/fakellm.py, in this process: its CPU is not counted) that
answers at once with a plan of one necessary check and one LOW file edit: the client asks
the model, validates, submits, runs the check, previews, shows and records the dry run.
Per round, CPU (user + system) of:

- **client**: the ``annactl`` process (its rusage, to the microsecond), split into
  - *imports*: a fresh interpreter importing, in order, every module that run imported
    (interpreter start-up included), and
  - *work*: the rest;
- **daemon**: the daemon and the processes it spawned for this request (its check, preview
  and confinement helpers; bench/_cpu.py);

and the requests the client sent the daemon (method and path, counted).

``--tree DIR`` (repeatable) measures several checkouts side by side, one round of each in
turn, so load slows them alike: ``--tree /tmp/main --tree .`` is before / after. Medians.

``--gap S`` waits S seconds before each round: past the confinement helpers' idle time
(``annad.confine.session.IDLE_S``) every request starts its check and preview helpers, as a
person's next request a while later does (without it they are reused from the round before).

Run: .venv/bin/python bench/request_cpu.py [--tree DIR ...] [--rounds 10] [--gap 0]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._cpu import tree_cpu_s  # noqa: E402
from tests.daemonfix import RunningDaemon, new_daemon, stop_and_remove  # noqa: E402
from tests.fakellm import FakeLLM, Reply, plan_json  # noqa: E402

REQUEST = "set volume to 9 in my app config"
PLAN = plan_json(
    goals=["Set volume to 9 in ~/.config/app.conf"],
    necessary_checks=[{"id": "look", "description": "current setting",
                       "command": "cat ~/.config/app.conf", "risk_level": "INFO",
                       "required": True}],
    command_plan=[{"id": "edit", "description": "set volume",
                   "command": "sed -i s/volume=3/volume=9/ ~/.config/app.conf",
                   "risk_level": "LOW", "rollback_id": None, "requires_confirmation": True}])
PROBE = """
import builtins, sys, time
_real, _depth, _spent = builtins.__import__, [0], [0.0]
def _timed(*args, **kwargs):
    if _depth[0]:
        return _real(*args, **kwargs)
    _depth[0] += 1
    started = time.process_time()
    try:
        return _real(*args, **kwargs)
    finally:
        _spent[0] += time.process_time() - started
        _depth[0] -= 1
builtins.__import__ = _timed
import http.client, json  # timed: the client imports both anyway
_calls = []
_request = http.client.HTTPConnection.request
def _counted(self, method, url, *args, **kwargs):
    if self.host == 'annad':  # the daemon's Unix socket (annactl/core/daemon_http.py)
        _calls.append(method + ' ' + url.split('?')[0])
    return _request(self, method, url, *args, **kwargs)
http.client.HTTPConnection.request = _counted
sys.argv = ['annactl', *sys.argv[1:]]
from annactl.cli import main
try:
    code = main()
finally:
    print('IMPORTS', _spent[0], file=sys.stderr)
    print('CALLS', json.dumps(_calls), file=sys.stderr)
raise SystemExit(code)
"""
"""``annactl`` with the CPU spent inside its outermost ``import`` statements summed (what
is under one import, nested ones included, counts once), and the daemon requests it made."""


def _cpu_of(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, bytes, bytes]:
    """(CPU s, stdout, stderr) of one process run to its end."""
    proc = subprocess.Popen(argv, env=env, cwd=str(cwd), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=300)
    # communicate reaped it: its rusage is in this process's children totals
    return _last_child_cpu(), out, err


_children = [0.0]


def _last_child_cpu() -> float:
    # getrusage, not os.times(): the latter counts in 10 ms clock ticks, as coarse as the
    # differences measured here; this is the same total to the microsecond
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    spent, _children[0] = total - _children[0], total
    return spent


class Tree:
    """One checkout's daemon and client environment."""

    def __init__(self, tree: Path, llm: FakeLLM) -> None:
        self.tree = tree
        self.calls: list[str] = []
        """The daemon requests of the last round (method and path)."""
        self.daemon: RunningDaemon = new_daemon(user_mode=True, env={"PYTHONPATH": str(tree)})
        self.daemon.start()
        self.env = {**self.daemon.env, "ANNA_SOCKET": str(self.daemon.socket),
                    "ANNA_AUTOSTART": "false", "ANNA_LLM_URL": llm.ollama_url,
                    "ANNA_LLM_MODEL": "test-model", "ANNA_LLM_TIMEOUT": "20",
                    "PYTHONPATH": str(tree), "COLUMNS": "100"}
        (self.daemon.home / ".config" / "app.conf").write_text("volume=3\n")

    def round(self) -> dict[str, float]:
        """One request: client, its imports, its work, the daemon."""
        assert self.daemon.proc is not None
        pid = self.daemon.proc.pid
        before = tree_cpu_s(pid)
        _last_child_cpu()
        client, _out, err = _cpu_of([sys.executable, "-c", PROBE, "ask", "--dry-run",
                                     "--no-templates", REQUEST], self.env, self.tree)
        line = next((x for x in err.decode().splitlines() if x.startswith("IMPORTS ")), "")
        if not line or b"Traceback" in err or b"dry run" not in _out + err:
            raise SystemExit(f"{self.tree}: annactl failed:\n{err.decode()[-2000:]}")
        time.sleep(0.2)  # the daemon's last reply was sent; its bookkeeping after it ends
        daemon = tree_cpu_s(pid) - before
        # the interpreter's own start-up (before the probe's first line) counts as imports
        bare, _, _ = _cpu_of([sys.executable, "-c", "pass"], self.env, self.tree)
        imports = float(line.split()[1]) + bare
        calls = next((x for x in err.decode().splitlines() if x.startswith("CALLS ")), "")
        self.calls = json.loads(calls[len("CALLS "):]) if calls else []
        return {"client": client, "client imports": imports,
                "client work": client - imports, "daemon": daemon, "total": client + daemon}

    def close(self) -> None:
        stop_and_remove(self.daemon)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--gap", type=float, default=0.0)
    args = parser.parse_args()
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    print(f"load: {os.getloadavg()}", flush=True)
    with FakeLLM(models=("test-model",), default=Reply(PLAN)) as llm:
        running = [Tree(t, llm) for t in trees]
        try:
            for t in running:
                t.round()  # warm: the daemon's first telemetry snapshot, bytecode
            samples: list[list[dict[str, float]]] = [[] for _ in running]
            for _ in range(args.rounds):
                time.sleep(args.gap)
                for n, t in enumerate(running):
                    samples[n].append(t.round())
        finally:
            for t in running:
                t.close()
    print(f"load: {os.getloadavg()}")
    names = list(samples[0][0])
    print(f"\n{'CPU ms (median)':<18}" + "".join(f"{str(t)[-24:]:>26}" for t in trees))
    for name in names:
        print(f"{name:<18}" + "".join(
            f"{statistics.median(s[name] for s in runs) * 1000:>26.0f}" for runs in samples))
    for t in running:
        counted = sorted(Counter(t.calls).items())
        print(f"daemon requests {str(t.tree)[-24:]}: {len(t.calls)}: "
              + ", ".join(f"{call} x{n}" if n > 1 else call for call, n in counted))
    print(json.dumps({str(t): {name: round(statistics.median(s[name] for s in runs) * 1000)
                               for name in names} for t, runs in zip(trees, samples, strict=True)}))


if __name__ == "__main__":
    main()
