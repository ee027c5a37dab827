"""The REPL's offline answer first (issue 24.1): shown at once while the model works.

When a template matches the request only weakly, Anna's offline answer is stored in the
daemon and printed at once, labelled with its template and confidence, while the spinner
goes on for the model. Ctrl-C then stops waiting and keeps the offline answer
(:func:`annactl.commands.spinner.plan_with_spinner`). When the model's plan arrives it is
printed after, as a plan of its own: the REPL never prompts while planning, so whatever the
person approves next (``ok``, the confirmation prompt) is the plan printed last, and the
offline answer keeps its own id for ``/apply``. An offline answer that was stored but not
chosen is recorded as not run, never left waiting in the approval queue.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anna_common.errors import AnnaError

if TYPE_CHECKING:
    from annactl.commands.flow import Flow
    from annactl.commands.prepared import Prepared
    from annactl.ui.console import Consoles


@dataclass
class OfflineFirst:
    """The offline answers of one request: stored (by the planner's thread) and shown."""

    stored: list[Prepared] = field(default_factory=list)
    """Stored in the daemon (appended in the planner's thread)."""
    shown: list[Prepared] = field(default_factory=list)
    """Printed for the person (main thread)."""

    def show(self, consoles: Consoles, prepared: Prepared) -> None:
        """Print the offline answer at once, labelled (the spinner is paused meanwhile)."""
        from annactl.ui import render
        from annactl.ui.waiting import offline_label

        self.shown.append(prepared)
        consoles.out.print(offline_label(prepared.outcome, prepared.plan_id, waiting=True))
        if prepared.annotated.steps:
            consoles.out.print(render.plan_view(prepared.annotated, warnings=prepared.warnings,
                                                plan_id=prepared.plan_id))
        else:
            consoles.out.print(render.notes_only(prepared.annotated))
        consoles.err.print("Ctrl-C stops waiting for the model and keeps this answer.",
                           style="dim", markup=False)

    def settle(self, flow: Flow, consoles: Consoles, final: Prepared) -> Prepared | None:
        """After planning: the offline answer shown but not chosen (the model's plan came),
        or None. Says so before the model's plan is printed; every offline answer not
        chosen is recorded as not run (``/apply ID`` still runs it)."""
        superseded = None
        for prepared in self.stored:
            if prepared is final:
                continue
            with suppress(AnnaError):  # bookkeeping: never a reason to lose the plan below
                flow.daemon.mark_dry_run(prepared.plan_id)
            if prepared in self.shown:
                superseded = prepared
                consoles.out.print(
                    f"The model's plan follows. Anna's offline answer above stays as plan "
                    f"{prepared.plan_id}: /apply {prepared.plan_id} runs it instead.",
                    style="bold", markup=False, highlight=False)
        return superseded

    def after_failure(self, flow: Flow, consoles: Consoles, exc: AnnaError) -> Prepared:
        """The model failed (an error no template answers, e.g. a banned plan) after the
        offline answer was shown: say why, and the offline answer stands. Not shown: every
        stored one is recorded as not run and the error goes on."""
        from annactl.ui.console import inert

        if not self.shown:
            for prepared in self.stored:
                with suppress(AnnaError):
                    flow.daemon.mark_dry_run(prepared.plan_id)
            raise exc
        consoles.err.print(f"The model failed ({exc.code}: {inert(exc.message, max_chars=200)})"
                           f"; Anna's offline answer above stands.", style="yellow",
                           markup=False, highlight=False)
        return self.shown[0]
