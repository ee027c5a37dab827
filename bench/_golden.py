"""The golden tasks: loading, telemetry fixtures, acceptance predicates and scoring.

Used by bench/golden.py; the data lives in bench/golden/ (tasks.json, telemetry.json,
replies/*.jsonl). Nothing here talks to a model or executes anything: a task is scored on
the *plan* the planner returned, never on running it.
"""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _telemetry import telemetry as base_telemetry

from anna_common.findings import AnnotatedPlan
from anna_common.plan import RiskLevel
from anna_common.telemetry import FailedUnit, PackageInfo, Telemetry

GOLDEN = Path(__file__).resolve().parent / "golden"
"""Where tasks.json, telemetry.json and the recorded replies live."""
FIXTURE_PACKAGES = 300
"""Packages in the base snapshot: realistic, and small enough to keep prompts short."""


@dataclass(frozen=True)
class Task:
    """One golden request and what an acceptable plan looks like."""

    id: str
    area: str
    request: str
    telemetry: str
    steps: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    mentions: tuple[str, ...] = ()
    never: tuple[str, ...] = ()
    max_tier: RiskLevel | None = None
    refuse: bool = False
    reference: Any = None
    reference_notes: str = ""


def load_tasks(path: Path | None = None) -> list[Task]:
    """The tasks of ``tasks.json`` (the file-wide ``never_default`` added to each)."""
    data = json.loads((path or GOLDEN / "tasks.json").read_text(encoding="utf-8"))
    default_never = tuple(data.get("never_default", ()))
    tasks = []
    for raw in data["tasks"]:
        tier = raw.get("max_tier")
        tasks.append(Task(
            id=raw["id"], area=raw["area"], request=raw["request"], telemetry=raw["telemetry"],
            steps=tuple(raw.get("steps", ())), commands=tuple(raw.get("commands", ())),
            mentions=tuple(raw.get("mentions", ())),
            never=default_never + tuple(raw.get("never", ())),
            max_tier=RiskLevel(tier) if tier else None, refuse=bool(raw.get("refuse")),
            reference=raw.get("reference"), reference_notes=raw.get("reference_notes", "")))
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate task ids in tasks.json")
    return tasks


# ------------------------------------------------------------------ telemetry fixtures

def _set(node: Any, dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def fixture(name: str, fixtures: dict[str, Any] | None = None) -> Telemetry:
    """The telemetry snapshot ``name`` of telemetry.json, built on the bench base snapshot."""
    table = fixtures if fixtures is not None else json.loads(
        (GOLDEN / "telemetry.json").read_text(encoding="utf-8"))
    spec = table[name]
    data = base_telemetry(packages=FIXTURE_PACKAGES).model_dump(mode="json")
    for dotted, value in spec.get("set", {}).items():
        _set(data, dotted, value)
    packages = [p for p in data["packages"]["packages"]
                if p["name"] not in set(spec.get("remove", ()))]
    known = {p["name"] for p in packages}
    packages += [PackageInfo(name=n, version="1.0-1", explicit=True).model_dump(mode="json")
                 for n in spec.get("add", ()) if n not in known]
    data["packages"]["packages"] = sorted(packages, key=lambda p: p["name"])
    data["packages"]["count"] = len(packages)
    if "failed" in spec:
        data["services"]["failed"] = [
            FailedUnit(name=n, description=d, load="loaded", active="failed",
                       sub="failed").model_dump(mode="json") for n, d in spec["failed"]]
    return Telemetry.model_validate(data)


# ------------------------------------------------------------------ predicates

def _commands(plan: AnnotatedPlan, *, steps: bool = True, checks: bool = True,
              rollback: bool = False) -> list[str]:
    out = [s.command for s in plan.steps] if steps else []
    out += [c.command for c in plan.checks] if checks else []
    out += [r.command for r in plan.rollback] if rollback else []
    return out


def _text(plan: AnnotatedPlan) -> str:
    body = plan.plan
    return "\n".join([body.analysis, *body.goals, body.notes_for_user,
                      *_commands(plan, rollback=True)])


def refused(plan: AnnotatedPlan) -> bool:
    """Anna banned the plan, or the model declined (no step above INFO)."""
    return plan.banned or not any(s.final_risk > RiskLevel.INFO for s in plan.steps)


def failures(task: Task, plan: AnnotatedPlan, ok: bool) -> list[str]:
    """Why ``plan`` does not answer ``task`` (empty: accepted)."""
    if task.refuse:
        return [] if refused(plan) else ["not refused"]
    why = [] if ok else ["banned" if plan.banned else "invalid"]
    steps, everything = _commands(plan, checks=False), _commands(plan)
    why += [f"no step matches {p!r}" for p in task.steps
            if not any(re.search(p, c) for c in steps)]
    why += [f"no command matches {p!r}" for p in task.commands
            if not any(re.search(p, c) for c in everything)]
    text = _text(plan)
    why += [f"does not mention {p!r}" for p in task.mentions if not re.search(p, text)]
    every = _commands(plan, rollback=True)
    why += [f"contains {p!r}" for p in task.never if any(re.search(p, c) for c in every)]
    if task.max_tier is not None and plan.final_risk > task.max_tier:
        why.append(f"tier {plan.final_risk} above {task.max_tier}")
    return why


# ------------------------------------------------------------------ reference answers

def reference_reply(task: Task) -> str:
    """A correct plan for ``task`` as a model would send it (from its ``reference``)."""
    steps = [] if task.reference == "refuse" else list(task.reference or [])
    refuse = task.reference == "refuse"
    plan = {
        "analysis": f"Reference answer for: {task.request}",
        "goals": [("Decline: " if refuse else "") + task.request],
        "necessary_checks": [],
        "command_plan": [{"id": f"s{i}", "description": f"Step {i}", "command": command,
                          "risk_level": risk, "rollback_id": None,
                          "requires_confirmation": risk != "INFO"}
                         for i, (command, risk) in enumerate(steps, start=1)],
        "rollback_plan": [],
        "notes_for_user": ("I will not do this: it could destroy data or weaken the "
                           "system's security." if refuse else
                           task.reference_notes or "Reference plan."),
        "meta": {"detection_results": {"de": None, "wm": None, "wallpaper_backends": [],
                                       "display_protocol": None},
                 "template_used": None, "llm_version": "anna_runtime_v3"},
    }
    return json.dumps(plan)


# ------------------------------------------------------------------ scores

@dataclass
class Score:
    """One task's result."""

    task: Task
    valid: bool = False
    accepted: bool = False
    refused: bool = False
    code: str | None = None
    why: list[str] = field(default_factory=list)
    latency_s: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    calls: int = 0
    repairs: int = 0
    cached_calls: int = 0
    closed: int = 0
    """Replies that closed (not cut at the token cap)."""
    form: str = ""
    """The request form of the first call (``answer``, ``package``, ``plan``, ...)."""
    form_why: str = ""
    """Why the planner chose that form (the model's profile or a pin; issue 39.2)."""


def summary(scores: list[Score]) -> dict[str, Any]:
    """The table's bottom line."""
    refuse = [s for s in scores if s.task.refuse]
    latencies = [s.latency_s for s in scores]
    return {
        "tasks": len(scores),
        "valid": sum(s.valid for s in scores),
        "accepted": sum(s.accepted for s in scores),
        "must_refuse": len(refuse),
        "refused_correctly": sum(s.refused for s in refuse),
        "median_latency_s": round(statistics.median(latencies), 3) if latencies else 0.0,
        "longest_latency_s": round(max(latencies), 3) if latencies else 0.0,
        "tokens_in": sum(s.tokens_in for s in scores),
        "tokens_out": sum(s.tokens_out for s in scores),
        "model_calls": sum(s.calls for s in scores),
        "repairs": sum(s.repairs for s in scores),
        "prefix_cache_hits": sum(s.cached_calls for s in scores),
        "closed_replies": sum(s.closed for s in scores),
        "seconds_per_reply": round(sum(s.latency_s for s in scores)
                                   / max(1, sum(s.calls for s in scores)), 3),
        "forms": dict(sorted(_forms(scores).items())),
        "codes": dict(sorted(_codes(scores).items())),
    }


def _forms(scores: list[Score]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for s in scores:
        counts[s.form or "-"] = counts.get(s.form or "-", 0) + 1
    return counts


def _codes(scores: list[Score]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for s in scores:
        if s.code:
            counts[s.code] = counts.get(s.code, 0) + 1
    return counts


def table(scores: list[Score], *, title: str) -> str:
    """The per-task table and the summary, as printed."""
    lines = [title, f"{'task':24} {'area':13} {'form':9} {'valid':5} {'acc':4} {'closed':>6} "
                    f"{'latency':>8} {'tok in/out':>12}  why"]
    for s in scores:
        why = s.code or "; ".join(s.why)
        lines.append(f"{s.task.id[:24]:24} {s.task.area[:13]:13} {(s.form or '-')[:9]:9} "
                     f"{_yes(s.valid):5} {_yes(s.accepted):4} {f'{s.closed}/{s.calls}':>6} "
                     f"{s.latency_s:7.2f}s {f'{s.tokens_in}/{s.tokens_out}':>12}  {why[:60]}")
    total = summary(scores)
    n = total["tasks"]
    lines += ["", f"valid plans              {total['valid']}/{n}",
              f"accepted                 {total['accepted']}/{n}",
              f"refused correctly        {total['refused_correctly']}/{total['must_refuse']}",
              f"replies closed           {total['closed_replies']}/{total['model_calls']}",
              f"median / longest latency {total['median_latency_s']:.2f} s / "
              f"{total['longest_latency_s']:.2f} s",
              f"time per reply           {total['seconds_per_reply']:.2f} s",
              f"forms used               {total['forms']}",
              f"tokens in / out          {total['tokens_in']} / {total['tokens_out']}",
              f"model calls (repairs)    {total['model_calls']} ({total['repairs']})",
              f"prefix-cache hits        {total['prefix_cache_hits']}/{total['model_calls']}",
              f"coded errors             {total['codes'] or 'none'}", "", "forms chosen and why:"]
    lines += [f"  {s.task.id[:24]:24} {s.form_why or '-'}" for s in scores]
    return "\n".join(lines)


def _yes(flag: bool) -> str:
    return "yes" if flag else "-"
