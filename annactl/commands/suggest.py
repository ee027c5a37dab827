"""``annactl suggest REQUEST``: the request planned, printed as one shell command line with
Anna's risk beside it as a comment — what the shell widget (``annactl shell-integration``)
puts on the person's prompt to edit and run.

Only that line goes to stdout (the spinner and errors go to stderr). The plan is stored in
the daemon and marked as shown and not run (``annactl apply ID`` still runs it, previewed and
undoable, and the comment says so). The commands are the model's: a command with a newline or
a control character is never placed on a prompt (Enter would run what the person cannot
see); the line is then a comment naming the plan. A question's answer, a banned plan or one
that cannot be placed becomes a comment too, so pressing Enter on it runs nothing.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from annactl.core.exit_codes import ExitStatus

if TYPE_CHECKING:
    from annactl.commands.prepared import Prepared
    from annactl.ui.console import Consoles

MAX_LINE_CHARS = 2000
"""Longest command line placed on a prompt."""
_UNSEEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")
"""Characters a prompt would not show as themselves (newlines, escapes, bidi controls)."""


def _comment(text: str) -> str:
    """``text`` as one harmless shell comment line."""
    from annactl.ui.console import inert

    flat = " ".join(inert(text).split())
    return "# " + _UNSEEN.sub("", flat)[:300]


def command_line(prepared: Prepared, *, root: bool) -> str:
    """The line for the prompt: the steps joined with ``&&`` (``sudo`` before a system step
    when not root) and ``# anna: RISK …``; or a comment when there is nothing to run."""
    plan = prepared.annotated
    ident = prepared.plan_id
    if plan.banned:
        reasons = [r for s in plan.steps if s.banned for r in s.reasons]
        return _comment(f"anna: BANNED, not run: {reasons[0] if reasons else 'a banned step'}")
    if not plan.steps:
        notes = plan.plan.notes_for_user.strip() or plan.plan.analysis
        return _comment(f"anna: {notes}")
    commands = [s.command.strip() for s in plan.steps]
    if any(_UNSEEN.search(c) for c in commands):
        return _comment(f"anna: the plan's commands do not fit on one line; see it with "
                        f"annactl show {ident}, run it with annactl apply {ident}")
    parts = [("sudo " if s.scope == "system" and not root else "") + c
             for s, c in zip(plan.steps, commands, strict=True)]
    line = " && ".join(parts)
    if len(line) > MAX_LINE_CHARS:
        return _comment(f"anna: the plan is too long for one line; annactl apply {ident}")
    note = _comment(f"anna: {plan.final_risk} · annactl apply {ident} runs it previewed, "
                    "undoable")
    return f"{line}  {note}"


def suggest(consoles: Consoles, request: str, *, use_templates: bool = True,
            as_json: bool = False) -> int:
    """``annactl suggest REQUEST``: print :func:`command_line` of the request's plan
    (``--json``: one document with the line and the stored plan's id)."""
    from annactl.commands.ask import not_run
    from annactl.commands.failures import json_failures
    from annactl.commands.flow import connect_flow
    from annactl.commands.spinner import plan_with_spinner
    from annactl.core.config import load_settings

    text = request.strip().lstrip("#").strip()  # Warp's "# request" habit
    with json_failures(consoles, as_json=as_json):
        settings = load_settings()
        flow = connect_flow(settings)

        def make(**hooks: Any) -> Prepared:
            return flow.plan_text(text, mode="one-shot",
                                  use_templates=use_templates and settings.templates, **hooks)

        prepared = plan_with_spinner(consoles, make, show_spinner=consoles.err.is_terminal)
        not_run(flow, prepared)
    line = command_line(prepared, root=os.geteuid() == 0)
    if as_json:
        from annactl.ui.console import emit_json

        emit_json(consoles, {"code": "OK", "plan_id": prepared.plan_id, "line": line})
        return ExitStatus.SUCCESS
    consoles.out.file.write(line + "\n")
    consoles.out.file.flush()
    return ExitStatus.SUCCESS
