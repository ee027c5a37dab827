"""Where a read-only plan's answer goes: on stdout, with the chrome on stderr (issue 36.5).

A plan that only looks (every step INFO, so it runs without asking) is a question, and
its answer is what its steps print: ``annactl "find the big files in my home" > out.txt``
and ``… | less`` must get that output, not the tables around it. So for such a plan the
steps' output and one summary line (the evaluation's) go to stdout, and the plan table,
the preview, the step progress, the result and the evaluation go to stderr, where shells
keep them on the terminal. A plan that changes something keeps its plan table on stdout:
what is approved is the result there. ``--json`` is unchanged (one document on stdout).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.console import Console

    from annactl.planning.fix import FixLoop
    from annactl.ui.console import Consoles

SUMMARY_CHARS = 400
"""The summary line's cap (a model's evaluation summary is untrusted text)."""


class SplitOptions(Protocol):
    """What :func:`split` reads of :class:`annactl.commands.ask.RunOptions`."""

    as_json: bool
    """``--json``: one document, nothing split."""
    dry_run: bool
    """Only the plan is shown: there is no answer."""
    answer_on_stdout: bool
    """The caller wants the split (the REPL shows everything in one place)."""


def split(consoles: Consoles, tier: str, opts: SplitOptions) -> tuple[Consoles, Console | None]:
    """The consoles the chrome goes to, and stdout for the answer (None: no split).

    Only a plan that runs without asking (tier ``none``: INFO only), run for real and not
    as JSON, is split; its "results" (tables, result, evaluation) then go to stderr."""
    from annactl.ui.console import Consoles

    if tier != "none" or opts.as_json or opts.dry_run or not opts.answer_on_stdout:
        return consoles, None
    return Consoles(out=consoles.err, err=consoles.err), consoles.out


def answer_line(out: Console, line: str) -> None:
    """One line of a step's output on stdout: as it is to a file or pipe (``line`` is
    already inert and capped by :class:`annactl.ui.render_events.OutputLines`), indented
    and dim on a terminal, where the chrome around it is shown too."""
    if not out.is_terminal:  # byte for byte (Rich would turn tabs into spaces)
        out.file.write(line + "\n")
        out.file.flush()
        return
    from annactl.ui.render_events import output_line

    out.print(output_line(line))


def summary_line(out: Console, loop: FixLoop | None) -> None:
    """The evaluation's summary as one line on stdout (nothing when there is none)."""
    evaluation = loop.evaluation if loop is not None else None
    if evaluation is None or not evaluation.evaluation.summary:
        return
    from annactl.ui.console import inert_text

    words = " ".join(evaluation.evaluation.summary.split())
    out.print(inert_text(words, "bold" if out.is_terminal else "", max_chars=SUMMARY_CHARS),
              soft_wrap=True)
