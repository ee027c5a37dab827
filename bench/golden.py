"""Score any model on the golden Arch administration tasks (issue 11 item 8).

    .venv/bin/python bench/golden.py --url http://127.0.0.1:11434 --model qwen2.5:7b-instruct
    .venv/bin/python bench/golden.py --provider openai --url http://127.0.0.1:8080/v1 \\
        --model my-model --record bench/golden/replies/my-model.jsonl
    .venv/bin/python bench/golden.py --replay bench/golden/replies/reference.jsonl

Each task of bench/golden/tasks.json goes through Anna's real planner (templates off, no
daemon: no check runs and nothing is ever executed) with its telemetry fixture, and the
final plan is scored against the task's predicates (docs/golden.md). The table shows, per
task and in total: valid plans, accepted plans, refused-correctly, median latency, tokens.

``--record FILE`` keeps every reply, and every call that ended in a coded error instead (a
time budget spent, a server error: ``{"error": {"code", "message", "detail", "latency_s"}}``);
``--replay FILE`` answers from such a file without any server, by task id and call number
(not by prompt bytes, so a prompt edit does not invalidate a recording; it replays what the
model said then), raising a recorded error again, so a task that ended at the budget replays
as ``LLM_TIMEOUT``, not as a missing reply. CI replays committed recordings
(tests/planner/test_golden.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _golden import (
    Score,
    Task,
    failures,
    fixture,
    load_tasks,
    reference_reply,
    refused,
    summary,
    table,
)

from anna_common.errors import AnnaError, ErrorCode
from annactl.core.config import load_settings
from annactl.planning.llm import make_provider
from annactl.planning.llm.base import (
    ChatRequest,
    ChatResult,
    EventSink,
    Provider,
    TextCallback,
    TokenCallback,
    no_events,
)
from annactl.planning.llm.errors import llm_error
from annactl.planning.planner import Planner


class Golden:
    """A provider wrapper that knows the current task: records, replays, caps, counts."""

    name = "golden"

    def __init__(self, inner: Provider | None, *, model: str, max_tokens: int = 0,
                 replay: Path | None = None, record: Path | None = None) -> None:
        self.inner = inner
        self.model = inner.model if inner is not None else model
        if inner is not None:
            self.name = inner.name
        self.max_tokens = max_tokens
        self.task = ""
        self.calls: list[ChatResult] = []
        self.forms: list[str] = []
        self.failed_s = 0.0
        """Seconds the current task's failed calls took (recorded, when replaying)."""
        self.recorded: dict[tuple[str, int], dict[str, Any]] = {}
        self.ended: dict[str, dict[str, Any]] = {}
        """Per task: how it ended live (its coded error and wall time), when recorded."""
        if replay is not None:
            for line in replay.read_text(encoding="utf-8").splitlines():
                entry = json.loads(line)
                if "end" in entry:
                    self.ended[entry["task"]] = entry["end"]
                elif "task" in entry:
                    self.recorded[(entry["task"], int(entry["call"]))] = entry
        self.record = record.open("a", encoding="utf-8") if record is not None else None

    def start(self, task: str) -> None:
        """The next calls belong to ``task``."""
        self.task = task
        self.calls = []
        self.forms = []
        self.failed_s = 0.0

    def _keep(self, call: int, purpose: str, outcome: dict[str, Any]) -> None:
        if self.record is not None:
            self.record.write(json.dumps({"task": self.task, "call": call, "purpose": purpose,
                                          **outcome}, default=str) + "\n")
            self.record.flush()

    def _replayed(self, call: int) -> ChatResult:
        stored = self.recorded.get((self.task, call))
        end = self.ended.get(self.task) or {}
        if stored is None and end.get("code"):
            # the planner itself stopped before this call live (its deadline had passed)
            raise llm_error(ErrorCode(end["code"]), "as recorded: the run ended here")
        if stored is None:
            raise llm_error(ErrorCode.LLM_REPLAY_MISS,
                            f"no recorded reply for task {self.task} call {call}")
        if "error" in stored:
            error = stored["error"]
            self.failed_s += float(error.get("latency_s") or 0.0)
            raise llm_error(ErrorCode(error["code"]), str(error.get("message", "")),
                            **dict(error.get("detail") or {}))
        result = ChatResult.from_dict(stored["result"])
        result.source = "replay"
        return result

    def chat(self, request: ChatRequest, *, on_tokens: TokenCallback | None = None,
             cancel: threading.Event | None = None, events: EventSink = no_events,
             on_text: TextCallback | None = None) -> ChatResult:
        """Answer from the recording, or ask the real provider (and record)."""
        call = len(self.forms)  # attempts: a failed call has its number too
        self.forms.append(request.form)
        if self.inner is None:
            result = self._replayed(call)
        else:
            if self.max_tokens:
                request = dataclasses.replace(request, options={
                    **request.options, "max_tokens": self.max_tokens})
            began = time.monotonic()
            try:
                result = self.inner.chat(request, on_tokens=on_tokens, cancel=cancel,
                                         events=events, on_text=on_text)
            except AnnaError as exc:  # kept, so the replay ends the same way
                self._keep(call, request.purpose, {"error": {
                    "code": str(exc.code), "message": exc.message, "detail": exc.detail,
                    "latency_s": round(time.monotonic() - began, 3)}})
                raise
            self._keep(call, request.purpose, {"result": result.to_dict()})
        self.calls.append(result)
        return result

    def end(self, code: str, seconds: float) -> None:
        """Record how the current task ended: its coded error (or none) and wall time."""
        if self.record is not None:
            self.record.write(json.dumps({"task": self.task, "end": {
                "code": code, "latency_s": round(seconds, 3)}}) + "\n")
            self.record.flush()

    def close(self) -> None:
        """Close the recording and the real provider."""
        if self.record is not None:
            self.record.close()
        if self.inner is not None:
            self.inner.close()


def run_task(planner: Planner, golden: Golden, task: Task, *, live: bool) -> Score:
    """Plan one task and score the plan."""
    snapshot = fixture(task.telemetry)
    golden.start(task.id)
    score = Score(task=task)
    started = time.perf_counter()
    try:
        outcome = planner.plan(task.request, telemetry=snapshot, use_templates=False)
    except AnnaError as exc:
        score.code = str(exc.code)
        found = exc.detail.get("findings") if isinstance(exc.detail, dict) else None
        score.why = sorted({str(f.get("code")) for f in found or [] if isinstance(f, dict)})
        # a model that declined (a valid plan with no step, twice) refused the request
        score.refused = exc.code == ErrorCode.LLM_OFF_REQUEST
        score.accepted = task.refuse and score.refused
        choice = exc.detail.get("form_choice") if isinstance(exc.detail, dict) else None
        score.form_why = str((choice or {}).get("why") or "")
    else:
        plan = outcome.result.plan
        score.repairs = outcome.repairs
        score.form_why = outcome.form_why
        if plan is not None:
            score.valid = True
            score.refused = refused(plan)
            score.why = failures(task, plan, outcome.result.ok)
            score.accepted = not score.why
        else:
            score.why = ["no plan"]
    elapsed = time.perf_counter() - started
    calls = golden.calls
    score.calls = max(len(calls), len(golden.forms))  # calls that failed count too
    score.repairs = score.repairs or max(0, len(calls) - 1)
    score.tokens_in = sum(r.prompt_tokens for r in calls)
    score.tokens_out = sum(r.completion_tokens for r in calls)
    score.cached_calls = sum(1 for r in calls if r.cached_tokens > 0)
    recorded_s = (golden.ended.get(task.id) or {}).get("latency_s")
    if live:
        score.latency_s = elapsed
        golden.end(score.code or "", elapsed)
    elif recorded_s is not None:
        score.latency_s = float(recorded_s)
    else:
        score.latency_s = sum(r.latency_s for r in calls) + golden.failed_s
    score.closed = sum(1 for r in calls if r.finish_reason != "length")
    score.form = golden.forms[0] if golden.forms else ""
    return score


def header(golden: Golden, args: argparse.Namespace, source: str) -> str:
    """The first line of a recording."""
    return json.dumps({"golden": 1, "model": golden.model, "source": source,
                       "ids": args.ids, "compact": args.compact, "max_tokens": args.max_tokens,
                       "forms": args.forms,
                       "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})


def recorded_forms(path: Path) -> str:
    """The forms setting a recording was made with (its header; recordings made before the
    per-model choice of issue 39 were asked in the forms the request's words chose)."""
    with path.open(encoding="utf-8") as handle:
        first = json.loads(handle.readline() or "{}")
    forms = first.get("forms") if isinstance(first, dict) else None
    return forms if forms in ("auto", "contract", "small") else "small"


def write_reference(path: Path) -> None:
    """The reference answers as a recording (bench/golden/replies/reference.jsonl)."""
    lines = [json.dumps({"golden": 1, "model": "reference", "source": "tasks.json"})]
    for task in load_tasks():
        result = ChatResult(text=reference_reply(task), model="reference",
                            finish_reason="stop", prompt_tokens=0,
                            completion_tokens=0, latency_s=0.0)
        # a refusal is an answer without steps, which the off-request check sends to repair
        for call in range(2 if task.refuse else 1):
            lines.append(json.dumps({"task": task.id, "call": call,
                                     "purpose": "repair" if call else "plan",
                                     "result": result.to_dict()}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description="Score a model on Anna's golden tasks.")
    parser.add_argument("--url", help="model server base URL (Ollama, or OpenAI-style /v1)")
    parser.add_argument("--model", default="", help="model name on the server")
    parser.add_argument("--provider", choices=("ollama", "openai"), default="ollama")
    parser.add_argument("--replay", type=Path, help="answer from a recording, no server")
    parser.add_argument("--record", type=Path, help="append every reply to this JSONL file")
    parser.add_argument("--ids", choices=("positional", "free"), default="positional",
                        help="who writes plan ids (ANNA_LLM_IDS)")
    parser.add_argument("--compact", action="store_true",
                        help="the compact plan form for small models (ANNA_LLM_COMPACT)")
    parser.add_argument("--max-tokens", type=int, default=0,
                        help="output token cap per call (0: Anna's default, 2048)")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds of model time per task (ANNA_LLM_BUDGET; default the "
                             "product's 60 s; 0: none)")
    parser.add_argument("--forms", choices=("auto", "contract", "small"), default=None,
                        help="ANNA_LLM_FORMS: learned per model (auto, the product's "
                             "default), or pinned; a replay uses its recording's (small "
                             "for recordings made before issue 39)")
    parser.add_argument("--only", nargs="*", default=[], help="task ids or areas to run")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--write-reference", type=Path,
                        help="write the tasks' reference answers as a recording and exit")
    args = parser.parse_args(argv)
    if args.write_reference is not None:
        return args
    if (args.url is None) == (args.replay is None):
        parser.error("give exactly one of --url and --replay")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the tasks and print the table."""
    args = parse_args(argv)
    if args.write_reference is not None:
        write_reference(args.write_reference)
        return 0
    tasks = [t for t in load_tasks() if not args.only or t.id in args.only
             or t.area in args.only]
    state = Path(tempfile.mkdtemp(prefix="anna-golden-"))
    if args.forms is None:
        args.forms = recorded_forms(args.replay) if args.replay else "auto"
    settings = load_settings(llm_provider=args.provider, llm_url=args.url or "",
                              llm_model=args.model or "replay", llm_timeout=args.timeout,
                              state_dir=state, llm_ids=args.ids, templates=False,
                              llm_compact=args.compact, llm_forms=args.forms,
                              **({} if args.budget is None else {"llm_budget": args.budget}))
    inner = None if args.replay else make_provider(settings)
    golden = Golden(inner, model=args.model or args.replay.stem if args.replay else args.model,
                    max_tokens=args.max_tokens, replay=args.replay, record=args.record)
    if args.replay:  # a recording of a subset (--only) scores that subset
        tasks = [t for t in tasks if (t.id, 0) in golden.recorded]
    if golden.record is not None:
        golden.record.write(header(golden, args, args.url or "") + "\n")
    planner = Planner(settings, daemon=None, provider=golden)
    began = time.perf_counter()
    try:
        scores = [run_task(planner, golden, t, live=inner is not None) for t in tasks]
    finally:
        planner.close()
        shutil.rmtree(state, ignore_errors=True)  # the run's own state: nothing left in /tmp
    where = f"replay of {args.replay}" if args.replay else f"{args.provider} at {args.url}"
    title = (f"golden tasks: model {golden.model} ({where}), ids {args.ids}"
             f"{', compact' if args.compact else ''}, "
             f"{len(tasks)} tasks, run in {time.perf_counter() - began:.2f} s")
    if args.json:
        print(json.dumps({"title": title, **summary(scores), "per_task": [
            {"id": s.task.id, "valid": s.valid, "accepted": s.accepted, "code": s.code,
             "why": s.why, "form": s.form, "form_why": s.form_why, "closed": s.closed,
             "calls": s.calls, "latency_s": round(s.latency_s, 3)}
            for s in scores]}, indent=1))
    else:
        print(table(scores, title=title))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
