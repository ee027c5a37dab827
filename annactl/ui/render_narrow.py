"""Plans on narrow terminals: below :data:`NARROW` columns a table cannot give every column
its header's width, so steps and checks are shown as an indented list instead (each field
on its own line, long commands wrapped under their step; :mod:`annactl.ui.render_plan`
draws both), never as a table whose headers and words split into letters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType

NARROW = 72
"""Below this many columns, steps and checks are lists, not tables."""


class ByWidth:
    """A renderable that is ``wide()`` at :data:`NARROW` columns or more, else ``narrow()``
    (decided when it is printed, so it follows the console it is printed on)."""

    def __init__(self, wide: Callable[[], RenderableType],
                 narrow: Callable[[], RenderableType], *, at: int = NARROW) -> None:
        self.wide, self.narrow, self.at = wide, narrow, at

    def __rich_console__(self, console: Console, options: ConsoleOptions
                         ) -> Iterator[RenderableType]:
        """The wide or the narrow form, by the width available."""
        yield self.wide() if options.max_width >= self.at else self.narrow()
