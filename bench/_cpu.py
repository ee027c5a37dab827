"""CPU time of a process tree, for benchmarks of long-lived helpers (stdlib only)."""

from __future__ import annotations

import os
from pathlib import Path


def tree_cpu_s(root: int) -> float:
    """CPU seconds used so far by ``root`` and every live descendant, each with its reaped
    children (a confinement helper lives across steps: its commands are in its cutime)."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    used: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rfind(")") + 2:].split()
        parents[int(entry.name)] = int(fields[1])
        used[int(entry.name)] = sum(int(f) for f in fields[11:15])
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        children = [p for p, parent in parents.items() if parent == pid and p not in tree]
        tree.update(children)
        frontier.extend(children)
    return sum(used.get(pid, 0) for pid in tree) / ticks
