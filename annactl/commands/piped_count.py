"""Anna's count of piped log lines when no model read them (``ask``'s offline paths).

``journalctl -b -p err | annactl "what is wrong?"`` with no model: the error still ends the
command (exit 8, nothing was answered), and stdout has Anna's own count of the lines
(:mod:`annactl.planning.piped_tally`); with ``--json`` the count is the error's
``detail.piped.tally``. When a template answered instead, the count follows its note.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from annactl.planning.piped import Piped
    from annactl.ui.console import Consoles


def count_piped(consoles: Consoles, piped: Piped, *, as_json: bool) -> dict[str, Any] | None:
    """Print Anna's count of ``piped`` (text mode) and return its JSON; None (and nothing
    printed) when the text is not a log."""
    from annactl.planning.piped_tally import tally

    counted = tally(piped.whole)
    if counted is None:
        return None
    if not as_json:
        from annactl.ui.tally_view import tally_view

        consoles.out.print(tally_view(counted))
    return counted.to_dict()
