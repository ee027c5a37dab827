"""Why the prefix cache hits only sometimes: call sequences against a real llama-server.

    .venv/bin/python bench/prefix_probe.py --url http://127.0.0.1:18181/v1

Sends Anna's real system message with different user messages in the orders a session
produces (a new request, a repair that extends the previous exchange, a reply that ran to
a long token cap, a request with another system message in between) and prints, per call,
the prompt tokens the server processed and the ones it reused (llama.cpp ``timings``:
``prompt_n``, ``cache_n``). Not part of CI; nothing is executed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _telemetry import telemetry

from anna_common.plan import model_json_schema
from annactl.planning import prompt


def messages(request: str, *extra: dict[str, str]) -> list[dict[str, str]]:
    """Anna's system and user messages for ``request`` (and any follow-up turns)."""
    user = prompt.user_message(request, mode="one-shot", telemetry=telemetry())
    return [{"role": "system", "content": prompt.system_message()},
            {"role": "user", "content": user}, *extra]


def call(client: httpx.Client, msgs: list[dict[str, str]], *, max_tokens: int,
         schema: bool = True, stream: bool = False) -> dict[str, Any]:
    """One chat call; the server's prompt figures."""
    body: dict[str, Any] = {"model": "m", "messages": msgs, "temperature": 0,
                            "max_tokens": max_tokens, "stream": stream}
    if schema:
        body["response_format"] = {"type": "json_schema", "json_schema": {
            "name": "ActionPlan", "schema": model_json_schema(), "strict": True}}
    if stream:
        body["stream_options"] = {"include_usage": True}
        timings: dict[str, Any] = {}
        usage: dict[str, Any] = {}
        with client.stream("POST", "/chat/completions", json=body) as response:
            for line in response.iter_lines():
                if line.startswith("data:") and line[5:].strip() != "[DONE]":
                    obj = httpx.Response(200, content=line[5:].strip()).json()
                    timings = obj.get("timings") or timings
                    usage = obj.get("usage") or usage
        reply = {"timings": timings, "usage": usage}
    else:
        reply = client.post("/chat/completions", json=body).json()
    t = reply.get("timings") or {}
    details = (reply.get("usage") or {}).get("prompt_tokens_details") or {}
    return {"processed": t.get("prompt_n"), "reused": t.get("cache_n"),
            "usage_cached": details.get("cached_tokens"), "prompt_ms": t.get("prompt_ms"),
            "generated": t.get("predicted_n")}


def scenario(client: httpx.Client, name: str, steps: list[tuple[str, dict[str, Any]]]) -> None:
    """Run and print one sequence."""
    print(f"\n{name}")
    for label, kwargs in steps:
        msgs = kwargs.pop("msgs")
        row = call(client, msgs, **kwargs)
        print(f"  {label:44} processed={row['processed']!s:>5} reused={row['reused']!s:>5} "
              f"usage.cached={row['usage_cached']!s:>5} prompt={row['prompt_ms'] or 0:8.0f} ms "
              f"generated={row['generated']}", flush=True)


def main() -> int:
    """Run the scenarios."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--long", type=int, default=1600,
                        help="tokens of the long reply (0: skip scenario D)")
    parser.add_argument("--max-tokens", type=int, default=48, help="tokens per short reply")
    args = parser.parse_args()
    other = [{"role": "system", "content": "You evaluate results. Reply with JSON."},
             {"role": "user", "content": "Step 1 exited 0. Was the goal met?"}]
    repair = [{"role": "assistant", "content": "{\"analysis\": \"x\"}"},
              {"role": "user", "content": prompt.repair_message([])}]
    with httpx.Client(base_url=args.url, timeout=900) as client:
        scenario(client, "A. new requests back to back (the bench)", [
            ("install htop", {"msgs": messages("install htop"), "max_tokens": args.max_tokens}),
            ("restart nginx", {"msgs": messages("restart nginx"), "max_tokens": args.max_tokens}),
            ("restart nginx, streamed", {"msgs": messages("restart nginx"), "max_tokens": args.max_tokens,
                                         "stream": True}),
        ])
        scenario(client, "B. a repair extends the exchange, then a new request", [
            ("repair of restart nginx", {"msgs": messages("restart nginx", *repair),
                                         "max_tokens": args.max_tokens}),
            ("show failed services", {"msgs": messages("show failed services"),
                                      "max_tokens": args.max_tokens}),
        ])
        scenario(client, "C. another system message in between (one slot)", [
            ("other system message", {"msgs": other, "max_tokens": 16, "schema": False}),
            ("clean the package cache", {"msgs": messages("clean the package cache"),
                                         "max_tokens": args.max_tokens}),
        ])
        if not args.long:
            return 0
        scenario(client, f"D. a reply that runs to {args.long} tokens, then a new request", [
            ("how is my system? (no schema, runs long)",
             {"msgs": messages("how is my system?"), "max_tokens": args.long,
              "schema": False}),
            ("install htop", {"msgs": messages("install htop"), "max_tokens": args.max_tokens}),
            ("restart nginx", {"msgs": messages("restart nginx"), "max_tokens": args.max_tokens}),
        ])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
