"""File steps a daemon cannot capture: HIGH, "runs live; Anna cannot undo it".

A per-user daemon captures its steps in a user namespace (:mod:`annad.capture.unprivileged`);
on a kernel that forbids that (or with ``capture_userns = false``) it cannot see what a step
writes, so it cannot back it up or undo it either. Such a step is never offered with a
rollback Anna cannot do: at submit every step that changes files (not INFO, not a live kind
with its own typed undo) is raised to HIGH with the words below and marked
``uncaptured_write``, so its undo never reports it restored on Anna's word
(:func:`annad.execution.undo.undo_step`). A step approved before the daemon lost its capture
is refused at run time (:func:`not_approved_live`).

On every daemon, root included, a step that runs a live program *beside* other commands
(``systemctl --version; cd /etc && xz -k passwd``) is the same case: it runs live (a captured
step cannot reach the service manager), so its file part would land unseen. Only a step that
is nothing but live programs and inert builtins (:func:`annad.execution.livekinds.live_only`)
is a live kind with a typed undo; a mixed one is raised to HIGH with the same words and the
advice to make the live command a step of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.annotate import raise_to_high
from anna_common.levels import RiskLevel
from anna_common.risk.rules import base
from anna_common.risk.rules.base import Code
from anna_common.shell.grammar import analyse
from annad.execution.livekinds import live_kind, live_only
from annad.execution.prestate import started_units, untyped_live

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan
    from annad.stepspec import StepSpec

RUNS_LIVE = base.RUNS_LIVE
"""The words every such step carries (one text with the rules': a container with host
access says it too)."""


def mark_live(annotated: AnnotatedPlan, problem: str | None) -> AnnotatedPlan:
    """``annotated`` with every step that would run live unseen raised as the module text says:
    a file step when ``problem`` (why the daemon cannot capture) is not None, and a step mixing
    a live program with other commands always."""
    raised = False
    for index, step in enumerate(annotated.steps):
        why = _why_live(step.command, problem) if step.final_risk != RiskLevel.INFO else None
        if why is None:
            continue
        word = next((c.program for c in analyse(step.command).commands if c.program), None)
        annotated = raise_to_high(annotated, index, f"{RUNS_LIVE}: {why}", word=word)
        marked = annotated.steps[index]
        codes = marked.codes if Code.UNCAPTURED_WRITE in marked.codes else \
            [*marked.codes, str(Code.UNCAPTURED_WRITE)]
        steps = list(annotated.steps)
        steps[index] = marked.model_copy(update={"codes": codes})
        annotated = annotated.model_copy(update={"steps": steps})
        raised = raised or marked.rollback_id is None
    if raised and annotated.rollback_status == "available":
        # a step with no rollback of its own is now one nothing undoes
        annotated = annotated.model_copy(update={"rollback_status": "partial"})
    return _mark_unverified(annotated)


def _mark_unverified(annotated: AnnotatedPlan) -> AnnotatedPlan:
    """Each live step whose effect Anna records no state of says, before it is approved, that
    its undo cannot be checked (:func:`annad.execution.prestate.untyped_live`); a step already
    marked as running live unseen says more than that already."""
    steps = list(annotated.steps)
    status = annotated.rollback_status
    for index, step in enumerate(steps):
        if step.final_risk == RiskLevel.INFO or Code.UNCAPTURED_WRITE in step.codes or \
                live_only(step.command) is None:
            continue
        programs = untyped_live(step.command)
        started = started_units(step.command)
        if not programs and not started:
            continue
        if not programs:
            # the unit's state is put back and checked; what its own programs did is not seen
            why = (f"{base.UNVERIFIED_UNDO_WORDS}: {', '.join(started)} runs the unit's own "
                   "programs, whose effects Anna does not see; the undo puts the unit's state "
                   "back and cannot check the rest")
            steps[index] = step.model_copy(update={
                "reasons": [*step.reasons, why], "codes": [*step.codes,
                                                           str(Code.UNVERIFIED_UNDO)]})
            status = "unverified" if status == "available" else status
            continue
        undo = ("Anna runs the plan's rollback command for it, and nothing checks what that "
                "leaves") if step.rollback_id else "the plan has no rollback command: nothing "\
            "undoes it"
        why = (f"{base.UNVERIFIED_UNDO_WORDS}: {', '.join(programs)} acts on the running "
               f"system and Anna records no state of it; {undo}")
        steps[index] = step.model_copy(update={
            "reasons": [*step.reasons, why], "codes": [*step.codes, str(Code.UNVERIFIED_UNDO)]})
        # an undo nothing checks is no undo the summary may call available, and a step
        # nothing undoes leaves the plan partly undoable at best
        if step.rollback_id is None and status in ("available", "unverified"):
            status = "partial"
        elif status == "available":
            status = "unverified"
    return annotated.model_copy(update={"steps": steps, "rollback_status": status})


def _why_live(command: str, problem: str | None) -> str | None:
    """Why ``command`` (not INFO) would run live with effects nobody sees, or None."""
    kind = live_kind(command)
    if kind is None:
        return problem
    if live_only(command) is None:
        return (f"it runs {kind} beside other commands, and a step with a live program is not "
                "captured; make the live command a step of its own")
    return None


def not_approved_live(step: StepSpec, problem: str | None) -> str | None:
    """Why ``step`` may not run at all on a daemon that cannot capture (``problem``): a file
    step not approved as one that runs live and cannot be undone (approved before the daemon
    lost its capture). It never runs live instead."""
    if problem is None or step.confined or step.uncaptured or live_kind(step.command):
        return None
    return (f"this daemon cannot capture what the step writes ({problem}) and it was not "
            "approved to run live; the step did not run")
