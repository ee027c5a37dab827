"""The daemon's idle memory (issue 22: goal at most 60 MB resident after any work).

Starts the real annad (``python -m annad.main`` under uvicorn, tests/daemonfix.py) in a
temporary directory, per-user and system (root only), and prints its VmRSS and VmHWM (peak):
idle after start, then idle after rounds of work — submit, checks, preview, execute and
rollback of a plan that edits a file in the daemon's temporary home, plus telemetry, history,
a policy check and the audit chain. "Idle" is a condition: no plan running, and the RSS
unchanged for 3 s in a row. ``--distinct N`` then sends N policy checks of distinct commands
(what a long-lived daemon sees) to show what the analysis caches keep.

Figures (MB = 10^6 bytes; Python 3.11, pydantic 2.14, starlette 1.10, uvicorn 0.54; .pyc
files compiled for both trees; default 10 rounds). Side by side, 2026-11-27, main 85a164c
(FastAPI) and this branch (routes on plain Starlette, malloc arenas capped at 2) run
alternately twice, load average 12-13 from other engineers' suites; idle after start / after
1 round / after 10 rounds:
- main:    per-user 63.4 / 66.9-67.0 / 67.7-67.8, system 63.6-63.9 / 66.9-67.0 / 67.6-67.7
- branch:  per-user 55.7-55.9 / 58.8-58.9 / 59.3, system 56.2-56.3 / 58.9 / 59.3-59.4
i.e. 0.88x of main after 10 rounds. Of the ~8.3 MB: FastAPI ~7.7 (55.8 / 59.1 / 59.8 per-user
and 56.3 / 59.4 / 60.0-60.1 system with the Starlette routes alone), the arena cap ~0.6 (run
alternately with and without it twice, system daemon, load 11-15: 59.4 vs 60.0 after 10
rounds both times).
So the goal holds for this bench's work (10 rounds). Analysed commands: until 1103206 the
analysis caches (anna_common/risk and anna_common/policy, ``lru_cache`` of 4,096 to 65,536
entries) kept ~3.2 kB of RSS per distinct command, linearly; they are now bounded
(anna_common.plan.PLAN_COMMANDS = 256 risk assessments and policy subjects, a whole plan's
150 commands at most; a command's paths and globs 512 to 4,096 entries; the policy's rules
1,024). ``--distinct 1500 --rounds 1 --only user``, 2026-11-27, load ~11, idle after 1 round
/ +500 / +1,000 / +1,500 distinct commands:
- before (02b6c58): 59.0 / 60.4 / 62.0 / 63.7, still linear (the earlier run: 58.9 / 60.5 /
  62.0 / 63.7; 40 rounds of this bench showed the same slope: 61.5 after 40);
- after (1103206):  58.8 / 59.6 / 59.7 / 59.8, level; ``--distinct 4000`` (load ~8): 58.7
  after 1 round, then 59.5, 59.6, 59.7 and 59.7 from 1,500 to 4,000 commands.
Not measured: a daemon with a policy of many path rules (this bench's daemon has none), whose
rule-path pair cache (4,096 entries) would be full too. The bound is in entries, not bytes:
256 distinct ~4 KB commands of ~300 paths each, assessed and judged in-process, leave 1.6 MB
of live objects (tracemalloc) in all the caches together.
tracemalloc over 20 rounds saw only ~0.14 MB more live Python objects (the cache entries
among them): the rest of the RSS growth was memory it does not see (allocator pools those
small long-lived entries kept from being returned). What the smaller caches cost in speed is
in bench/policy.py's docstring.

What moved the floor: FastAPI (with opentelemetry, pydantic.v1, python-multipart and its
OpenAPI models, imported whether or not the schema is served) cost ~8 MB; the routes are now
declared as Endpoints served by one small Starlette adapter, and the OpenAPI document the
schemathesis test fuzzes is built from the same declarations by a module the daemon never
imports (annad/api/openapi.py). Tried without effect (within 0.3 MB, or worse):
``defer_build=True`` on every pydantic model (55.5 vs 55.8 at start, 59.8 vs 59.3 after 3
rounds: the daemon validates or sends nearly every protocol model in a round, so building
on first use only moves the cost), ``malloc_trim(0)`` every second, and before (main
2bfe572) MALLOC_TRIM_THRESHOLD_, gc.collect, PYTHONMALLOC=malloc (+2 MB), PYTHONNODEBUGRANGES,
PYDANTIC_DISABLE_PLUGINS. .pyc files matter little: main without Anna's (this environment
sets PYTHONDONTWRITEBYTECODE=1, so they are never written) 64.1 / 66.9, with them 63.3 /
66.8 after start / 1 round.

What the floor is now (``--imports``, the RSS after each layer in a fresh interpreter, load
12): the interpreter 11.2, asyncio with ssl +9.8 (``asyncio.base_events`` imports ssl
whenever it can), pydantic +4.9, starlette +4.6, uvicorn with its h11 protocol +3.4 (it
imports click, logging.config and multiprocessing unconditionally), the protocol models +7.2
(with pydantic's schema machinery, built on the first model), annad.config +2.1
(pydantic-settings), the policy, risk rules and shell grammar +4.9, preview +1.5, telemetry
+1.1, journal +1.2, service +0.8, the API +0.7: 53.4 in all.
Work adds ~3 MB: ~1.7 MB of file-backed pages (shared libraries and files first touched) and
~1.4 MB anonymous; it imports only 4 modules (pyseccomp, ctypes.util, anna_common.risk.planfetch,
encodings.ascii). The recipes and queue service (annad.recipes) is made on first use.

Run: .venv/bin/python bench/daemon_memory.py [--rounds N] [--distinct N] [--env NAME=VALUE
...] [--only user|system] [--imports]
(``--env`` passes extra environment to the daemon, e.g. ``--env MALLOC_ARENA_MAX=8`` to try
a setting.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from anna_common.plan import ActionPlan
from tests.daemonfix import RunningDaemon, make_plan, running_daemon

STEADY_S = 3.0
"""RSS unchanged for this long (sampled every 0.25 s) counts as settled."""


def status(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM, RssAnon, RssFile (kB) of a process."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            fields[name] = int(value.split()[0])
    return fields


def settled(daemon: RunningDaemon) -> dict[str, int]:
    """The daemon's memory once nothing runs and its RSS has stopped moving."""
    assert daemon.proc is not None
    client = daemon.client()
    while client.health().running_plan is not None:
        time.sleep(0.25)
    last, since = -1, time.monotonic()
    while True:
        now = status(daemon.proc.pid)
        if now["VmRSS"] != last:
            last, since = now["VmRSS"], time.monotonic()
        elif time.monotonic() - since >= STEADY_S:
            return now
        time.sleep(0.25)


ROUND_PARTS = ("telemetry", "history", "policy", "audit")
"""The reads of a round after its plan (``skip`` may leave some out, to find what costs)."""


def work_round(daemon: RunningDaemon, n: int, skip: frozenset[str] = frozenset()) -> None:
    """Submit, preview, execute and roll back one plan; read telemetry, history, policy
    and the audit chain (less what ``skip`` names of :data:`ROUND_PARTS`)."""
    from anna_common.risk import tiers

    client = daemon.client()
    target = daemon.home / ".config" / "app.conf"
    target.write_text("volume=3\n")
    plan = make_plan([("edit", "sed -i s/volume=3/volume=9/ ~/.config/app.conf", "LOW"),
                      ("new", f"echo created-{n} > ~/.config/new.conf", "LOW")],
                     checks=[("look", "cat ~/.config/app.conf")])
    response = client.submit(ActionPlan.model_validate(plan), request=f"round {n}")
    client.run_checks(response.plan_id)
    client.preview(response.plan_id)
    high = response.annotated.final_risk == "HIGH"
    events = list(client.execute(response.plan_id, response.digest, confirmed=True,
                                 high_confirmed=high,
                                 confirm_word=tiers.plan_word(response.annotated) if high
                                 else None))
    assert events[-1].status == "succeeded", events[-1]
    assert client.rollback(response.plan_id).status == "rolled_back"
    if "telemetry" not in skip:
        client.telemetry(fresh=True)
    if "history" not in skip:
        client.list_plans()
    if "policy" not in skip:
        client.policy_check("rm -rf ~/.cache/thumbnails")
    if "audit" not in skip:
        client.audit_verify()


def kb(fields: dict[str, int]) -> str:
    """The figures in MB (10^6 bytes, as the goal is stated)."""
    return (f"rss {fields['VmRSS'] * 1024 / 1e6:5.1f} MB (anon {fields['RssAnon'] * 1024 / 1e6:.1f},"
            f" file {fields['RssFile'] * 1024 / 1e6:.1f}), peak {fields['VmHWM'] * 1024 / 1e6:.1f} MB")


def measure(user_mode: bool, rounds: int, env: dict[str, str], distinct: int = 0) -> None:
    """Print idle memory after start, after rounds of work, and after each 500 of
    ``distinct`` policy checks of commands not seen before."""
    name = "per-user" if user_mode else "system"
    with running_daemon(user_mode=user_mode, env=env) as daemon:
        print(f"{name}: idle after start: {kb(settled(daemon))}", flush=True)
        work_round(daemon, 0)
        print(f"{name}: idle after 1 round: {kb(settled(daemon))}", flush=True)
        for n in range(1, rounds):
            work_round(daemon, n)
        print(f"{name}: idle after {rounds} rounds: {kb(settled(daemon))}", flush=True)
        client = daemon.client()
        for batch in range(1, (distinct + 499) // 500 + 1):
            for n in range((batch - 1) * 500, min(batch * 500, distinct)):
                client.policy_check(f"sed -i s/volume={n}/v/ ~/.config/app{n}.conf")
            print(f"{name}: idle after {min(batch * 500, distinct)} distinct policy checks: "
                  f"{kb(settled(daemon))}", flush=True)


IMPORT_LAYERS = {
    "the daemon's": ["asyncio", "pydantic", "starlette.applications", "uvicorn",
                     "uvicorn.protocols.http.h11_impl", "anna_common.protocol.models",
                     "annad.config", "annad.policy_load", "annad.preview.engine",
                     "annad.telemetry", "annad.journal.store", "annad.service", "annad.api.app"],
}
"""Import orders whose RSS steps ``--imports`` prints: what each layer of the daemon costs."""


_LAYER_PROBE = """
import importlib, sys
def rss():
    with open('/proc/self/status') as f:
        return next(int(l.split()[1]) for l in f if l.startswith('VmRSS:')) * 1024 / 1e6
print(f'  interpreter {rss():5.1f} MB')
for name in sys.argv[1:]:
    importlib.import_module(name)
    print(f'  {name:40} {rss():5.1f} MB')
print('  loaded: ' + ', '.join(m for m in ('fastapi', 'pydantic.v1', 'opentelemetry', 'ssl')
                              if m in sys.modules))
"""


def import_layers() -> None:
    """Print the RSS after each layer of imports, in a fresh interpreter per order."""
    for title, modules in IMPORT_LAYERS.items():
        print(f"imports {title}:", flush=True)
        subprocess.run([sys.executable, "-c", _LAYER_PROBE, *modules], check=True,
                       cwd=Path(__file__).resolve().parent.parent)


def main() -> None:
    """Parse the arguments and measure both daemons."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--distinct", type=int, default=0, metavar="N",
                        help="then N policy checks of distinct commands")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--only", choices=["user", "system"])
    parser.add_argument("--imports", action="store_true",
                        help="print the RSS step of each layer of imports instead")
    args = parser.parse_args()
    if args.imports:
        import_layers()
        return
    env = dict(item.split("=", 1) for item in args.env)
    if args.only != "system":
        measure(True, args.rounds, env, args.distinct)
    if args.only != "user" and os.geteuid() == 0:
        measure(False, args.rounds, env, args.distinct)


if __name__ == "__main__":
    main()
