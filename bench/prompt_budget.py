"""Message sizes for typical requests with 1,500 packages installed (no model needed).

    .venv/bin/python bench/prompt_budget.py

Prints, side by side for each request: the system message (static, identical every time),
the user message (request + mode + trimmed telemetry), the untrusted telemetry block in it,
what the untrimmed telemetry would have been, and the time to build the messages. The goal
is a user message under 6,000 characters whatever is installed.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _telemetry import telemetry

from annactl.planning.prompt import prompts, system_message, user_message
from annactl.planning.telemetry_trim import compact, trim

REQUESTS = (
    "how is my system?",
    "install htop",
    "remove firefox",
    "change my wallpaper to /home/user/pictures/fjord.png",
    "restart nginx",
    "clean the package cache",
    "why is python using so much memory and which python packages do i have",
    "set up a firewall that only allows ssh",
    "my bluetooth headphones do not connect",
)
GOAL = 6000


def main() -> int:
    snapshot = telemetry(1500)
    full = len(snapshot.model_dump_json())
    system = system_message()
    print(f"prompt set {prompts().version} sha256 {prompts().sha256[:16]}…; telemetry with "
          f"{snapshot.packages.count} packages is {full:,} chars as JSON untrimmed")
    print(f"system message: {len(system):,} chars, {len(system.encode()):,} bytes, identical "
          "for every request\n")
    print(f"{'request':58} {'user msg':>9} {'telemetry':>9} {'vs full':>8} {'build ms':>9}")
    worst = 0
    for request in REQUESTS:
        started = time.perf_counter()
        for _ in range(20):
            user = user_message(request, mode="one-shot", telemetry=snapshot)
        build_ms = (time.perf_counter() - started) * 1000 / 20
        block = len(compact(trim(snapshot, request)))
        worst = max(worst, len(user))
        print(f"{request[:58]:58} {len(user):9,} {block:9,} {block / full:8.1%} {build_ms:9.2f}")
    print(f"\nlargest user message {worst:,} chars (goal < {GOAL:,}): "
          f"{'ok' if worst < GOAL else 'OVER BUDGET'}")
    sample = trim(snapshot, "install htop")
    print("packages section for 'install htop':", json.dumps(sample["packages"])[:300])
    return 0 if worst < GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
