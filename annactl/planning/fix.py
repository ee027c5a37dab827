"""Fix it: after a failed plan the model proposes a NEW plan, which starts over.

When a plan did not reach its goals (it failed, was rolled back, failed its
verification, or the evaluation says a goal is unmet), the front ends offer
"Ask for a fix?". The model then gets the planning conversation continued — its
failed plan as its own turn, and a user turn holding the execution results
(untrusted, escaped like every other document) and the evaluation — and replies
with an ActionPlan. That reply is *not* trusted any more than the first one: it
goes through the whole planning contract (:meth:`annactl.planning.planner.Planner.plan`:
validation, one repair, grounding, necessary checks), is stored and annotated by
the daemon, and needs a fresh approval by its own tier. A fix is never run
automatically; ``--yes`` approves it only together with ``--fix`` (and never a
HIGH plan: that always needs the typed word). At most :data:`MAX_FIX_ROUNDS`
fixes per request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from anna_common.errors import UsageError
from annactl.planning.evaluate import execution_results_document, plan_json, untrusted_document

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from anna_common.protocol.models import PlanRecord
    from annactl.planning.evaluate import EvaluationOutcome
    from annactl.planning.outcome import Progress

MAX_FIX_ROUNDS = 2
"""Fix plans per request, at most."""


class PlanFlow(Protocol):
    """The part of the client's flow (:class:`annactl.commands.flow.Flow`) a fix uses: plan a
    request and store it in the daemon. (A protocol: planning sits below the commands.)"""

    def plan_text(self, request: str, *, mode: str = ..., use_templates: bool = ...,
                  on_progress: Callable[[Progress], None] | None = ...,
                  cancel: threading.Event | None = ...,
                  continuation: list[dict[str, str]] | None = ...) -> Any:
        """Plan ``request`` (continuing with ``continuation``) and return the prepared plan."""
        ...


def needs_fix(evaluation: EvaluationOutcome) -> bool:
    """The plan did not reach its goals (by Anna's record or by the evaluation)."""
    return not evaluation.goals_met


def fix_message(record: PlanRecord, evaluation: EvaluationOutcome) -> str:
    """The user turn asking for a fix: the results and the evaluation, as untrusted data."""
    from annactl.planning import prompt

    verdict = evaluation.evaluation.model_dump(mode="json")
    return prompt.fill(prompt.prompts().text("fix"), {
        "results": execution_results_document(record),
        "evaluation": untrusted_document(verdict)})


def fix_continuation(record: PlanRecord,
                     evaluation: EvaluationOutcome) -> list[dict[str, str]]:
    """The turns after the user message: the failed plan (the model's), then the fix request."""
    return [{"role": "assistant", "content": plan_json(record)},
            {"role": "user", "content": fix_message(record, evaluation)}]


@dataclass
class FixLoop:
    """The evaluate → fix rounds of one request (one per request, shared by its fixes)."""

    request: str
    """The person's original words: every fix plans this same request."""
    mode: str = "one-shot"
    """``one-shot``, ``repl`` or ``tui``."""
    planned: bool = True
    """The plan was made from the request in this session (a plan file or a stored plan
    has no request to plan again, so no fix is offered for it)."""
    rounds: int = 0
    """Fix plans asked for so far."""
    record: PlanRecord | None = None
    """The last finished plan's record."""
    evaluation: EvaluationOutcome | None = None
    """Its evaluation."""
    history: list[dict[str, Any]] = field(default_factory=list)
    """Every evaluation of this request, in order (JSON form)."""

    def finished(self, record: PlanRecord, evaluation: EvaluationOutcome) -> None:
        """Remember a finished plan and its evaluation."""
        self.record, self.evaluation = record, evaluation
        self.history.append(evaluation.to_dict())

    @property
    def stopped(self) -> bool:
        """The person stopped the last plan (Ctrl-C, Stop): it missed nothing to fix."""
        error = self.record.error if self.record is not None else None
        return error is not None and str(error.code) == "CANCELLED"

    @property
    def can_fix(self) -> bool:
        """A fix may be offered: the last plan missed its goals (not stopped on purpose)
        and rounds remain."""
        return (self.planned and self.evaluation is not None and needs_fix(self.evaluation)
                and not self.stopped and self.rounds < MAX_FIX_ROUNDS)

    def why_not(self) -> str:
        """Why no fix can be asked for now (for the REPL's ``fix`` and the TUI)."""
        if not self.planned:
            return "the plan came from a file or the journal, not from a request"
        if self.evaluation is None:
            return "no plan has finished yet"
        if self.stopped:
            return "you stopped the last plan; ask again to run it"
        if not needs_fix(self.evaluation):
            return "the last plan reached its goals"
        return f"already {MAX_FIX_ROUNDS} fixes for this request"

    def plan_fix(self, flow: PlanFlow, *,
                 on_progress: Callable[[Progress], None] | None = None,
                 cancel: threading.Event | None = None) -> Any:
        """Ask the model for a new plan; stored and annotated by the daemon, NOT approved."""
        if not self.can_fix or self.record is None or self.evaluation is None:
            raise UsageError(f"no fix to ask for: {self.why_not()}")
        self.rounds += 1
        prepared = flow.plan_text(
            self.request, mode=self.mode, use_templates=False, on_progress=on_progress,
            cancel=cancel, continuation=fix_continuation(self.record, self.evaluation))
        prepared.source = "fix"
        return prepared
