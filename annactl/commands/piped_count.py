"""Anna's count of piped log lines when no model read them (``ask``'s offline paths).

``journalctl -b -p err | annactl "what is wrong?"`` with no model: the error still ends the
command (exit 8, nothing was answered), and stdout has Anna's own count of the lines
(:mod:`annactl.planning.piped_tally`); with ``--json`` the count is the error's
``detail.piped.tally``. When a template answered instead, the count follows its note.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError

if TYPE_CHECKING:
    from annactl.commands.prepared import Prepared
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


def piped_note(consoles: Consoles, prepared: Prepared, *, as_json: bool) -> None:
    """Say what became of text piped in: how much was read, and whether the model read it or
    an offline template answered without it (stderr, one line; ``--json`` has ``piped``)."""
    outcome = prepared.outcome
    if as_json or outcome is None or outcome.piped is None:
        return
    said = outcome.piped.summary()
    if outcome.template:
        said += (f"; the offline answer ({outcome.template}) does not read it, a model "
                 "would (ANNA_LLM_URL)")
    else:
        said += "; the model read it as data"
    consoles.err.print("note: " + said, style="yellow", markup=False, highlight=False)
    if outcome.template:
        count_piped(consoles, outcome.piped, as_json=False)


@contextmanager
def saying_piped(consoles: Consoles, piped: Piped | None, *, as_json: bool
                  ) -> Iterator[None]:
    """A request with piped text that could not be planned still says what was read (the
    error's hint; ``piped`` in its JSON ``detail``), that no model read it, and Anna's own
    count of its log lines (:mod:`annactl.commands.piped_count`)."""
    try:
        yield
    except AnnaError as exc:
        if piped is not None:
            from annactl.planning.outcome import OFFLINE_CODES

            doc = exc.detail.setdefault("piped", piped.to_dict()) \
                if isinstance(exc.detail, dict) else {}
            if exc.code in OFFLINE_CODES:
                doc["tally"] = count_piped(consoles, piped, as_json=as_json)
                said = f"{piped.summary()}; no model read it"
                exc.hint = said + (f"; {exc.hint}" if exc.hint else "")
        raise
