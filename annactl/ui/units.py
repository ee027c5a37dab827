"""Text whose numbers stay beside their units when a narrow terminal folds it.

Rich wraps a table cell at any blank, so at 60 columns ``2.1 GiB / 23.5 GiB`` could end a
line with ``23.5`` and start the next with ``GiB`` (issue 23). :class:`Unsplit` renders its
text with the blank between a number and its unit held by a placeholder that is no blank
(so the line breaks elsewhere, or the pair moves to the next line whole), then gives the
blank back: where nothing folds, the output is the text's own, byte for byte.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.measure import Measurement
    from rich.text import Text

UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB", "%", "°C", "s", "ms")
"""Units a number is written with (``2.1 GiB``, ``45 °C``, ``4.6 s``)."""
_GAP = re.compile(r"(?<=\d) (?=(?:" + "|".join(re.escape(u) for u in UNITS) + r")(?!\w))")
_HOLD = "\ue000"
"""A private-use character, one cell wide and no blank: Rich never breaks a line at it."""


class Unsplit:
    """A Rich renderable: ``text`` folded at its blanks, but never between a number and its
    unit."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def _held(self) -> Text:
        held = self.text.copy()
        held.plain = _GAP.sub(_HOLD, held.plain)  # same length: the styles stay in place
        return held

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        for segment in console.render(self._held(), options):
            if _HOLD in segment.text:
                yield Segment(segment.text.replace(_HOLD, " "), segment.style, segment.control)
            else:
                yield segment

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        from rich.measure import Measurement

        return Measurement.get(console, options, self._held())
