"""Anna's count of piped log lines (:mod:`annactl.planning.piped_tally`), as text.

Shown when no model read the piped text: a count in Anna's words, never a diagnosis; the
programs and examples are untrusted and shown inert (markup literal, no escape codes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from annactl.ui.console import inert_text

if TYPE_CHECKING:
    from rich.console import Group

    from annactl.planning.piped_tally import Tally


def tally_view(tally: Tally) -> Group:
    """A heading line saying what was counted, then the most frequent kinds of message."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    kinds = "kind" if tally.kinds == 1 else "kinds"
    programs = "program" if tally.programs == 1 else "programs"
    head = Text("No model read the piped text; Anna counted it (a count, not a diagnosis): ",
                style="bold")
    head.append(f"{tally.log_lines} of {tally.lines} lines are log lines, from "
                f"{tally.programs} {programs}, {tally.kinds} {kinds} of message"
                + ("; the most frequent:" if tally.kinds > len(tally.top) else ":"),
                style="")
    table = Table.grid(padding=(0, 2))
    table.add_column(justify="right", no_wrap=True)
    table.add_column(no_wrap=True, max_width=20, overflow="ellipsis")
    table.add_column(overflow="fold")
    for kind in tally.top:
        table.add_row(f"{kind.count}×", inert_text(kind.program, max_chars=40),
                      inert_text(kind.example))
    return Group(head, table)
