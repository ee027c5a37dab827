"""The model's evaluation checked against the journal record it evaluated.

The daemon's journal is the truth about what ran, as the telemetry is about the
machine (:mod:`annactl.planning.facts`). A small model evaluating a plan that ran
and was rolled back may still write "the plan was not executed" or "all steps
succeeded". Claims in the evaluation's summary and per-goal reasons are read with
narrow patterns, clause by clause, and compared with the record:

* that steps (or a named step) did not run, when they ran;
* that steps (or a named step, or the plan) succeeded, when they failed; and, for a plan
  that failed or was rolled back, any unqualified claim that the work is done or its
  result in place ("Done!", "the file has been copied", "no problems were encountered");
* an exit code, when the step named (or, with none named, any step) had another;
* that changes were rolled back when nothing was undone, or were not when they were.

A clause that names step ids (``copy``, ``s2``, ``step 2``) is about those steps; one
that names none is about the plan. A claim Anna cannot read is ignored, never flagged.
Every string here is untrusted model text: data, rendered inert.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from anna_common.protocol.models import PlanRecord, StepRecord


class _Reason(Protocol):
    @property
    def why(self) -> str: ...


class Verdicts(Protocol):
    """What is read of an evaluation (the model's ``Evaluation`` or Anna's own)."""

    @property
    def summary(self) -> str: ...

    @property
    def goals(self) -> Sequence[_Reason]: ...

MAX_CLAIMS = 8
"""Contradictions reported per evaluation at most."""

_CLAUSES = re.compile(r"[.;!?\n]+|,\s+|\s+(?:but|while|whereas|although|however|and then|so)\s+",
                      re.IGNORECASE)
_NEGATION = re.compile(r"(?:\b(?:not|never|no|nothing|none|neither|nor|failed to|unable to|"
                       r"cannot)\b|n't\b)\W*(?:\w+\W+){0,2}$", re.IGNORECASE)
_NOT_RUN = re.compile(
    r"\b(?:(?:was|were|has|have|had|is|are)(?:\s+not|n't)\s+(?:been\s+)?(?:run|executed|"
    r"attempted|carried out)|(?:did|does|do)\s*(?:not|n't)\s+(?:run|execute|start)|"
    r"not\s+(?:yet\s+)?executed|never\s+(?:ran|run|executed|started)|nothing\s+(?:was\s+)?"
    r"(?:ran|run|executed)|no\s+steps?\s+(?:were\s+|was\s+)?(?:run|ran|executed))\b"
    r"(?!\s+(?:successfully|correctly|properly|as expected|completely|fully|cleanly))",
    re.IGNORECASE)
_SUCCEEDED = re.compile(r"\b(?:succeeded|successful(?:ly)?|worked|went well|"
                        r"without (?:any )?errors?|exited (?:with )?(?:code |status )?0)\b",
                        re.IGNORECASE)
_WHOLE = re.compile(r"\b(?:all|every|each|both)\b[^.]*\bsteps?\b|\bthe\s+(?:steps|commands)\b|"
                    r"\b(?:the|this|your)\s+"
                    r"(?:plan|change|changes|operation|task|update|request)\b", re.IGNORECASE)
_DONE = re.compile(
    r"\b(?:(?:has|have|had)\s+(?:now\s+)?(?:been\s+)?(?:successfully\s+)?(\w+(?:ed|en|t))|"
    r"(?:was|were|is|are)\s+(?:now\s+)?(?:successfully\s+)?(\w+(?:ed|en))|"
    r"(?:is|are)\s+now\b|now\s+(?:contains?|has|holds|points|uses|runs|shows)|"
    r"done|complete[ds]?|finished|applied|achieved|fulfilled|accomplished|in place|set up|"
    r"took effect|went\s+(?:fine|well|smoothly)|all good|success|worked|"
    r"(?:no|without)\s+(?:any\s+)?(?:problems?|issues?|errors?)(?:\s+\w+){0,3}|"
    r"I\s+(?:have\s+)?(\w+ed))\b", re.IGNORECASE)
"""A claim that the work is done or its result is in place ("the file has been copied",
"everything is set up", "no problems were encountered")."""
_FAILURE = re.compile(r"\b(?:fail\w*|errors?|unsuccessful\w*|could\s*not|couldn't|cannot|can't|"
                      r"abort\w*|refus\w*|interrupt\w*|cancel\w*|missing|exception|partial\w*|"
                      r"tried|attempt\w*)\b", re.IGNORECASE)
_NEUTRAL = frozenset({"executed", "run", "attempted", "started", "tried", "launched", "called",
                      "invoked", "asked", "requested", "planned", "proposed", "expected",
                      "rolled", "undone", "reverted", "restored", "skipped", "stopped",
                      "given", "shown", "written", "used", "needed", "meant", "supposed"})
"""Past participles that say something was tried or undone, not that it is done."""
_EXIT = re.compile(r"\bexit(?:ed)?(?:\s+(?:with|code|status|value|a|an|of|was|is))*\s*[=:]?\s*"
                   r"(-?\d{1,3})\b", re.IGNORECASE)
_ROLLED = re.compile(r"\b(?:rolled back|rollback (?:ran|succeeded|restored)|undone|reverted|"
                     r"restored)\b", re.IGNORECASE)
_STEP_NO = re.compile(r"\bstep\s+(?:#\s*)?(\d{1,2})\b|\b(first|second|third|fourth|fifth|last)\s+"
                      r"(?:step|command)\b", re.IGNORECASE)
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}


@dataclass(frozen=True)
class RecordContradiction:
    """One claim of the model's evaluation that the journal record contradicts."""

    fact: str
    """``not_run``, ``succeeded``, ``exit_code``, ``rolled_back``."""
    claim: str
    """The clause that makes the claim (untrusted, short)."""
    journal: str
    """What the journal says."""
    where: str
    """``summary`` or ``goals[N].why``."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``--json`` and history)."""
        return asdict(self)


def _ran(step: StepRecord) -> bool:
    return step.exit_code is not None


def _failed(step: StepRecord) -> bool:
    return step.exit_code not in (None, 0) or str(step.status) in {"failed", "verify_failed",
                                                                    "undo_failed"}


def _describe(step: StepRecord) -> str:
    if not _ran(step):
        return f"step {step.step_id} did not run ({step.status})"
    return f"step {step.step_id} ran, exit code {step.exit_code} ({step.status})"


_WORDS = frozenset({"is", "to", "in", "on", "it", "of", "at", "as", "an", "or", "be", "do", "no",
                    "so", "if", "by", "up", "the", "and", "was", "not", "all", "run", "ran",
                    "step", "steps", "plan", "exit", "code"})
"""Step ids that are too common as words to say which step a clause is about."""


def _named(clause: str, steps: list[StepRecord]) -> list[StepRecord]:
    """The steps a clause names by id, or as ``step N`` (1-based)."""
    found = [s for s in steps if len(s.step_id) > 1 and s.step_id.lower() not in _WORDS
             and re.search(rf"(?<![\w-]){re.escape(s.step_id)}(?![\w-])", clause,
                           re.IGNORECASE)]
    for match in _STEP_NO.finditer(clause):
        word = (match.group(2) or "").lower()
        number = len(steps) if word == "last" else _ORDINALS.get(word) or int(match.group(1) or 0)
        index = number - 1
        if 0 <= index < len(steps) and steps[index] not in found:
            found.append(steps[index])
    return found


def _affirmed(clause: str, match: re.Match[str]) -> bool:
    """Whether a match is stated, not negated (``did not succeed``, ``never worked``)."""
    return not _NEGATION.search(clause[:match.start()])


def _short(clause: str) -> str:
    clause = " ".join(clause.split())
    return clause if len(clause) <= 160 else clause[:159] + "…"


def _clause_claims(clause: str, record: PlanRecord) -> Iterator[tuple[str, str]]:
    """(fact, what the journal says) for each claim in one clause the record contradicts."""
    steps = list(record.steps)
    named = _named(clause, steps)
    about = named or steps
    not_run = _NOT_RUN.search(clause)
    if not_run:
        # unnamed, only a claim about the whole plan counts ("the second did not run" may
        # be true of a step Anna cannot tell)
        whole = _WHOLE.search(clause) or not_run.group().lower().startswith(("nothing", "no "))
        ran = [s for s in about if _ran(s)]
        if ran and (named or whole):
            yield "not_run", "; ".join(_describe(s) for s in ran[:3])
        return
    success = _SUCCEEDED.search(clause)
    said = success is not None and _affirmed(clause, success)
    if (said and (named or _WHOLE.search(clause))) or (named and _claims_done(clause)):
        failed = [s for s in about if _failed(s)]
        if failed:
            yield "succeeded", "; ".join(_describe(s) for s in failed[:3])
        elif not named and str(record.status) != "succeeded":
            yield "succeeded", f"the plan ended {record.status}"
    elif not named and str(record.status) != "succeeded" and _claims_done(clause):
        # "Done!", "the file is now in place": the request's result claimed, unqualified,
        # for a plan that failed or was undone
        yield "succeeded", f"the plan ended {record.status}: " + (
            "its changes were undone" if record.undo else _first_failure(steps))
    for match in _EXIT.finditer(clause):
        code = int(match.group(1))
        codes = {s.exit_code for s in about if _ran(s)}
        if codes and code not in codes:
            yield "exit_code", "; ".join(_describe(s) for s in about if _ran(s))[:300]
            break
    rolled = _ROLLED.search(clause)
    if rolled and not named:
        undone = [u for u in record.undo if u.ok]
        if _affirmed(clause, rolled) and not undone:
            yield "rolled_back", f"nothing was undone (the plan ended {record.status})"
        elif not _affirmed(clause, rolled) and undone and str(record.status) == "rolled_back":
            yield "rolled_back", (f"{len(undone)} undo action(s) ran; the plan ended "
                                  f"{record.status}")


def _claims_done(clause: str) -> bool:
    """The clause says the work is done or in place, unqualified by a failure or a negation
    (``completed with errors`` and ``was not applied`` are honest)."""
    done = _DONE.search(clause)
    if done is None or not _affirmed(clause, done):
        return False
    verb = next((g for g in done.groups() if g), "").lower()
    if verb in _NEUTRAL or _ROLLED.search(clause):
        return False
    rest = re.sub(r"\b(?:no|without)\s+(?:any\s+)?(?:problems?|issues?|errors?)\b", "", clause,
                  flags=re.IGNORECASE)
    return _FAILURE.search(rest) is None


def _first_failure(steps: list[StepRecord]) -> str:
    failed = [s for s in steps if _failed(s)]
    return _describe(failed[0]) if failed else "not every step finished"


def check_evaluation(evaluation: Verdicts, record: PlanRecord) -> list[RecordContradiction]:
    """The claims of an evaluation's summary and reasons that the record contradicts."""
    texts = [("summary", evaluation.summary)] + [
        (f"goals[{i}].why", g.why) for i, g in enumerate(evaluation.goals)]
    found: list[RecordContradiction] = []
    seen: set[tuple[str, str]] = set()
    for where, text in texts:
        for clause in _CLAUSES.split(text or ""):
            if not clause.strip():
                continue
            for fact, journal in _clause_claims(clause, record):
                if (fact, journal) in seen:
                    continue
                seen.add((fact, journal))
                found.append(RecordContradiction(fact, _short(clause), journal, where))
                if len(found) >= MAX_CLAIMS:
                    return found
    return found
