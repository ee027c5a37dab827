"""Start-up time of annactl against a bare interpreter, measured side by side in one run.

Goals (issues 5 and 12), as ratios to a bare ``python3 -c pass`` in the same run:
``annactl --version`` within 5x; ``status``, ``history``, ``show ID`` within 12x (``history``
also with 10,000 journalled plans: it must stay flat); ``apply`` of a trivial INFO plan within
15x; ``annactl "how is my system?"`` answered offline by a template within 15x (issue 23). The runs are interleaved (one of each per round) so a busy machine slows all of them
alike; the figures are medians. Real per-user ``annad`` daemons run here in a temporary
directory (state, socket and home all inside it): one with a few plans, one whose journal
holds ``--plans`` plans. The first call of each is not counted (the first telemetry snapshot).

Also reports which heavy modules each command imported (there should be none; ``apply``
of a stored plan included, ``tests/ui/test_apply_fast.py``).

The offline answer (issue 23.7, 2026-11-27; 2 cores shared with other work, load 11-15, so
wall figures are noisy and the instruction counts, which load does not change, are the
firm ones). Instructions of one ``annactl "how is my system?"`` (valgrind cachegrind; a
bare ``python -c pass`` is 88M): main 1.41G (16.0x) with Anna's bytecode present, 2.05G
(23x) without; now 1.34G (15.2x) and 1.92G (21.8x). Side by side with main in one run
(10 rounds, medians): CPU 712 -> 629 ms with bytecode (14.3x a bare interpreter's CPU),
910 -> 835 ms without (15.5x); wall 13.3x and 15.0x at load 13-15 (a loaded machine
squeezes the ratios: the bare interpreter slows most). This bench at load 11:
22.4x without bytecode (PYTHONDONTWRITEBYTECODE=1, every run compiles ~600 kB of Anna's
source), 13.8x with it. What is left, with bytecode, in instructions over a bare
interpreter: importing pydantic ~406M, making the ~60 model classes ~195M, building the
validated ones' schemas ~130M, pydantic's plugin discovery (importlib.metadata) ~133M,
rich ~171M, the plan's JSON Schema for the packet's ``schema_sha256`` ~35M.

Round two (2026-11-27, load 11-13; instructions: valgrind --tool=cachegrind, bare 88M):
with bytecode 1.337G (15.1x) -> 1.140G (12.9x); without (PYTHONDONTWRITEBYTECODE=1, no
``__pycache__``) 1.936G (22.0x) -> 1.719G (19.5x). Side by side with main's tree in one
run (10 rounds, medians, bytecode present): wall 12.2x -> 8.8x, CPU 676 -> 508 ms (13.4x
-> 10.0x a bare interpreter's CPU); without bytecode (8 rounds) wall 15.2x -> 14.2x, CPU
738 -> 600 ms; peak RSS unchanged (39.5 MB). This bench, bytecode present: 12.3x
(13.4x on main an hour before, at a lighter load); without (bare 276 ms, a busier
machine squeezing every ratio): 11.6x. What went: the cycle collector walking
the growing heap every 700 allocations and at exit (paused while the fast path starts and
plans, then what was built is frozen: -86M); the schema digest, kept in
``$XDG_CACHE_HOME/anna`` keyed by its sources (annactl/planning/schemahash.py, -34M);
pydantic's plugin search (PYDANTIC_DISABLE_PLUGINS, -19M); patterns only the model's
claims or "remember" sentences need, compiled on first use (annactl/core/lazyre.py),
tomllib without a config file, and the modules only a model's reply needs (replies,
citations, grounding, the provider interface: -20M together with the patterns ~40M).
Tried and dropped: a ClientSettings built without validation when every value is plain
(-6M: the first validator's one-time costs only move to the next model). What is left is
mostly imports Anna needs for this answer: pydantic and its ~60 model classes and 11
validators (telemetry, plan, annotated plan, the daemon's answers), rich, http.client
(with email and ssl), ~90 dataclasses (pydantic's ~55; each ~2M, an exec of generated
source), and redacting the history packet (~30M of regex substitution).

Run: .venv/bin/python bench/startup.py [--rounds N] [--plans N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
GOALS = {"annactl --version": 5.0, "annactl status": 12.0, "annactl history": 12.0,
         "annactl show ID": 12.0, "annactl history (big journal)": 12.0,
         "annactl apply ID (INFO)": 15.0, "annactl \"how is my system?\" (offline)": 15.0}
HEAVY = ("fastapi", "textual", "httpx", "pydantic", "uvicorn", "prompt_toolkit", "anna_common.plan")
PROBE = ("import sys, runpy; sys.argv = ['annactl'] + sys.argv[1:]; "
         "from annactl.cli import main; code = main(); "
         "print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr); "
         "raise SystemExit(code)")
TRIVIAL = {"analysis": "bench", "goals": ["Print the kernel release"], "necessary_checks": [],
           "command_plan": [{"id": "uname", "description": "kernel release",
                             "command": "uname -r", "risk_level": "INFO",
                             "requires_confirmation": False, "rollback_id": None}],
           "rollback_plan": [], "notes_for_user": "bench",
           "meta": {"detection_results": {"de": None, "wm": None, "wallpaper_backends": [],
                                          "display_protocol": None}, "template_used": None}}
"""A trivial INFO plan: ``apply`` of it measures the client's apply path."""


def timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return elapsed


def heavy_modules(args: list[str], env: dict[str, str]) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True,
                          text=True, check=False)
    line = next((x for x in proc.stderr.splitlines() if x.startswith("MODULES ")), "")
    loaded = set(line.split()[1:])
    return sorted(m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY)


def start_daemon(base: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    socket = base / "annad.sock"
    proc = subprocess.Popen(
        [str(BIN / "annad"), "--user-mode", "--socket", str(socket), "--state-dir",
         str(base / "state"), "--idle-exit", "600"],
        env={**env, "ANNAD_HOME_OVERRIDE": env["HOME"]},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not socket.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"annad did not start: {proc.stderr.read().decode()[-800:] if proc.stderr else ''}")
        time.sleep(0.05)
    return proc


def submit(socket: Path, count: int) -> list[str]:
    """Store ``count`` copies of the trivial plan; their ids."""
    from anna_common.plan import ActionPlan
    from annactl.core.daemon_client import DaemonClient

    client = DaemonClient(socket)
    try:
        plan = ActionPlan.model_validate(TRIVIAL)
        return [client.submit(plan, request="bench").plan_id for _ in range(count)]
    finally:
        client.close()


def fill_journal(state: Path, template_socket: Path, plans: int) -> None:
    """A journal holding ``plans`` plans (written directly: submitting each would take
    minutes), all copies of one plan the small daemon stored and annotated."""
    from anna_common.plan import canonical_json
    from anna_common.protocol.models import PlanStatus
    from annactl.core.daemon_client import DaemonClient
    from annad.journal.store import Journal, PlanRow

    client = DaemonClient(template_socket)
    try:
        record = client.get_plan(submit(template_socket, 1)[0])
    finally:
        client.close()
    annotated = record.annotated
    plan_json = canonical_json(annotated.plan.model_dump(mode="json")).decode("utf-8")
    journal = Journal(state / "journal.sqlite3")
    start = time.time() - plans
    try:
        for i in range(plans):
            journal.add_plan(PlanRow(
                plan_id=f"20200101-000000-{i:06x}", digest=record.digest,
                status=PlanStatus.SUBMITTED, created_at=start + i, updated_at=start + i,
                caller_uid=os.getuid(), source="model", request="bench", home=str(state),
                plan_json=plan_json, annotated_json=annotated.model_dump_json(), error=None),
                [s.id for s in annotated.steps])
    finally:
        journal.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--plans", type=int, default=10_000,
                        help="plans in the big journal (history must stay flat)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="anna-bench-"))
    home = tmp / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANNA_", "ANNAD_"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_STATE_HOME=str(home / ".local/state"), XDG_RUNTIME_DIR=str(tmp),
               ANNA_SOCKET=str(tmp / "annad.sock"), ANNA_AUTOSTART="false",
               ANNA_LLM_URL="http://127.0.0.1:9")
    big = tmp / "big"
    big_env = {**env, "ANNA_SOCKET": str(big / "annad.sock")}
    daemons = [start_daemon(tmp, env)]
    try:
        shown = submit(tmp / "annad.sock", 21)[0]  # a full page for history, as in the big one
        applied = submit(tmp / "annad.sock", args.rounds + 2)
        spare = applied.pop(0)  # applied once more at the end: what it imported
        fill_journal(big / "state", tmp / "annad.sock", args.plans)
        daemons.append(start_daemon(big, big_env))
        annactl = str(BIN / "annactl")
        commands: dict[str, tuple[Callable[[], list[str]], dict[str, str]]] = {
            "python -c pass": (lambda: [sys.executable, "-c", "pass"], env),
            "annactl --version": (lambda: [annactl, "--version"], env),
            "annactl status": (lambda: [annactl, "status"], env),
            "annactl status --json": (lambda: [annactl, "status", "--json"], env),
            "annactl history": (lambda: [annactl, "history"], env),
            "annactl history (big journal)": (lambda: [annactl, "history"], big_env),
            "annactl show ID": (lambda: [annactl, "show", shown], env),
            "annactl apply ID (INFO)": (lambda: [annactl, "apply", applied.pop(), "--yes"], env),
            # the main job, answered offline by the status template (issue 23.7)
            "annactl \"how is my system?\" (offline)": (
                lambda: [annactl, "how is my system?"], env),
        }
        for argv, run_env in commands.values():  # warm each daemon's telemetry cache
            timed(argv(), run_env)
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, (argv, run_env) in commands.items():
                samples[name].append(timed(argv(), run_env))
        report(samples, env, args.rounds, args.plans, [["show", shown], ["apply", spare, "--yes"]])
    finally:
        for daemon in daemons:
            daemon.terminate()
            daemon.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


def report(samples: dict[str, list[float]], env: dict[str, str], rounds: int,
           plans: int, more: list[list[str]]) -> None:
    base = statistics.median(samples["python -c pass"])
    rows = []
    print(f"big journal: {plans} plans")
    # without bytecode every run compiles Anna's own modules first (PYTHONDONTWRITEBYTECODE
    # and an editable install): the planning path, which imports the most, pays the most
    cached = any((ROOT / "annactl" / "__pycache__").glob("cli.*.pyc"))
    print(f"Anna's bytecode: {'present' if cached else 'absent (every run compiles)'}; "
          f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}")
    print(f"{'command':<32}{'median ms':>11}{'p90 ms':>9}{'ratio':>8}{'goal':>7}")
    for name, values in samples.items():
        med = statistics.median(values)
        p90 = sorted(values)[int(0.9 * (len(values) - 1))]
        goal = GOALS.get(name)
        ratio = med / base
        verdict = "" if goal is None else ("ok" if ratio <= goal else "MISSED")
        print(f"{name:<32}{med * 1000:>11.1f}{p90 * 1000:>9.1f}{ratio:>8.2f}"
              f"{'' if goal is None else f'{goal:.0f}x':>7} {verdict}")
        rows.append({"command": name, "median_ms": round(med * 1000, 2),
                     "p90_ms": round(p90 * 1000, 2), "ratio": round(ratio, 2), "goal": goal})
    for args in (["--version"], ["status"], ["history"], ["how is my system?"], *more):
        print(f"heavy modules imported by annactl {' '.join(args)}: "
              f"{', '.join(heavy_modules(args, env)) or 'none'}")
    print(json.dumps({"rounds": rounds, "plans": plans, "results": rows}))


if __name__ == "__main__":
    main()
