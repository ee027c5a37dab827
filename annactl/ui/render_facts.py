"""Contradictions and the machine's own facts, rendered beside the model's prose.

The claim and the telemetry value are both text from outside Anna's code (the
model wrote one, the machine the other): they go through :func:`inert_text`,
never Rich markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from annactl.ui.console import inert_text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from anna_common.telemetry import Telemetry
    from annactl.planning.citations import Citation
    from annactl.planning.facts import Contradiction


def contradiction_lines(found: Sequence[Contradiction], where: str) -> list[Text]:
    """One line per contradiction in ``where``: ``✘ cpu_model — model: X · telemetry: Y``."""
    return [claim_line(c.fact, c.claim, "telemetry", c.telemetry) for c in found
            if c.where == where]


def claim_line(fact: str, claim: str, source: str, truth: str, *, claim_chars: int = 120,
               truth_chars: int = 160) -> Text:
    """``✘ not true here: FACT — model: CLAIM · SOURCE: TRUTH``, the model's words inert
    (also for an evaluation's claims against the journal)."""
    line = Text("  ✘ not true here: ", style="bold red") + Text(fact, style="bold")
    line += Text(" — model: ") + inert_text(claim, "red", max_chars=claim_chars)
    line += Text(f" · {source}: ") + inert_text(truth, "green", max_chars=truth_chars)
    return line


def confidence_line(found: Sequence[Contradiction]) -> Text | None:
    """A summary line when the model's claims disagree with the telemetry."""
    if not found:
        return None
    from annactl.planning.facts import confidence

    return Text(f"Confidence lowered to {confidence(list(found)):.2f}: {len(found)} claim(s) "
                "contradict the telemetry Anna sent; trust the telemetry.", style="yellow")


def telemetry_table(telemetry: Telemetry) -> RenderableType:
    """The machine's facts as Anna read them (for answers: the model's prose goes beside)."""
    from annactl.planning.facts import telemetry_facts

    table = Table(title="This machine (from telemetry)", title_justify="left", show_header=False,
                  box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    for label, value in telemetry_facts(telemetry):
        table.add_row(inert_text(label, max_chars=40), inert_text(value, max_chars=200))
    return table


def answer_view(prose: RenderableType | None, telemetry: Telemetry | None,
                found: Sequence[Contradiction], cited: Sequence[Citation] = ()) -> Group:
    """An answer-only plan: Anna's telemetry facts, then the model's prose, flagged; the facts
    it cited that Anna verified are shown beside it with the document's own value. ``prose``
    None: it was printed already, while the model wrote it."""
    parts: list[RenderableType] = []
    if telemetry is not None:
        parts.append(telemetry_table(telemetry))
        if prose is not None:
            parts.append(Text("The model says:", style="bold"))
    if prose is not None:
        parts.append(prose)
    for citation in cited:
        if citation.verified:
            parts.append(Text("  ✔ cited: ", style="green") + inert_text(citation.doc,
                                                                         max_chars=80)
                         + Text(" = ") + inert_text(citation.value, max_chars=160))
    for where in ("analysis", "notes_for_user", "meta"):
        parts.extend(contradiction_lines(found, where))
    line = confidence_line(found)
    if line is not None:
        parts.append(line)
    return Group(*parts)
