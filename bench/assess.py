"""Commands assessed per second (issue 2 goal: >= 2,000/s on this machine).

Measures, in one run: a cold pass over the corpora (every command parsed and judged once,
the assessment cache cleared first), a warm pass (each plan-sized group of 150 commands
assessed again at once: cache hits, as validation re-assesses a plan's commands), the whole
corpus again (more distinct commands than the cache keeps since it is bounded: issue 22,
anna_common.plan.PLAN_COMMANDS), and, for scale, tree-sitter parsing alone.

Bounding the cache (8,192 -> 256 entries), side by side 2026-11-27 (02b6c58 / 1103206, this
version of the bench on both, load 6-8), before / after: cold 1,143 / 1,061 per s (the cold
pass clears the cache either way; an earlier pair 1,732 / 1,309), a plan's 150 commands
again 1,403,582 / 302,534 per s (every second lookup a hit: counted with cache_info on the
bounded cache, 4,055 of 4,055; the gap between the two rates is not explained: one run each,
150 lookups timed at a time), the whole corpus again 1,069,706 / 1,086 per s (4,055 distinct commands: each entry evicted
before it is asked again, so as cold).
``--doubling`` (issue 38 item 4): the costliest command shapes found (extglob groups, many
distinct wildcards, each judged with every protected path it can match) from 512 B to 4 KB,
and the growth per doubling. ``--tree DIR`` judges with another checkout's ``anna_common``
(``git archive main`` into a directory: the "before" column, run alternately with this one);
``--shape NAME`` (repeatable) runs only those shapes.

Run: .venv/bin/python bench/assess.py [--doubling [--shape NAME]...] [--tree DIR]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
if "--tree" in sys.argv:  # another checkout's anna_common (and its tests' corpora helpers)
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()))

from anna_common.risk import assess as risk  # noqa: E402
from anna_common.risk.assess import AssessContext, assess  # noqa: E402
from anna_common.shell.grammar import bash_parser as _parser  # noqa: E402
from tests.corpus_eval import corpora_dir  # noqa: E402
from tests.worst_inputs import worst_inputs  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

GOAL_PER_S = 2000.0
PLAN = 150
"""Commands of the largest plan (50 steps, 50 checks, 50 rollback steps)."""
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
    if "--doubling" in sys.argv:
        return 0 if doubling() <= WORST_MS else 1
    items = commands()
    parser = _parser()
    parse_med, _ = rate(lambda c: parser.parse(c.encode()), items)
    cold_med, cold_best = rate(lambda c: assess(c, CONTEXT), items)
    warm_s = 0.0
    for first in range(0, len(items), PLAN):
        group = items[first:first + PLAN]
        for item in group:
            assess(item, CONTEXT)
        start = time.perf_counter()
        for item in group:
            assess(item, CONTEXT)
        warm_s += time.perf_counter() - start
    warm = len(items) / warm_s
    start = time.perf_counter()
    for item in items:
        assess(item, CONTEXT)
    again = len(items) / (time.perf_counter() - start)
    print(f"commands: {len(items)} (corpora: {'yes' if corpora_dir() else 'no, fallback set'})")
    print(f"tree-sitter parse only : {parse_med:10.0f} /s")
    print(f"assess, cold (median)  : {cold_med:10.0f} /s   best {cold_best:.0f} /s")
    print(f"assess, cached         : {warm:10.0f} /s   (a plan's {PLAN} commands again)")
    print(f"assess, corpus again   : {again:10.0f} /s   ({len(items)} distinct commands)")
    print(f"goal                   : {GOAL_PER_S:10.0f} /s   cold/goal = {cold_med / GOAL_PER_S:.2f}x")
    worst = worst_case()
    return 0 if cold_med >= GOAL_PER_S and worst <= WORST_MS else 1


EXTGLOB_SHAPES: dict[str, Callable[[int], str]] = {
    "open groups": lambda n: "ls " + "@(a|" * (n // 4 - 1),
    "closed nested": lambda n: "ls " + "@(a|" * (n // 8) + ")" * (n // 8),
    "many groups": lambda n: "cat " + "/@(etc|usr)/x " * (n // 14),
    "root groups": lambda n: "sudo rm -f " + "/@(etc|usr)/@(a|b)* " * (n // 21),
    "negated globs": lambda n: "rm -rf " + "~/!(keep|this)/*.@(o|a) " * (n // 24),
    # the costliest others found (of ~50 shapes: braces, find -exec, $(...) nesting, heredocs,
    # ; chains, cd chains, loops, bash -c, interpreters): a distinct wildcard per word, each
    # matched against every protected path and security file; they meet the word budget
    # (200) before 4 KB, so their 4 KB figure is the largest such command under it
    "distinct root globs": lambda n: _words("sudo rm -rf ", "/@(e|u)*/a{}*", n),
    "distinct home globs": lambda n: _words("rm -rf ", "~/.s*/a{}*", n),
    "home groups": lambda n: "rm -rf " + "~/@(.ssh|.config)/@(a|b)* " * (n // 26),
    "sed -i globs": lambda n: _words("sudo sed -i s/a/b/ ", "/e*/a{}*", n),
    "bash -c globs": lambda n: "sudo bash -c '" + _words("rm -rf ", "/e*/a{}*", n - 20) + "'",
    # relative paths after many ``cd``: each is judged in every place the command may be in
    "cd then words": lambda n: _words("".join(f"cd /x{i}; " for i in range(min(n // 40, 48)))
                                      + "sudo rm -f ", "a{}", n),
    "relative cds": lambda n: _words("".join(f"cd d{i}; " for i in range(6)) + "sudo rm -f ",
                                     "a{}", n),
}
"""Commands of about ``n`` characters (issue 38 item 4: linear, 4 KB within 50 ms)."""


def _words(head: str, unit: str, n: int) -> str:
    """``head`` and distinct words ``unit`` (numbered) up to ``n`` characters, within the
    analysis' 200 words (past them a command is too large and judged at once)."""
    words: list[str] = []
    while len(words) < 196 - len(head.split()) and len(head) + sum(len(w) + 1 for w in words) < n - 16:
        words.append(unit.format(len(words)))
    return head + " ".join(words)


def doubling() -> float:
    """Print each extglob shape's cold time at 512 B .. 4 KB and the growth per doubling;
    return the slowest 4 KB figure (ms)."""
    assess("ls @(a|b)", CONTEXT)
    sizes = (512, 1024, 2048, 4096)
    print(f"doubling series (cold, CPU ms of this process, best of 5), {risk.__file__}:")
    print(f"  {'shape':20}" + "".join(f"{n:>9}" for n in sizes) + "   growth per doubling")
    slowest = 0.0
    only = [sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--shape"]
    for name, make in EXTGLOB_SHAPES.items():
        if only and name not in only:
            continue
        times = []
        for n in sizes:
            command = make(n)
            best = float("inf")
            for _ in range(5):
                risk._assess_cached.cache_clear()
                start = time.process_time()  # CPU: the machine is shared, its load varies
                assess(command, CONTEXT)
                best = min(best, (time.process_time() - start) * 1000)
            times.append(best)
        growth = " ".join(f"{b / a:.1f}x" for a, b in pairwise(times))
        print(f"  {name:20}" + "".join(f"{t:>9.1f}" for t in times) + f"   {growth}")
        slowest = max(slowest, times[-1])
    return slowest


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
