"""Approve a plan minus some steps (``--skip ID``), or with a step's command edited
(``--edit ID=COMMAND``).

The edited plan is a *new* plan: the daemon validates it, judges every command again
(risk, scope, bans, policy), previews it and gives it its own digest, exactly as for a
model's plan; the person approves what is shown then. Nothing of the original's approval
carries over. A rollback command only the skipped steps used is dropped with them; an
edited step keeps its rollback (shown, and judged, with the new command). The original is
recorded as never run.
"""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING

from anna_common.errors import AnnaError, UsageError

if TYPE_CHECKING:
    from anna_common.plan import ActionPlan
    from annactl.commands.flow import Flow
    from annactl.commands.prepared import Prepared


def parse_edits(pairs: list[str]) -> dict[str, str]:
    """``ID=COMMAND`` pairs (the command may hold ``=``)."""
    edits: dict[str, str] = {}
    for pair in pairs:
        step_id, sep, command = pair.partition("=")
        if not sep or not step_id.strip() or not command.strip():
            raise UsageError(f"--edit wants STEP_ID=COMMAND, not {pair[:80]!r}")
        edits[step_id.strip()] = command
    return edits


def edited(flow: Flow, prepared: Prepared, *, skip: list[str], edits: dict[str, str]
           ) -> Prepared:
    """The plan of ``prepared`` without the ``skip`` steps and with ``edits`` applied,
    submitted as a new plan (validated, judged and previewed by the daemon afresh)."""
    from anna_common.plan import ActionPlan

    # the plan as JSON, re-read by the strict model (a stored plan may be a wire view)
    plan = ActionPlan.model_validate(prepared.annotated.plan.model_dump(mode="json"))
    known = {step.id for step in plan.command_plan}
    unknown = sorted((set(skip) | set(edits)) - known)
    if unknown:
        raise UsageError(f"no step {', '.join(unknown)} in plan {prepared.plan_id}",
                         hint="the steps are: " + ", ".join(sorted(known)))
    both = sorted(set(skip) & set(edits))
    if both:
        raise UsageError(f"step {', '.join(both)} is both skipped and edited")
    steps = [s.model_copy(update={"command": edits[s.id]}) if s.id in edits else s
             for s in plan.command_plan if s.id not in skip]
    if not steps:
        raise UsageError("every step would be skipped: there is nothing left to approve")
    used = {s.rollback_id for s in steps if s.rollback_id}
    rollback = [r for r in plan.rollback_plan if r.id in used]
    what = [f"skipped {', '.join(skip)}"] if skip else []
    what += [f"edited {', '.join(sorted(edits))}"] if edits else []
    changed = f"changed by you from plan {prepared.plan_id}: " + "; ".join(what)
    # the change first: the model's notes describe the plan before it (issue 36.9)
    notes = f"Your changed plan ({changed})."
    if plan.notes_for_user.strip():
        notes += f" The model's notes, written for the plan before the change: " \
                 f"{plan.notes_for_user.strip()}"
    new = plan.model_copy(update={"command_plan": steps, "rollback_plan": rollback,
                                  "notes_for_user": notes[:4000]})
    _validated(new)
    # "file": the person's own plan, as a plan file is (the protocol's source values)
    second = flow.submit(new, request=prepared.request, source="file")
    second.changed = changed
    with suppress(AnnaError):  # bookkeeping: the plan offered now is the edited one
        flow.daemon.mark_dry_run(prepared.plan_id)
    return second


def _validated(plan: ActionPlan) -> None:
    """Validate the changed plan here first, as a plan file is: a refused one is raised with
    Anna's annotation, so it can be shown with its reasons (a banned edit's BANNED badge);
    the daemon validates it again when it is submitted."""
    from anna_common.validate import validate
    from annactl.commands.flow import invalid_plan
    from annactl.core.environment import local_context

    result = validate(plan, local_context())
    if not result.ok or result.plan is None:
        raise invalid_plan("the changed plan cannot be offered", result.errors, result.plan)
