"""Start-up time of annactl against a bare interpreter, measured side by side in one run.

Goals (issue 5): ``annactl --version`` within 5x and ``annactl status`` within 12x the start
of a bare ``python3 -c pass``. The runs are interleaved (one of each per round) so a busy
machine slows all of them alike; the figures are medians. ``status`` talks to a real
per-user ``annad`` started here in a temporary directory (state, socket and home all
inside it); its first call is not counted (the daemon's first telemetry snapshot).

Also reports which heavy modules each command imported (there should be none).

Run: .venv/bin/python bench/startup.py [--rounds N]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
GOALS = {"annactl --version": 5.0, "annactl status": 12.0}
HEAVY = ("fastapi", "textual", "httpx", "pydantic", "uvicorn", "prompt_toolkit", "anna_common.plan")
PROBE = ("import sys, runpy; sys.argv = ['annactl'] + sys.argv[1:]; "
         "from annactl.cli import main; code = main(); "
         "print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr); "
         "raise SystemExit(code)")


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


def start_daemon(tmp: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    socket = tmp / "annad.sock"
    proc = subprocess.Popen(
        [str(BIN / "annad"), "--user-mode", "--socket", str(socket), "--state-dir",
         str(tmp / "state"), "--idle-exit", "600"],
        env={**env, "ANNAD_HOME_OVERRIDE": str(tmp / "home")},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not socket.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"annad did not start: {proc.stderr.read().decode()[-800:] if proc.stderr else ''}")
        time.sleep(0.05)
    return proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="anna-bench-"))
    home = tmp / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANNA_", "ANNAD_"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_STATE_HOME=str(home / ".local/state"), XDG_RUNTIME_DIR=str(tmp),
               ANNA_SOCKET=str(tmp / "annad.sock"), ANNA_AUTOSTART="false",
               ANNA_LLM_URL="http://127.0.0.1:9")
    daemon = start_daemon(tmp, env)
    try:
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "annactl --version": [str(BIN / "annactl"), "--version"],
            "annactl status": [str(BIN / "annactl"), "status"],
            "annactl status --json": [str(BIN / "annactl"), "status", "--json"],
        }
        timed(commands["annactl status"], env)  # warm the daemon's telemetry cache
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, argv in commands.items():
                samples[name].append(timed(argv, env))
        report(samples, env, args.rounds)
    finally:
        daemon.terminate()
        daemon.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


def report(samples: dict[str, list[float]], env: dict[str, str], rounds: int) -> None:
    base = statistics.median(samples["python -c pass"])
    rows = []
    print(f"{'command':<24}{'median ms':>11}{'p90 ms':>9}{'ratio':>8}{'goal':>7}")
    for name, values in samples.items():
        med = statistics.median(values)
        p90 = sorted(values)[int(0.9 * (len(values) - 1))]
        goal = GOALS.get(name)
        ratio = med / base
        verdict = "" if goal is None else ("ok" if ratio <= goal else "MISSED")
        print(f"{name:<24}{med * 1000:>11.1f}{p90 * 1000:>9.1f}{ratio:>8.2f}"
              f"{'' if goal is None else f'{goal:.0f}x':>7} {verdict}")
        rows.append({"command": name, "median_ms": round(med * 1000, 2),
                     "p90_ms": round(p90 * 1000, 2), "ratio": round(ratio, 2), "goal": goal})
    for args in (["--version"], ["status"]):
        print(f"heavy modules imported by annactl {' '.join(args)}: "
              f"{', '.join(heavy_modules(args, env)) or 'none'}")
    print(json.dumps({"rounds": rounds, "results": rows}))


if __name__ == "__main__":
    main()
