"""What the person sees while the model works, in one wording for the CLI spinner, the REPL
and the TUI: the progress line (stage, time, tokens, the model time budget as used / budget)
and the label of Anna's offline answer shown while the model is still working (issue 24.1).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text

from annactl.ui.console import inert

if TYPE_CHECKING:
    from annactl.planning.outcome import PlanOutcome, Progress


def budget_used(progress: Progress, now: float | None = None) -> tuple[float, float] | None:
    """(seconds of the model budget used, the budget) at ``now``; None before the first model
    call or without a budget (``ANNA_LLM_BUDGET=0``)."""
    if progress.deadline is None or progress.budget_s <= 0:
        return None
    now = time.monotonic() if now is None else now
    left = max(0.0, progress.deadline - now)
    return min(progress.budget_s, progress.budget_s - left), progress.budget_s


def progress_line(progress: Progress | None, elapsed_s: float,
                  now: float | None = None) -> Text:
    """``model · 12.3 s · 40 tokens · model budget 10 / 60 s`` (``elapsed_s``: since the
    request started, as the caller counts it, so the line moves between two reports)."""
    if progress is None:
        return Text(f"{elapsed_s:.1f} s")
    line = Text(f"{inert(progress.stage, max_chars=20)} · {elapsed_s:.1f} s")
    if progress.tokens:
        line.append(f" · {progress.tokens} tokens")
    used = budget_used(progress, now)
    if used is not None:  # the model time budget (ANNA_LLM_BUDGET)
        line.append(f" · model budget {used[0]:.0f} / {used[1]:g} s")
    if progress.message:
        line.append(" · " + inert(progress.message, max_chars=100), style="dim")
    return line


def offline_label(outcome: PlanOutcome | None, plan_id: str, *, waiting: bool) -> Text:
    """The heading of Anna's offline answer (stored as plan ``plan_id``): which template, how
    sure, and (``waiting``) that the model is still working."""
    template = inert(outcome.template or "", max_chars=60) if outcome is not None else ""
    confident = outcome is not None and outcome.template_confident
    line = Text("Anna's offline answer", style="bold yellow")
    line.append(f" (template {template}, plan {plan_id}; confidence: ")
    line.append("high, the whole request matched" if confident
                else "low, only a keyword of the request matched", style="yellow")
    line.append(")")
    if waiting:
        line.append(". The model is still working on its own plan.", style="dim")
    return line
