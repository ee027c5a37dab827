"""``annactl memory [show|set|forget]``, and offering a model's ``memory_patch`` to the person.

The memory (``annactl/planning/memory.py``) holds a few whitelisted settings. People
change it here or with "remember my editor is nvim" in the REPL; a model can
only *propose* a change (``memory_patch``), which :func:`offer` shows and
applies after an explicit yes. ``--yes`` approves plans, never memory: with it
(or with ``--json``, or without a terminal) the proposal is shown with the
command that would save it, and nothing is written.
Values are untrusted text wherever they are shown (:func:`annactl.ui.console.inert`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, UsageError
from annactl.core.exit_codes import ExitStatus

if TYPE_CHECKING:
    from pathlib import Path

    from annactl.planning.memory import PatchReview
    from annactl.planning.outcome import PlanOutcome
    from annactl.ui.confirm import Prompter
    from annactl.ui.console import Consoles

ACTIONS = ("show", "set", "forget")
"""Subcommands."""


def run(consoles: Consoles, action: str, args: list[str], *, as_json: bool) -> int:
    """``annactl memory ACTION [KEY [VALUE...]]``; returns the exit status."""
    from annactl.core.config import load_settings
    from annactl.planning.memory import WHITELIST, Memory

    if action not in ACTIONS:
        raise UsageError(f"unknown memory action {action[:40]!r}",
                         hint='one of show, set KEY VALUE, forget KEY; to ask about RAM: '
                              'annactl ask "memory usage"')
    memory = Memory(load_settings().state_dir)
    if action == "set":
        if len(args) < 2:
            raise UsageError("memory set needs a KEY and a VALUE",
                             hint=f"keys: {', '.join(sorted(WHITELIST))}")
        memory.set(args[0], " ".join(args[1:]))
    elif action == "forget":
        if len(args) != 1:
            raise UsageError("memory forget needs one KEY")
        if not memory.forget(args[0]) and not as_json:
            consoles.err.print(f"{args[0][:40]} was not remembered.", markup=False,
                               highlight=False)
    elif args:
        raise UsageError("memory show takes no arguments")
    show(consoles, memory.all(), as_json=as_json, version=memory.version())
    return ExitStatus.SUCCESS


def show(consoles: Consoles, values: dict[str, str], *, as_json: bool, version: str) -> None:
    """Print the memory (JSON: ``{"memory": {...}, "version": "...", "keys": [...]}``)."""
    from annactl.planning.memory import WHITELIST
    from annactl.ui.console import emit_json, inert

    if as_json:
        emit_json(consoles, {"memory": values, "version": version,
                             "keys": sorted(WHITELIST)})
        return
    if not values:
        consoles.out.print("Nothing remembered yet.", markup=False)
    for key, value in values.items():
        consoles.out.print(f"{key} = {inert(value, max_chars=200)}", markup=False,
                           highlight=False)


def review_for(state_dir: Path, outcome: PlanOutcome | None) -> PatchReview | None:
    """The model's proposal sorted against the memory, or None when it proposed nothing."""
    plan = outcome.plan if outcome is not None else None
    if outcome is None or plan is None or not plan.memory_patch:
        return None  # (before the import: applying a stored plan never loads the store)
    from annactl.planning.memory import Memory, review_patch

    return review_patch(dict(plan.memory_patch), Memory(state_dir).all(),
                        outcome.memory_version)


def apply(state_dir: Path, review: PatchReview) -> AnnaError | None:
    """Write the accepted changes (after the person's yes); the error if the memory moved."""
    from annactl.planning.memory import Memory

    try:
        Memory(state_dir).apply(review.changes, review.base_version)
    except AnnaError as exc:  # VERSION_CONFLICT: reported, never a reason to fail the plan
        return exc
    return None


def describe(review: PatchReview) -> str:
    """One line naming the proposed changes (values made inert)."""
    from annactl.ui.console import inert

    return "; ".join(f"{k} = {inert(v, max_chars=200)}" if v else f"forget {k}"
                     for k, v in review.changes.items())


def offer(consoles: Consoles, state_dir: Path, outcome: PlanOutcome | None,
          prompter: Prompter | None) -> dict[str, Any] | None:
    """Show a model's memory proposal; apply it only on the person's yes (``prompter``).

    Returns what happened (for ``--json`` output), or None when nothing was proposed.
    """
    from annactl.ui.console import inert

    review = review_for(state_dir, outcome)
    if review is None:
        return None
    for key, why in review.refused.items():
        consoles.err.print(f"not remembered: {inert(key, max_chars=40)} ({why})",
                           style="yellow", markup=False, highlight=False)
    result: dict[str, Any] = {"proposed": review.changes, "refused": review.refused,
                              "applied": False}
    if not review.changes:
        return result
    consoles.err.print("The model proposes to remember: " + describe(review), markup=False,
                       highlight=False)
    if prompter is None:
        commands = [f"annactl memory set {k} {inert(v, max_chars=200)}" if v
                    else f"annactl memory forget {k}" for k, v in review.changes.items()]
        consoles.err.print("not saved without your yes; to save: " + " && ".join(commands),
                           style="dim", markup=False, highlight=False)
        return result
    if not prompter.yes_no("Remember this?"):
        return result
    error = apply(state_dir, review)
    if error is not None:
        consoles.err.print(f"{error.code}: {inert(error.message)}", style="red", markup=False,
                           highlight=False)
        result["error"] = str(error.code)
        return result
    consoles.err.print("Remembered.", markup=False)
    result["applied"] = True
    return result
