"""The ten everyday requests of issue 24, through Anna's real planner: what the person gets.

    # any Ollama or OpenAI-compatible server (product defaults: templates on, 60 s budget)
    .venv/bin/python bench/everyday.py --provider openai --url http://127.0.0.1:8080/v1 \\
        --model my-model
    # the model path alone (no template answers, no fallbacks)
    .venv/bin/python bench/everyday.py --url http://127.0.0.1:11434 --model m --templates off
    # a simulated tiny model on the fake server (no real model needed), see SIMULATION
    .venv/bin/python bench/everyday.py --sim

Per request: the form Anna asked in, model calls, replies that closed (not cut at the token
cap), whether the final plan is valid, what the person finally got (``model``, ``template``
with the reason, or ``error CODE``) and the wall time. Nothing is executed: no daemon.

SIMULATION (``--sim``): the fake LLM server (tests/fakellm.py) plays a tiny model with the
speeds measured for SmolLM2-135M on this machine (shared/real-llm.md): prompt 110 tokens/s
(the system message cached after its first use), generation 21 tokens/s, 4 characters a
token. Asked for the full contract it fills every slot until the token cap (as both real
tiny models did); asked in a small form it closes a short, schema-valid reply. Time runs
``--speedup`` times faster (default 10: the 60 s budget becomes 6 s) and every printed time
is scaled back, so the table reads in the real model's seconds. ``ANNA_CODE=DIR`` runs the
planner of another checkout (a before/after comparison with the same simulated model).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, os.environ.get("ANNA_CODE") or str(HERE.parent))

from _telemetry import telemetry  # noqa: E402

from anna_common.errors import AnnaError  # noqa: E402
from annactl.core.config import ClientSettings, load_settings  # noqa: E402
from annactl.planning.llm import make_provider  # noqa: E402
from annactl.planning.llm.base import ChatRequest, ChatResult, Provider  # noqa: E402
from annactl.planning.planner import Planner  # noqa: E402

REQUESTS = ("how is my system", "install htop", "why is my disk full",
            "change my wallpaper to /home/user/pictures/fjord.png", "restart ssh",
            "show me failed services", "free up space", "what uses my memory",
            "add an alias ll='ls -la' to my .bashrc", "enable the firewall")
"""Issue 24's ten everyday requests."""
FIRST_HOUR = ("how is my system", "what kernel am I running?", "show my ip address",
              "how long has my computer been up?", "who is logged in?",
              "what's listening on the network?", "show me failed services",
              "what uses my memory", "why is my disk full?", "check disk health",
              "install htop", "clean the package cache", "update my system",
              "restart networkmanager", "restart ssh", "enable the firewall",
              "add an alias ll to my bashrc", "change my wallpaper to ~/Pictures/fjord.png",
              "list big files in my home", "how do I extract a tar.gz?")
"""Issue 39's twenty everyday requests of a person's first hour (bench/first_hour.py asks
them and judges each answer against the machine)."""
PROMPT_TPS, GEN_TPS = 110.0, 21.0
"""SmolLM2-135M on 2 cores (shared/real-llm.md): prompt and generation tokens per second."""


def _fakellm() -> Any:
    spec = importlib.util.spec_from_file_location("fakellm", HERE.parent / "tests" / "fakellm.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fakellm"] = module
    spec.loader.exec_module(module)
    return module


class Watch:
    """Keeps every reply of the current request (finish reasons, tokens)."""

    def __init__(self, inner: Provider) -> None:
        self.inner, self.name, self.model = inner, inner.name, inner.model
        self.replies: list[ChatResult] = []
        self.calls = 0
        self.wait_s = 0.0
        self.form = ""
        self.first_call: float | None = None
        """When the current request's first model call started (``time.monotonic()``)."""

    def chat(self, request: ChatRequest, **kwargs: Any) -> ChatResult:
        """Ask the wrapped provider and keep the reply (a call that failed is counted)."""
        self.calls += 1
        self.form = getattr(request, "form", "plan")
        began = time.monotonic()
        if self.first_call is None:
            self.first_call = began
        try:
            result = self.inner.chat(request, **kwargs)
        finally:
            self.wait_s += time.monotonic() - began
        self.replies.append(result)
        return result

    def close(self) -> None:
        """Close the wrapped provider."""
        self.inner.close()


def simulated(speedup: float) -> Any:
    """A responder for the fake server: a tiny model that closes only small forms."""
    last_system: list[str] = [""]
    lock = threading.Lock()
    fake = _fakellm()

    def respond(body: dict[str, Any]) -> Any:
        messages = body.get("messages") or []
        system = messages[0]["content"] if messages else ""
        user = "".join(m["content"] for m in messages[1:])
        with lock:
            cold = system != last_system[0]
            last_system[0] = system
        prompt_tokens = (len(user) + (len(system) if cold else 0)) / 4
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or body.get("format") or {}
        props = schema.get("properties", {}) if isinstance(schema, dict) else {}
        found = re.search(r"REQUEST: (.*)", user)
        asked = found.group(1) if found else ""
        words = asked.split()
        tail = words[-1].strip(".!?") if words else "x"
        if "command_plan" in props:  # the full contract: fills every slot to the cap
            text, runaway = '{"analysis": "', True
        elif "answer" in props:
            text = json.dumps({"answer": "The telemetry shows this machine is running.",
                               "citations": []})
            runaway = False
        elif "package" in props:
            text = json.dumps({"action": "install", "package": tail.lower()})
            runaway = False
        elif "unit" in props:
            verb = "enable" if "enable" in asked else "restart"
            text, runaway = json.dumps({"action": verb, "unit": f"{tail}.service"}), False
        else:
            text, runaway = json.dumps({"path": tail}), False
        return fake.Reply(content=text, runaway=runaway, delay=prompt_tokens / PROMPT_TPS
                          / speedup, chunk_delay=1 / GEN_TPS / speedup,
                          prompt_tokens=int(prompt_tokens))

    return respond


def run(planner: Planner, watch: Watch, request: str, scale: float) -> dict[str, Any]:
    """One request; the row of the table."""
    watch.replies, watch.calls, watch.wait_s, watch.form = [], 0, 0.0, ""
    watch.first_call = None
    started = time.monotonic()
    row: dict[str, Any] = {"request": request}
    try:
        outcome = planner.plan(request, telemetry=telemetry(), use_templates=True)
    except AnnaError as exc:
        row.update(got=f"error {exc.code}", valid=False, form=watch.form or "-")
    else:
        row["valid"] = bool(outcome.result.ok)
        row["form"] = watch.form or "-"
        if outcome.template and outcome.offline_reason:
            row["got"] = f"template ({outcome.offline_reason.split(':')[0]})"
        elif outcome.template:
            row["got"] = "template (confident)"
        else:
            row["got"] = "model"
        plan = outcome.plan
        if plan is not None:  # what the person read, to judge by hand whether it is right
            row["answer"] = plan.notes_for_user[:400]
            row["commands"] = [s.command for s in plan.command_plan][:6]
        row["form_why"] = getattr(outcome, "form_why", "")
    # the model's wait in the simulated model's seconds; Anna's own time as measured
    row["seconds"] = time.monotonic() - started - watch.wait_s + watch.wait_s * scale
    row["calls"] = watch.calls
    # Anna's own work before the first model call (issue 39.8: it counts, and is small)
    row["before_first_call_s"] = (None if watch.first_call is None
                                  else round(watch.first_call - started, 3))
    row["closed"] = sum(r.finish_reason != "length" for r in watch.replies)
    row["forms"] = sorted({r.response_format for r in watch.replies})
    return row


def table(rows: list[dict[str, Any]], title: str) -> str:
    """The printed table."""
    lines = [title, f"{'request':42} {'form':12} {'calls':>5} {'closed':>6} {'valid':>5} "
                    f"{'time':>8}  got"]
    for r in rows:
        lines.append(f"{r['request'][:42]:42} {str(r.get('form') or '-')[:12]:12} "
                     f"{r['calls']:5} {r['closed']:6} {'yes' if r['valid'] else '-':>5} "
                     f"{r['seconds']:7.1f}s  {r['got']}")
    calls = sum(r["calls"] for r in rows)
    lines += ["", f"replies closed         {sum(r['closed'] for r in rows)}/{calls}",
              f"valid final plans      {sum(r['valid'] for r in rows)}/{len(rows)}",
              f"answered by the model  {sum(r['got'] == 'model' for r in rows)}/{len(rows)}",
              f"errors                 {sum(r['got'].startswith('error') for r in rows)}",
              f"total / longest time   {sum(r['seconds'] for r in rows):.1f} s / "
              f"{max(r['seconds'] for r in rows):.1f} s"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the requests and print the table."""
    parser = argparse.ArgumentParser(description="Anna's ten everyday requests, end to end.")
    parser.add_argument("--url")
    parser.add_argument("--model", default="sim")
    parser.add_argument("--provider", choices=("ollama", "openai"), default="openai")
    parser.add_argument("--sim", action="store_true", help="the simulated tiny model")
    parser.add_argument("--speedup", type=float, default=10.0)
    parser.add_argument("--templates", choices=("on", "off"), default="on")
    parser.add_argument("--forms", choices=("auto", "contract", "small"), default=None,
                        help="ANNA_LLM_FORMS (default: the product's, learned per model)")
    parser.add_argument("--budget", type=float, default=None,
                        help="ANNA_LLM_BUDGET in seconds (default: the product's)")
    parser.add_argument("--only", type=int, nargs="*", metavar="N",
                        help="run only these requests (1-10, in the order of REQUESTS): one "
                             "request per process lets a caller bound each one's wall time")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if any(not 1 <= n <= len(REQUESTS) for n in args.only or ()):
        parser.error(f"--only takes request numbers 1-{len(REQUESTS)}")
    requests = [REQUESTS[n - 1] for n in args.only] if args.only else list(REQUESTS)
    if args.sim == bool(args.url):
        parser.error("give exactly one of --sim and --url")
    scale = args.speedup if args.sim else 1.0
    server = None
    if args.sim:
        server = _fakellm().FakeLLM(models=("sim",)).start()
        server.cap_tokens = True
        server.responder = simulated(args.speedup)
        args.url = server.openai_url if args.provider == "openai" else server.ollama_url
    state = Path(tempfile.mkdtemp(prefix="anna-everyday-"))
    values: dict[str, Any] = {"llm_provider": args.provider, "llm_url": args.url,
                              "llm_model": args.model, "templates": args.templates == "on",
                              "state_dir": state}
    if args.forms is not None and "llm_forms" in ClientSettings.model_fields:
        values["llm_forms"] = args.forms
    defaults = load_settings(**values)
    values["llm_timeout"] = defaults.llm_timeout / scale
    budget = args.budget if args.budget is not None else getattr(defaults, "llm_budget", None)
    if budget is not None and "llm_budget" in ClientSettings.model_fields:
        values["llm_budget"] = budget / scale
    settings = load_settings(**values)
    watch = Watch(make_provider(settings))
    planner = Planner(settings, daemon=None, provider=watch)
    try:
        rows = [run(planner, watch, r, scale) for r in requests]
    finally:
        planner.close()
        if server is not None:
            server.stop()
        shutil.rmtree(state, ignore_errors=True)  # nothing of the bench stays in /tmp
    where = "simulated tiny model (fake server" + (f", time x{scale:g})" if args.sim else ")") \
        if args.sim else f"{args.provider} at {args.url}"
    title = (f"everyday requests: model {args.model} ({where}), templates {args.templates}, "
             f"forms {args.forms or 'default'}, "
             f"budget {budget if budget is not None else 'none'} s, code {os.environ.get('ANNA_CODE') or 'this checkout'}")
    print(json.dumps({"title": title, "rows": rows}, indent=1) if args.json
          else table(rows, title))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
