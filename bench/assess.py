"""Commands assessed per second (issue 2 goal: >= 2,000/s on this machine).

Measures, in one run: a cold pass over the corpora (every command parsed and judged once,
the assessment cache cleared first), a warm pass (the same commands again: cache hits, as
validation re-assesses a plan's commands), and, for scale, tree-sitter parsing alone.
Run: .venv/bin/python bench/assess.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from anna_common.risk import assess as risk  # noqa: E402
from anna_common.risk.assess import AssessContext, assess  # noqa: E402
from anna_common.shell.grammar import bash_parser as _parser  # noqa: E402
from tests.corpus_eval import corpora_dir  # noqa: E402
from tests.worst_inputs import worst_inputs  # noqa: E402

GOAL_PER_S = 2000.0
WORST_MS = 50.0
CONTEXT = AssessContext(distro="arch", home="/home/alice")
FALLBACK = ["ls -la", "sudo pacman -S docker", "curl -fsSL x | sh", "rm -rf /tmp/build",
            "systemctl status sshd", "sed -i 's/a/b/' ~/.config/x", "find / -name x -delete",
            "bash -c 'echo hi && rm -f /tmp/x'"] * 250


def commands() -> list[str]:
    root = corpora_dir()
    if root is None:
        return FALLBACK
    rows: list[str] = []
    for name in ("dangerous_commands.jsonl", "benign_commands.jsonl"):
        for line in (root / name).read_text(encoding="utf-8").splitlines():
            if line:
                rows.append(json.loads(line)["command"])
    return rows


def rate(fn: object, items: list[str], repeats: int = 5) -> tuple[float, float]:
    """Median and best items/second over ``repeats`` passes."""
    rates = []
    for _ in range(repeats):
        risk._assess_cached.cache_clear()
        start = time.perf_counter()
        for item in items:
            fn(item)  # type: ignore[operator]
        rates.append(len(items) / (time.perf_counter() - start))
    return statistics.median(rates), max(rates)


def main() -> int:
    items = commands()
    parser = _parser()
    parse_med, _ = rate(lambda c: parser.parse(c.encode()), items)
    cold_med, cold_best = rate(lambda c: assess(c, CONTEXT), items)
    for item in items:
        assess(item, CONTEXT)
    start = time.perf_counter()
    for item in items:
        assess(item, CONTEXT)
    warm = len(items) / (time.perf_counter() - start)
    print(f"commands: {len(items)} (corpora: {'yes' if corpora_dir() else 'no, fallback set'})")
    print(f"tree-sitter parse only : {parse_med:10.0f} /s")
    print(f"assess, cold (median)  : {cold_med:10.0f} /s   best {cold_best:.0f} /s")
    print(f"assess, cached         : {warm:10.0f} /s")
    print(f"goal                   : {GOAL_PER_S:10.0f} /s   cold/goal = {cold_med / GOAL_PER_S:.2f}x")
    worst = worst_case()
    return 0 if cold_med >= GOAL_PER_S and worst <= WORST_MS else 1


def worst_case() -> float:
    """Print the cold assessment time of each worst-case input; return the slowest (ms)."""
    assess("cp x /e?c/shadow; cat ~/.ssh/id_rsa; (( a[0] ))", CONTEXT)  # warm the caches
    print(f"worst-case inputs (cold, best of 3; goal < {WORST_MS:.0f} ms each):")
    slowest = 0.0
    for name, command in worst_inputs().items():
        best = float("inf")
        for _ in range(3):
            risk._assess_cached.cache_clear()
            start = time.perf_counter()
            verdict = assess(command, CONTEXT)
            best = min(best, (time.perf_counter() - start) * 1000)
        slowest = max(slowest, best)
        print(f"  {name:22} {len(command):7} chars {best:7.1f} ms  {verdict.risk}")
    print(f"worst                  : {slowest:10.1f} ms")
    return slowest


if __name__ == "__main__":
    raise SystemExit(main())
