"""Measure the risk classifier on the public corpora in ``../shared/corpora``.

Run ``python tests/corpus_eval.py`` for the per-family table; ``tests/test_corpus.py``
holds the thresholds. The corpora are external test fixtures (GTFOBins rows are
GPL-3.0): they are read from their folder, never copied into this repository.
"""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict
from pathlib import Path

from anna_common.plan import RiskLevel
from anna_common.risk.assess import AssessContext, assess

CONTEXT = AssessContext(distro="arch", home="/home/alice")
"""An Arch desktop with no bootloader evidence: the strictest setting."""


def corpora_dir() -> Path | None:
    """Where the corpora are: ``ANNA_CORPORA``, or ``shared/corpora`` beside the checkout."""
    candidates = [os.environ.get("ANNA_CORPORA", "")]
    here = Path(__file__).resolve().parent.parent
    candidates += [str(here.parent / "shared" / "corpora"), "/work/shared/corpora"]
    for cand in candidates:
        if cand and (Path(cand) / "dangerous_commands.jsonl").is_file():
            return Path(cand)
    return None


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def evaluate(root: Path) -> dict[str, dict[str, float | int]]:
    """Rates per (file, family, expect, single/multi-line) group."""
    groups: dict[str, list[tuple[bool, RiskLevel]]] = defaultdict(list)
    for row in _rows(root / "dangerous_commands.jsonl"):
        family = str(row["category"]).split(":", 1)[0]
        lines = "multi" if row.get("multiline") else "single"
        verdict = assess(str(row["command"]), CONTEXT)
        groups[f"dangerous/{row['expect']}/{family}/{lines}"].append((verdict.banned,
                                                                      verdict.risk))
    for row in _rows(root / "benign_commands.jsonl"):
        source = str(row.get("source", "")).split("/", 1)[0].split(":")[0] or "other"
        kind = "hard_negative" if row.get("hard_negative") else "benign"
        verdict = assess(str(row["command"]), CONTEXT)
        groups[f"benign/{kind}/{source}"].append((verdict.banned, verdict.risk))
    table: dict[str, dict[str, float | int]] = {}
    for key, results in sorted(groups.items()):
        n = len(results)
        table[key] = {
            "rows": n,
            "banned": sum(b for b, _ in results) / n,
            "high_or_banned": sum(b or r == RiskLevel.HIGH for b, r in results) / n,
            "medium_plus": sum(b or r >= RiskLevel.MEDIUM for b, r in results) / n,
            "info": sum(r == RiskLevel.INFO for _, r in results) / n,
        }
    return table


def aggregate(table: dict[str, dict[str, float | int]], prefix: str, metric: str,
              lines: str | None = None) -> tuple[float, int]:
    """Row-weighted rate of ``metric`` over groups starting with ``prefix``."""
    total = 0
    hits = 0.0
    for key, row in table.items():
        if not key.startswith(prefix) or (lines and not key.endswith("/" + lines)):
            continue
        total += int(row["rows"])
        hits += float(row[metric]) * int(row["rows"])
    return (hits / total if total else 0.0), total


def main() -> int:
    root = corpora_dir()
    if root is None:
        print("corpora not found: set ANNA_CORPORA", file=sys.stderr)
        return 2
    table = evaluate(root)
    print(f"{'group':48} {'rows':>5} {'banned':>7} {'HIGH+':>7} {'MED+':>7} {'INFO':>7}")
    for key, row in table.items():
        print(f"{key:48} {row['rows']:>5} {row['banned']:>7.1%} {row['high_or_banned']:>7.1%} "
              f"{row['medium_plus']:>7.1%} {row['info']:>7.1%}")
    print()
    for label, prefix, metric, lines in (
        ("expect=ban banned", "dangerous/ban/", "banned", None),
        ("expect=high single-line HIGH or banned", "dangerous/high/", "high_or_banned", "single"),
        ("expect=review MEDIUM+", "dangerous/review/", "medium_plus", None),
        ("benign banned", "benign/", "banned", None),
        ("hard_negative banned", "benign/hard_negative/", "banned", None),
    ):
        rate, n = aggregate(table, prefix, metric, lines)
        print(f"{label:44} {rate:7.2%} of {n}")
    banned, total, look_alikes, safe = never_list()
    print(f"{'NEVER corpus banned':44} {banned / total:7.2%} of {total}")
    print(f"{'NEVER look-alikes banned':44} {look_alikes / safe:7.2%} of {safe}")
    return 0


def never_list() -> tuple[int, int, int, int]:
    """(banned, variants, look-alikes banned, look-alikes) of seed 000's NEVER list as
    ``tests/contract/never_corpus.py`` spells it."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.contract.never_corpus import NEVER, SAFE

    variants = [c for cmds in NEVER.values() for c in cmds]
    safe = [c for cmds in SAFE.values() for c in cmds]
    return (sum(assess(c, CONTEXT).banned for c in variants), len(variants),
            sum(assess(c, CONTEXT).banned for c in safe), len(safe))


if __name__ == "__main__":
    raise SystemExit(main())
