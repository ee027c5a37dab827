"""Evaluate after execute: the model judges a finished plan's results, or Anna does.

Seed 003's loop is ``planning → executing → evaluating``. When a plan finishes
(succeeded, failed and rolled back, verification failed), its journal record —
per step the exit code and output tail, the verification when present, the
undo results — goes back to the model as untrusted data inside
``<execution_results trust="untrusted">``, continuing the planning conversation
(same static system message, same user message, the plan as the assistant's
turn). The model answers with an :class:`Evaluation` in its own strict schema,
sent as the structured-output format and validated here like a plan: the first
JSON object, strict fields, and consistency with Anna's record (a plan that did
not succeed can never be reported as having met its goals). A bad reply is
``LLM_BAD_EVALUATION``.

Whatever happens with the model — none configured, unreachable, a bad reply,
Ctrl-C — the person still gets an evaluation: :func:`offline_evaluation`, Anna's
own summary from exit codes and verification. Evaluating never raises. The exchange
itself is :mod:`annactl.planning.evaluate_call`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from anna_common.errors import AnnaError, ErrorCode

if TYPE_CHECKING:
    from anna_common.protocol.models import PlanRecord
    from annactl.planning.evalclaims import RecordContradiction
    from annactl.planning.evaluation_model import Evaluation


OUTPUT_TAIL_CHARS = 800
"""Of each step's output, this many final characters go to the model."""
MAX_STEPS = 30
"""Steps (and undo actions) described to the model at most."""
LOOKALIKES = re.compile(
    "[\u02c2\u02c3\u2039\u203a\u2329\u232a\u27e8-\u27eb\u2770\u2771\u276c-\u276f"
    "\u3008-\u300b\ufe3f-\ufe42\ufe64\ufe65\uff1c\uff1e\uff40"
    "\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
"""Angle-bracket and backtick look-alikes (fullwidth ``＜``, ``‹``, ``〈`` …) and invisible
format characters: a model may read ``＜/execution_results＞`` as the closing tag."""


@dataclass(frozen=True)
class OwnVerdict:
    """One goal in Anna's own evaluation (the fields of :class:`GoalVerdict`)."""

    goal: str
    """A goal of the plan, in the plan's words."""
    met: bool
    """Whether the plan succeeded."""
    why: str
    """The evidence: exit codes, the failed step, undo results."""


@dataclass(frozen=True)
class OwnEvaluation:
    """Anna's own evaluation (no model involved): the fields of :class:`Evaluation`, without
    building its pydantic class (``apply`` of a stored plan never imports pydantic)."""

    goals_met: bool
    """True only when the plan succeeded."""
    goals: list[OwnVerdict]
    """One verdict per goal of the plan."""
    summary: str
    """One or two plain sentences for the person."""
    suggestion: str
    """What to do next ("" when nothing failed)."""

    def model_dump(self, *, mode: str = "json") -> dict[str, Any]:
        """The same JSON as :meth:`Evaluation.model_dump` gives for these values."""
        return {"goals_met": self.goals_met,
                "goals": [{"goal": g.goal, "met": g.met, "why": g.why} for g in self.goals],
                "summary": self.summary, "suggestion": self.suggestion}

    def model_copy(self, *, update: dict[str, Any] | None = None) -> OwnEvaluation:
        """A copy with some fields replaced (as :meth:`Evaluation.model_copy`)."""
        return replace(self, **(update or {}))


@dataclass
class EvaluationOutcome:
    """An evaluation as shown and stored: the model's, or Anna's own when it could not be had."""

    evaluation: Evaluation | OwnEvaluation
    """The verdict (untrusted text when ``source`` is ``model``; Anna's own is an
    :class:`OwnEvaluation`)."""
    source: Literal["model", "anna"]
    """Who wrote it."""
    status: str
    """The plan's final state (Anna's record, never the model's word)."""
    plan_id: str
    """The plan evaluated."""
    error_code: str | None = None
    """Why the model's evaluation is missing (``LLM_BAD_EVALUATION``, ``LLM_UNAVAILABLE``…)."""
    note: str = ""
    """A one-line reason for an offline evaluation."""
    findings: list[str] = field(default_factory=list)
    """What was wrong with a bad reply."""
    elapsed_s: float = 0.0
    """Time the model took."""
    contradictions: list[RecordContradiction] = field(default_factory=list)
    """Claims of the model's evaluation that the journal record contradicts
    (:mod:`annactl.planning.evalclaims`)."""

    @property
    def goals_met(self) -> bool:
        """Whether the goals were met (always False for a plan that did not succeed)."""
        return self.evaluation.goals_met and self.status == "succeeded"

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``--json`` output and history)."""
        # Anna's goals_met last: it wins over the model's (a failed plan never met them)
        return {"plan_id": self.plan_id, "status": self.status, "source": self.source,
                **self.evaluation.model_dump(mode="json"), "goals_met": self.goals_met,
                "error_code": self.error_code, "note": self.note, "findings": self.findings,
                "contradictions": [c.to_dict() for c in self.contradictions],
                "elapsed_s": round(self.elapsed_s, 4)}


class EvaluationInvalid(AnnaError):
    """The model's evaluation reply could not be used (``LLM_BAD_EVALUATION``)."""

    def __init__(self, findings: list[str]) -> None:
        super().__init__("the model's evaluation was not valid: " + "; ".join(findings[:4]),
                         code=ErrorCode.LLM_BAD_EVALUATION, detail={"findings": findings})
        self.findings = findings


# ---------------------------------------------------------------------- results document


def _tail(text: str, limit: int = OUTPUT_TAIL_CHARS) -> str:
    # the end of the output holds the error message a failed command printed last
    return text if len(text) <= limit else "…" + text[-limit:]


def _dumped(value: Any) -> Any:
    if hasattr(value, "model_dump"):  # a protocol model, or the client's view of one
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_dumped(v) for v in value]
    return value


def _verification(record: PlanRecord) -> Any:
    """The record's verification, when the daemon produced one (issue 10 adds it)."""
    found = getattr(record, "verification", None)
    steps = {s.step_id: getattr(s, "verification", None) for s in record.steps}
    steps = {k: v for k, v in steps.items() if v is not None}
    if found is None and not steps:
        return None
    return {"plan": _dumped(found), "steps": {k: _dumped(v) for k, v in steps.items()}}


WITHHELD = "[withheld from the model: this step reads secret material]"
"""What the model is told in place of the output of a step Anna judged a secret read
(issue 34: root's password hashes reached the model in the evaluation request)."""


def execution_results(record: PlanRecord) -> dict[str, Any]:
    """What happened, as data: status, per step command/exit code/output tail, undo results;
    the output of a step that reads secret material stays with the person (:data:`WITHHELD`)."""
    commands = {s.id: s.command for s in record.annotated.steps}
    secret = {s.id for s in record.annotated.steps if "SECRET_READ" in s.codes}
    data: dict[str, Any] = {
        "plan_id": record.plan_id,
        "status": str(record.status),
        "steps": [{"id": s.step_id, "command": commands.get(s.step_id, ""),
                   "status": str(s.status), "exit_code": s.exit_code,
                   "output_tail": WITHHELD if s.step_id in secret else _tail(s.output)}
                  for s in record.steps[:MAX_STEPS]],
        "undo": [{"step_id": u.step_id, "action": u.action, "target": u.target, "ok": u.ok,
                  "message": _tail(u.message, 300)} for u in record.undo[:MAX_STEPS]],
        "error": ({"code": record.error.code, "message": _tail(record.error.message, 400)}
                  if record.error is not None else None),
    }
    verification = _verification(record)
    if verification is not None:
        data["verification"] = verification
    return data


def execution_results_document(record: PlanRecord) -> str:
    """The results as the JSON text placed inside ``<execution_results trust="untrusted">``.

    Escaped like telemetry (:func:`annactl.planning.prompt.untrusted_json`): ``<``, ``>`` and
    backticks become ``\\uXXXX``, and so do their look-alikes (:data:`LOOKALIKES`), so no
    output a command printed can close the tag or open a fence. One function, so the
    packet builder can make it a context document.
    """
    return untrusted_document(execution_results(record))


def untrusted_document(value: Any) -> str:
    """Compact JSON of untrusted data with ``<``, ``>``, backticks and their look-alikes
    escaped (the execution results; the evaluation quoted in a fix request)."""
    from annactl.planning.prompt import untrusted_json

    text = untrusted_json(value)
    # they occur only inside JSON strings (the keys are Anna's), where \uXXXX is exact
    return LOOKALIKES.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# ---------------------------------------------------------------------- Anna's own summary


def _failed_step(record: PlanRecord) -> str:
    # a step that was undone afterwards keeps its exit code: that is the failure
    for step in record.steps:
        if step.exit_code not in (None, 0):
            return f"step {step.step_id} failed with exit code {step.exit_code}"
    for step in record.steps:
        if str(step.status) in {"failed", "verify_failed"}:
            return f"step {step.step_id} {step.status}"
    if record.error is not None:
        return f"{record.error.code}: {record.error.message}"
    return f"the plan ended {record.status}"


def _undo_note(record: PlanRecord) -> str:
    if not record.undo:
        return ""
    bad = sum(1 for u in record.undo if not u.ok)
    if bad:
        return f"; {bad} of {len(record.undo)} undo actions failed"
    return f"; its changes were undone ({len(record.undo)} undo actions)"


def offline_evaluation(record: PlanRecord) -> Evaluation:
    """Anna's own evaluation from exit codes, verification and undo results, as the model's
    evaluation class (:func:`own_evaluation` without building it)."""
    from annactl.planning.evaluation_model import Evaluation

    return Evaluation.model_validate(own_evaluation(record).model_dump())


def own_evaluation(record: PlanRecord) -> OwnEvaluation:
    """Anna's own evaluation from exit codes, verification and undo results."""
    succeeded = str(record.status) == "succeeded"
    ran = [s for s in record.steps if s.exit_code is not None]
    if succeeded:
        why = f"all {len(ran)} steps finished with exit code 0"
        summary = f"The plan succeeded: {why}."
    else:
        why = _failed_step(record) + _undo_note(record)
        summary = f"The plan did not succeed ({record.status}): {why}."
    goals = record.annotated.plan.goals[:12] or ["the request"]
    return OwnEvaluation(goals_met=succeeded,
                         goals=[OwnVerdict(goal=g[:300], met=succeeded, why=why[:600])
                                for g in goals],
                         summary=summary[:800], suggestion="" if succeeded else
                         "Ask for a fix: the model gets these results and proposes a new plan.")


# ---------------------------------------------------------------------- the model's evaluation


def evaluation_schema() -> dict[str, Any]:
    """The JSON Schema the evaluation reply must follow (structured output)."""
    from annactl.planning.evaluation_model import Evaluation

    return Evaluation.model_json_schema()


def parse_evaluation(text: str, record: PlanRecord) -> Evaluation:
    """Validate a reply like a plan: first JSON object, strict schema, agreement with the record.

    Raises :class:`EvaluationInvalid` (``LLM_BAD_EVALUATION``) with findings.
    """
    from pydantic import ValidationError

    from anna_common.validate import ExtractError, extract_json
    from annactl.planning.evaluation_model import Evaluation

    try:
        raw = extract_json(text)
    except ExtractError as exc:
        raise EvaluationInvalid([f"PARSE_ERROR: {exc}"]) from None
    try:
        evaluation = Evaluation.model_validate(raw)
    except ValidationError as exc:
        raise EvaluationInvalid([
            f"SCHEMA_ERROR at {'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}"
            for e in exc.errors()[:8]]) from None
    findings = []
    if evaluation.goals_met != all(g.met for g in evaluation.goals):
        findings.append("INCONSISTENT: goals_met disagrees with the goals' verdicts")
    expected = max(1, len(record.annotated.plan.goals))
    if len(evaluation.goals) > expected:
        # one verdict per goal: a small model repeats list items to fill the schema
        findings.append(f"INCONSISTENT: {len(evaluation.goals)} verdicts for the plan's "
                        f"{expected} goal(s)")
    if evaluation.goals_met and str(record.status) != "succeeded":
        # the model cannot turn Anna's failed or rolled-back record into a success
        findings.append(f"CONTRADICTS_RECORD: the plan is {record.status}, so its goals "
                        "are not met")
    if findings:
        raise EvaluationInvalid(findings)
    return evaluation


def offline(record: PlanRecord, note: str, *, code: str | None = None,
            findings: list[str] | None = None, elapsed_s: float = 0.0) -> EvaluationOutcome:
    """Anna's own evaluation, saying why the model's is missing."""
    return EvaluationOutcome(own_evaluation(record), source="anna",
                             status=str(record.status), plan_id=record.plan_id,
                             error_code=code, note=note, findings=list(findings or []),
                             elapsed_s=elapsed_s)


def plan_json(record: PlanRecord) -> str:
    """The plan as the model's earlier turn (canonical JSON of what was approved)."""
    return json.dumps(record.annotated.plan.model_dump(mode="json"), ensure_ascii=False,
                      separators=(",", ":"), sort_keys=True)
