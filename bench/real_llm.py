"""Drive a fixed set of requests through the real planner against a real model server.

Run by bench/real_llm.sh (which builds and starts llama-server); can also be pointed at any
OpenAI-compatible or Ollama server:

    .venv/bin/python bench/real_llm.py --url http://127.0.0.1:18181/v1 --model gemma-3-270m

Templates are off (every request goes to the model), there is no daemon (so no checks run and
nothing is ever executed), and the telemetry is a fixed snapshot. Figures, side by side:
parse rate (replies that are one complete JSON object), valid rate (requests ending in a valid plan),
repairs, coded errors, median latency, and Anna's overhead = end-to-end time minus the
server's own time (llama.cpp `timings`), as a share of end-to-end time.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _telemetry import telemetry

from anna_common.errors import AnnaError
from anna_common.findings import FindingCode
from anna_common.validate import ExtractError, extract_json, validate_text
from annactl.core.config import ClientSettings, load_settings
from annactl.planning.llm import make_provider
from annactl.planning.llm.base import ChatRequest, ChatResult, EventSink, Provider, no_events
from annactl.planning.planner import Planner

REQUESTS = (
    "how is my system?",
    "change my wallpaper to /home/user/pictures/fjord.png",
    "install htop",
    "restart nginx",
    "clean the package cache",
    "show failed services",
    "why is my disk getting full?",
    "make firefox my default browser",
)


class Counting:
    """Wraps a provider, keeps every reply (for the parse rate) and caps output tokens.

    The cap is a bench setting: the 270M base model under a grammar tends to repeat list
    items until the token limit, and at ~15 tokens/s a 2,048-token runaway costs two minutes
    per call. A truncated reply is a failed reply either way; the cap only makes it cheap.
    """

    def __init__(self, inner: Provider, max_tokens: int) -> None:
        self.inner = inner
        self.max_tokens = max_tokens
        self.name = inner.name
        self.model = inner.model
        self.replies: list[ChatResult] = []

    def chat(self, request: ChatRequest, *, on_tokens: Any = None,
             cancel: threading.Event | None = None, events: EventSink = no_events,
             on_text: Any = None) -> ChatResult:
        if self.max_tokens:
            request = dataclasses.replace(request, options={**request.options,
                                                            "max_tokens": self.max_tokens})
        result = self.inner.chat(request, on_tokens=on_tokens, cancel=cancel, events=events,
                                 on_text=on_text)
        self.replies.append(result)
        return result

    def close(self) -> None:
        self.inner.close()


def parses(text: str) -> bool:
    """The reply is one complete JSON object (a truncated reply can still *contain* one)."""
    try:
        value = json.loads(text.strip(), strict=False)
    except ValueError:
        return False
    return isinstance(value, dict)


def schema_ok(text: str) -> bool:
    """The reply parses and matches the ActionPlan schema (other findings allowed)."""
    result = validate_text(text)
    return not any(f.code in (FindingCode.PARSE_ERROR, FindingCode.SCHEMA_ERROR)
                   for f in result.errors)


def holds_json(text: str) -> bool:
    """extract_json finds some object in the reply (possibly a nested one)."""
    try:
        extract_json(text)
    except ExtractError:
        return False
    return True


def grounded(texts: list[str], request: str, context: Any) -> dict[str, int]:
    """Per reply: copies of a prompt example, plans off the request (issue 14)."""
    from anna_common.validate import validate_text
    from annactl.planning.grounding import echo_findings
    from annactl.planning.offrequest import off_request_findings

    echoed = off = 0
    for text in texts:
        result = validate_text(text, context)
        if result.plan is None:
            continue
        echoed += bool(echo_findings(result.plan, request=request, sent=""))
        off += bool(off_request_findings(result.plan, request))
    return {"echoed": echoed, "off_request": off}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--model", default="gemma-3-270m")
    parser.add_argument("--provider", default="openai", choices=("openai", "ollama"))
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--ctx", type=int, default=0, help="server context (for the report)")
    parser.add_argument("--ids", choices=("positional", "free"), default="positional",
                        help="who writes plan ids (ANNA_LLM_IDS): before/after issue 11.9")
    parser.add_argument("--compact", action="store_true",
                        help="the compact plan form for small models (ANNA_LLM_COMPACT)")
    parser.add_argument("--max-tokens", type=int, default=512,
                        help="output token cap per call (0: Anna's default, 2048)")
    args = parser.parse_args()

    state = Path(tempfile.mkdtemp(prefix="anna-bench-"))
    settings = load_settings(llm_provider=args.provider, llm_url=args.url, llm_model=args.model,
                              llm_timeout=600, llm_budget=0, state_dir=state, trace=True, llm_ids=args.ids,
                              llm_compact=args.compact)
    provider = Counting(make_provider(settings), args.max_tokens)
    planner = Planner(settings, daemon=None, provider=provider)
    snapshot = telemetry()
    rows = []
    for run in range(args.runs):
        for request in REQUESTS:
            before = len(provider.replies)
            started = time.perf_counter()
            row: dict[str, Any] = {"run": run, "request": request}
            try:
                outcome = planner.plan(request, telemetry=snapshot, use_templates=False)
                row.update(ok=outcome.result.ok, banned=bool(outcome.result.plan and
                                                              outcome.result.plan.banned),
                           calls=outcome.model_calls, repairs=outcome.repairs, code=None,
                           server_s=outcome.server_s, llm_s=outcome.llm_s,
                           contradictions=len(outcome.contradictions))
            except AnnaError as exc:
                row.update(ok=False, banned=False, calls=len(provider.replies) - before,
                           repairs=max(0, len(provider.replies) - before - 1), code=str(exc.code),
                           server_s=sum((r.server_ms or 0) for r in
                                        provider.replies[before:]) / 1000,
                           llm_s=sum(r.latency_s for r in provider.replies[before:]),
                           contradictions=0)
            row["e2e_s"] = time.perf_counter() - started
            replies = provider.replies[before:]
            row["parsed"] = sum(parses(r.text) for r in replies)
            row["schema_ok"] = sum(schema_ok(r.text) for r in replies)
            row["holds_json"] = sum(holds_json(r.text) for r in replies)
            row["replies"] = len(replies)
            row["tokens_out"] = sum(r.completion_tokens for r in replies)
            row["cached"] = sum(r.cached_tokens for r in replies)
            row["truncated"] = sum(r.truncated for r in replies)
            row["cache_hits"] = sum(1 for r in replies if r.cached_tokens > 0)
            row["prompt_tokens"] = sum(r.prompt_tokens for r in replies)
            row.update(grounded([r.text for r in replies], request,
                                planner.assess_context(snapshot)))
            rows.append(row)
            print(f"  {request[:44]:44} ok={row['ok']!s:5} calls={row['calls']} "
                  f"repairs={row['repairs']} code={row['code'] or '-':22} "
                  f"e2e={row['e2e_s']:6.2f}s server={row['server_s']:6.2f}s "
                  f"tokens_out={row['tokens_out']}", flush=True)
    report(rows, args, settings)
    planner.close()
    return 0


def report(rows: list[dict[str, Any]], args: argparse.Namespace, settings: ClientSettings) -> None:
    replies = sum(r["replies"] for r in rows)
    parsed = sum(r["parsed"] for r in rows)
    valid = sum(1 for r in rows if r["ok"])
    e2e = sum(r["e2e_s"] for r in rows)
    server = sum(r["server_s"] for r in rows)
    llm = sum(r["llm_s"] for r in rows)
    codes = Counter(r["code"] for r in rows if r["code"])
    print()
    print(f"model {args.model} at {args.url} (ctx {args.ctx or '?'}, output cap "
          f"{args.max_tokens or 2048} tokens, ids {args.ids}"
          f"{', compact' if args.compact else ''}), {len(rows)} requests, "
          "templates off, no daemon")
    print(f"{'replies cut at the token cap':40} {sum(r['truncated'] for r in rows)}/{replies}")
    print(f"{'parse rate (reply is one JSON object)':40} {parsed}/{replies} = "
          f"{100 * parsed / max(replies, 1):.0f} %")
    print(f"{'  replies extract_json finds an object in':40} "
          f"{sum(r['holds_json'] for r in rows)}/{replies}")
    print(f"{'  replies matching the schema':40} {sum(r['schema_ok'] for r in rows)}/{replies}")
    print(f"{'valid rate (requests with a valid plan)':40} {valid}/{len(rows)} = "
          f"{100 * valid / max(len(rows), 1):.0f} %")
    print(f"{'banned plans (refused, not repaired)':40} {sum(1 for r in rows if r['banned'])}")
    print(f"{'repairs':40} {sum(r['repairs'] for r in rows)}")
    print(f"{'model calls':40} {sum(r['calls'] for r in rows)}")
    print(f"{'coded errors':40} {dict(codes) or 'none'}")
    print(f"{'replies copying a prompt example':40} {sum(r['echoed'] for r in rows)}/{replies}")
    print(f"{'replies off the request':40} {sum(r['off_request'] for r in rows)}/{replies}")
    print(f"{'contradictions in accepted plans':40} {sum(r['contradictions'] for r in rows)}")
    print(f"{'plans that address the request':40} {valid}/{len(rows)} (accepted plans pass "
          "the echo and off-request checks)")
    hits = sum(r["cache_hits"] for r in rows)
    prompt_tokens = sum(r["prompt_tokens"] for r in rows)
    cached = sum(r["cached"] for r in rows)
    print(f"{'prefix-cache hit rate (cached_tokens > 0)':40} {hits}/{replies} = "
          f"{100 * hits / max(replies, 1):.0f} %; {cached} of {prompt_tokens} prompt tokens "
          f"reused ({100 * cached / max(prompt_tokens, 1):.0f} %)")
    print(f"{'median end-to-end latency':40} {statistics.median(r['e2e_s'] for r in rows):.2f} s")
    print(f"{'total end-to-end / server / HTTP wait':40} {e2e:.2f} s / {server:.2f} s / "
          f"{llm:.2f} s")
    overhead = e2e - server
    print(f"{'Anna overhead (e2e - server)':40} {overhead:.3f} s = {100 * overhead / e2e:.2f} % "
          f"of end-to-end (goal <= 5 %)")
    print(f"{'  of which outside the HTTP wait':40} {e2e - llm:.3f} s = "
          f"{100 * (e2e - llm) / e2e:.2f} %")
    print(f"traces in {settings.state_dir / 'traces'}")


if __name__ == "__main__":
    raise SystemExit(main())
