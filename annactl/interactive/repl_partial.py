"""Partial approval in the REPL (issue 36.6): ``/apply ID --skip S --edit S=CMD``, and
``skip 3`` / ``edit 2 COMMAND`` on the last plan shown.

The changed plan is made exactly as ``annactl apply ID --skip/--edit`` makes it
(:func:`annactl.commands.edit.edited`): a new plan, validated, judged and previewed by the
daemon afresh, shown, and approved on its own (nothing of the original's approval carries
over). A step is named by its id or its number in the table (1 is the first step).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anna_common.errors import UsageError
from annactl.ui.console import inert

if TYPE_CHECKING:
    from annactl.commands.prepared import Prepared
    from annactl.ui.console import Consoles

WORDS = ("skip", "edit")
"""Typed first on a line, these change the last plan shown."""


@dataclass
class Changes:
    """A stored plan's id (or None: the last plan) and what to change in it."""

    plan_id: str | None = None
    skip: list[str] = field(default_factory=list)
    edits: dict[str, str] = field(default_factory=dict)

    @property
    def any(self) -> bool:
        """Something is changed."""
        return bool(self.skip or self.edits)


def parse_apply(arg: str) -> Changes:
    """``ID [--skip S]… [--edit S=COMMAND]…`` as typed after ``/apply``."""
    from annactl.commands.edit import parse_edits

    try:
        words = shlex.split(arg)
    except ValueError as exc:
        raise UsageError(f"cannot read that: {exc}",
                         hint="quote a command with spaces: --edit 's2=ls -la'") from None
    changes = Changes()
    pairs: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("--skip", "--edit") and i + 1 < len(words):
            (changes.skip if word == "--skip" else pairs).append(words[i + 1])
            i += 2
        elif word.startswith(("--skip=", "--edit=")):
            (changes.skip if word.startswith("--skip=") else pairs).append(word[7:])
            i += 1
        elif not word.startswith("-") and changes.plan_id is None:
            changes.plan_id = word
            i += 1
        else:
            raise UsageError(f"/apply does not take {inert(word, max_chars=40)!r}",
                             hint="/apply ID [--skip STEP] [--edit 'STEP=COMMAND']")
    changes.edits = parse_edits(pairs)
    return changes


def parse_word(text: str, prepared: Prepared) -> Changes:
    """``skip 3`` (or ``skip s3 s4``) and ``edit 2 COMMAND…`` on ``prepared``."""
    word, _, rest = text.strip().partition(" ")
    word = word.lower()
    if word == "skip":
        steps = rest.replace(",", " ").split()
        if not steps:
            raise UsageError("say which step to leave out", hint="skip 3, or skip s3 s4")
        return Changes(skip=[step_id(s, prepared) for s in steps])
    which, _, command = rest.strip().partition(" ")
    if not which or not command.strip():
        raise UsageError("say which step and its new command", hint="edit 2 ls -la /tmp")
    return Changes(edits={step_id(which, prepared): command.strip()})


def step_id(ref: str, prepared: Prepared) -> str:
    """A step's id from its id or its number in the plan (1-based)."""
    steps = prepared.annotated.steps
    ids = [s.id for s in steps]
    if ref in ids:
        return ref
    if ref.isdigit() and 1 <= int(ref) <= len(steps):
        return ids[int(ref) - 1]
    raise UsageError(f"no step {inert(ref, max_chars=40)!r} in plan {prepared.plan_id}",
                     hint="the steps are: " + ", ".join(
                         f"{n} {inert(i, max_chars=40)}" for n, i in enumerate(ids, 1)))


def names_a_step(text: str, prepared: Prepared | None) -> bool:
    """``skip 3`` / ``edit s2 …`` about ``prepared``'s steps (``edit my nginx config`` is a
    request for the model, not a change of the last plan)."""
    word, _, rest = text.strip().partition(" ")
    if word.lower() not in WORDS or prepared is None or not prepared.annotated.steps:
        return False
    first = rest.replace(",", " ").split()[:1]
    if not first:
        return True  # "skip" alone: say what it needs
    ids = {s.id for s in prepared.annotated.steps}
    return first[0] in ids or (first[0].isdigit() and
                               1 <= int(first[0]) <= len(prepared.annotated.steps))


def show_changed(consoles: Consoles, prepared: Prepared) -> None:
    """The changed plan, its preview, and that it is a new plan to approve."""
    from annactl.ui import render
    from annactl.ui.render_preview import preview_view

    consoles.out.print(render.plan_view(prepared.annotated, checks=prepared.checks,
                                        warnings=prepared.warnings, plan_id=prepared.plan_id))
    if prepared.preview is not None:
        consoles.out.print(preview_view(prepared.preview, prepared.annotated.steps))
    consoles.out.print(f"This is your changed plan {prepared.plan_id} ({prepared.changed}): "
                       "a new plan, judged and previewed again. Type ok to run it.",
                       style="dim", markup=False, highlight=False)
