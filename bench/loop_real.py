"""The evaluate → fix loop against a real model server (llama-server, or any OpenAI-compatible
or Ollama server):

    .venv/bin/python bench/loop_real.py --url http://127.0.0.1:18181/v1 --model gemma-3-270m

A real per-user daemon in a temporary directory runs a *scripted* plan (never the model's:
the small base models propose nonsense) whose second step fails, so the daemon rolls the
first back. Then the real model is asked, through Anna's real code, to evaluate the
journal's record (``evaluate_finished``) and to propose a fix (``Planner.plan`` with the
fix turns, templates off, no daemon: nothing the model proposes is submitted or run).
Printed: the transcript, whether each reply held (evaluation valid / fix plan valid), the
coded errors, latency and tokens.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _telemetry import telemetry
from real_llm import Counting

from anna_common.errors import AnnaError
from anna_common.findings import ValidationResult
from anna_common.plan import ActionPlan
from anna_common.protocol.models import PlanRecord, SessionEnv
from annactl.core.config import load_settings
from annactl.planning import prompt
from annactl.planning.evaluate_call import evaluate_finished
from annactl.planning.fix import fix_continuation
from annactl.planning.llm import make_provider
from annactl.planning.outcome import PlanOutcome
from annactl.planning.planner import Planner
from tests.daemonfix import make_plan, running_daemon

REQUEST = "replace app.conf with the new one"


def failed_record(work: Path, daemon: Any) -> PlanRecord:
    """Run the scripted failing plan on the real daemon; its journal record."""
    note = work / "note.txt"
    note.write_text("original\n")
    plan = make_plan([("mark", f"echo changed > {note}", "LOW"),
                      ("copy", f"cp {work}/app.conf.new {work}/app.conf", "LOW")],
                     goal="Install the new app.conf")
    client = daemon.client()
    submitted = client.submit(ActionPlan.model_validate(plan), request=REQUEST, source="file")
    for _event in client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                                 high_confirmed=False, session=SessionEnv()):
        pass
    record = client.get_plan(submitted.plan_id)
    assert note.read_text() == "original\n", "the daemon did not roll the plan back"
    return record


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--model", default="gemma-3-270m")
    parser.add_argument("--provider", default="openai", choices=("openai", "ollama"))
    parser.add_argument("--timeout", type=float, default=300,
                        help="seconds to wait for each reply (a loaded 2-core machine needs more)")
    parser.add_argument("--compact", action="store_true",
                        help="the compact plan form for small models (ANNA_LLM_COMPACT)")
    parser.add_argument("--max-tokens", type=int, default=0,
                        help="output token cap per call (0: Anna's own)")
    args = parser.parse_args()
    settings = load_settings(llm_provider=args.provider, llm_url=args.url,
                              llm_model=args.model, templates=False, llm_timeout=args.timeout,
                              llm_compact=args.compact)
    snapshot = telemetry()
    with running_daemon(user_mode=True) as daemon:
        work = daemon.base / "work"
        work.mkdir()
        record = failed_record(work, daemon)
    print(f"plan {record.plan_id}: {record.status}; steps " + ", ".join(
        f"{s.step_id} exit {s.exit_code}" for s in record.steps))
    provider = make_provider(settings)
    if args.max_tokens:
        provider = Counting(provider, args.max_tokens)
    planner = Planner(settings, provider=provider)
    outcome = PlanOutcome(result=ValidationResult(ok=True, errors=[], warnings=[], plan=None),
                          plan=record.annotated.plan, trace_id="bench")
    outcome.user_message = prompt.user_message(REQUEST, mode="one-shot", telemetry=snapshot)
    began = time.monotonic()
    evaluation = evaluate_finished(planner, outcome, record)
    print(f"\nevaluation ({time.monotonic() - began:.1f} s): source {evaluation.source}, "
          f"goals_met {evaluation.goals_met}, error {evaluation.error_code}")
    print(json.dumps(evaluation.to_dict(), indent=1)[:1500])
    began = time.monotonic()
    try:
        fixed = planner.plan(REQUEST, telemetry=snapshot, use_templates=False,
                             continuation=fix_continuation(record, evaluation))
        verdict = f"valid plan: {fixed.plan is not None}, model calls {fixed.model_calls}"
        body = fixed.plan.model_dump(mode="json") if fixed.plan else None
    except AnnaError as exc:
        verdict, body = f"{exc.code}: {exc.message}", exc.detail.get("findings")
    print(f"\nfix ({time.monotonic() - began:.1f} s; never run): {verdict}")
    print(json.dumps(body, indent=1)[:1500])
    planner.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
