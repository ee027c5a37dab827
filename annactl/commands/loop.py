"""After a plan ran: evaluate it, show and store the evaluation, decide on a fix.

Shared by ``annactl ask`` and the REPL (the TUI does the same with its own
screens). The result is shown first; evaluating never blocks or breaks it (Ctrl-C
skips to Anna's own summary). The fix itself is run by
:func:`annactl.commands.ask.run_fix`, through ``run_prepared`` like any plan:
shown, checked, approved by its tier. ``--yes`` covers a fix only when ``--fix``
was given too, and never a HIGH one (``allow_high`` is not passed on: the word is
always typed).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

from anna_common.errors import AnnaError

if TYPE_CHECKING:
    from anna_common.protocol.models import PlanRecord
    from annactl.commands.flow import Flow
    from annactl.commands.prepared import Prepared
    from annactl.planning.evaluate import EvaluationOutcome
    from annactl.planning.fix import FixLoop
    from annactl.ui.console import Consoles

log = logging.getLogger(__name__)

REPL_HINT = "Type fix to ask the model for a new plan (you approve it again)."
"""What the REPL says under a failed plan's evaluation."""


class LoopOptions(Protocol):
    """What this module reads of :class:`annactl.commands.ask.RunOptions` (a protocol:
    ``ask`` calls this module, so this module does not import it)."""

    as_json: bool
    """``--json``: never print, never prompt."""
    fix: bool
    """``--fix``: ask for a fix without asking first."""
    offer_fix: str
    """``prompt`` or ``repl``."""
    loop: Any
    """The request's :class:`FixLoop` (set on the first plan)."""


def evaluate(flow: Flow, consoles: Consoles, prepared: Prepared, record: PlanRecord, *,
             show_spinner: bool) -> EvaluationOutcome:
    """The evaluation of a finished plan (the model's, or Anna's own); never raises."""
    from annactl.planning.evaluate import offline
    from annactl.planning.evaluate_call import evaluate_finished, without_planner

    early = without_planner(flow.settings, prepared.outcome, record)
    if early is not None:  # no model to ask: no planner to build (a stored plan's apply)
        return early
    try:
        planner = flow.planner()
        if not show_spinner:
            return evaluate_finished(planner, prepared.outcome, record)
        with consoles.err.status("Evaluating the results…  (Ctrl-C skips)", spinner="dots"):
            return evaluate_finished(planner, prepared.outcome, record)
    except KeyboardInterrupt:
        return offline(record, "the model's evaluation was skipped (Ctrl-C)")


def store(flow: Flow, prepared: Prepared, record: PlanRecord,
          evaluation: EvaluationOutcome) -> None:
    """Keep the evaluation in the conversation history (a failure there is only logged)."""
    from annactl.planning.evaluate import execution_results

    history = flow.history()
    if history is None:
        return
    model = prepared.outcome.model if prepared.outcome is not None else None
    try:
        history.record_evaluation(prepared.request, results=execution_results(record),
                                  evaluation=evaluation.to_dict(),
                                  model=model if evaluation.source == "model" else None)
    except (OSError, AnnaError) as exc:  # history must never break showing a result
        log.warning("could not store the evaluation: %s", exc)


def loop_for(prepared: Prepared, opts: LoopOptions, mode: str = "one-shot") -> FixLoop:
    """The request's fix loop (made on its first plan, handed on to its fixes)."""
    from annactl.planning.fix import FixLoop

    if opts.loop is None:
        opts.loop = FixLoop(prepared.request, mode=mode, planned=prepared.outcome is not None)
    loop: FixLoop = opts.loop
    return loop


def after_execution(flow: Flow, consoles: Consoles, prepared: Prepared, record: PlanRecord,
                    opts: LoopOptions, doc: dict[str, Any] | None) -> bool:
    """Evaluate, show, store; True when a fix should be asked for now (``--fix``, or the
    person said yes to "Ask for a fix?"). ``doc`` (``--json``) gets ``evaluation``.
    """
    from annactl.ui.render_evaluation import evaluation_view

    loop = loop_for(prepared, opts)
    evaluation = evaluate(flow, consoles, prepared, record,
                          show_spinner=consoles.err.is_terminal and not opts.as_json)
    loop.finished(record, evaluation)
    store(flow, prepared, record, evaluation)
    if doc is not None:
        doc["evaluation"] = evaluation.to_dict()
    hint = ""
    if loop.can_fix and opts.offer_fix == "repl":
        hint = REPL_HINT
    elif loop.can_fix and not opts.fix and not consoles.interactive:
        hint = "To have the model propose a fix: annactl ask --fix …"
    if not opts.as_json:
        consoles.out.print(evaluation_view(evaluation, fix_hint=hint))
    return loop.can_fix and _wants_fix(consoles, opts, loop)


def _wants_fix(consoles: Consoles, opts: LoopOptions, loop: FixLoop) -> bool:
    from annactl.planning.fix import MAX_FIX_ROUNDS

    if opts.offer_fix == "repl":
        return False  # the REPL waits for the person to type `fix`
    if opts.fix:
        if not opts.as_json:
            consoles.err.print(f"Asking the model for a fix (round {loop.rounds + 1} of "
                               f"{MAX_FIX_ROUNDS})…", style="bold", markup=False)
        return True
    if opts.as_json or not consoles.interactive or opts.offer_fix != "prompt":
        return False
    from annactl.ui.confirm import TerminalPrompter

    return TerminalPrompter(consoles.err).yes_no("Ask for a fix? [y/N]")
