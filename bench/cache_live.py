"""The deterministic cache with live telemetry (issue 25.3): the same request, repeated.

    .venv/bin/python bench/cache_live.py [--repeats 5] [--gap 20] [--request "how is my system"]
    ANNA_CODE=/path/to/other/checkout .venv/bin/python bench/cache_live.py   # before/after

Each repeat collects this machine's telemetry afresh with the daemon's own collectors
(load, memory, uptime, processes all move between collections), then plans the request
through the real planner (templates off: the model path) with ``ANNA_LLM_CACHE=readwrite`` against the fake LLM server
(tests/fakellm.py), which answers every request it receives. A repeat the server never saw
was served from the cache. ``--gap`` seconds pass between repeats (a minute apart is
``--gap 60``). Prints the hit rate per request, and which parts of the sent telemetry
changed between the first and the last repeat.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, os.environ.get("ANNA_CODE") or str(HERE.parent))

from annactl.core.config import load_settings  # noqa: E402
from annactl.planning.planner import Planner  # noqa: E402
from annad.telemetry import TelemetryService  # noqa: E402

REQUESTS = ("how is my system", "what uses my memory", "tune my system for battery life")


def _fakellm() -> Any:
    spec = importlib.util.spec_from_file_location("fakellm", HERE.parent / "tests" / "fakellm.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fakellm"] = module
    spec.loader.exec_module(module)
    return module


def _changed(first: Any, last: Any, path: str = "") -> list[str]:
    """Dotted paths where two JSON values differ."""
    if isinstance(first, dict) and isinstance(last, dict):
        return [p for k in sorted(set(first) | set(last))
                for p in _changed(first.get(k), last.get(k), f"{path}.{k}".lstrip("."))]
    if isinstance(first, list) and isinstance(last, list) and len(first) == len(last):
        return [p for i, (a, b) in enumerate(zip(first, last, strict=True))
                for p in _changed(a, b, f"{path}.{i}")]
    return [] if first == last else [path or "(root)"]


def _sent_telemetry(body: dict[str, Any]) -> Any:
    user = body["messages"][1]["content"]
    block = user.split('<telemetry trust="untrusted">\n', 1)[1].rsplit("\n</telemetry>", 1)[0]
    return json.loads(block)


def main(argv: list[str] | None = None) -> int:
    """Repeat each request with fresh telemetry; print the cache hit rate."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--gap", type=float, default=20.0)
    parser.add_argument("--request", action="append", default=[])
    args = parser.parse_args(argv)
    fake = _fakellm()
    server = fake.FakeLLM(models=("m",), default=fake.Reply(
        json.dumps({"answer": "Fine.", "citations": []}))).start()
    server.responder = lambda body: fake.Reply(
        json.dumps({"answer": "Fine.", "citations": []}) if "command_plan" not in json.dumps(
            body.get("format") or body.get("response_format") or {}) else fake.plan_json())
    state = Path(tempfile.mkdtemp(prefix="anna-cache-"))
    settings = load_settings(llm_url=server.ollama_url, llm_model="m", llm_cache="readwrite",
                              state_dir=state)
    collector = TelemetryService(pacman_dbpath=Path("/var/lib/pacman"), refresh_s=3600)
    requests = args.request or list(REQUESTS)
    code = os.environ.get("ANNA_CODE") or "this checkout"
    print(f"cache hit rate, live telemetry collected afresh before each repeat, {args.gap:g} s "
          f"apart, code {code}")
    try:
        for request in requests:
            before = len(server.chat_bodies())
            for repeat in range(args.repeats):
                if repeat:
                    time.sleep(args.gap)
                snapshot, _age = collector.get(fresh=True)
                Planner(settings, daemon=None).plan(request, telemetry=snapshot,
                                                    use_templates=False)
            asked = len(server.chat_bodies()) - before
            hits = (args.repeats - 1) - max(0, asked - 1)  # the first is always a miss
            sent = server.chat_bodies()[before:]
            moved = _changed(_sent_telemetry(sent[0]), _sent_telemetry(sent[-1])) if asked > 1 \
                else []
            print(f"  {request[:40]:40} hits {hits}/{args.repeats - 1} repeats "
                  f"(model asked {asked}x)"
                  + (f"; sent telemetry that moved: {', '.join(moved[:6])}" if moved else ""))
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
