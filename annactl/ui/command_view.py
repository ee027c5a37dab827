"""A shell command as the views show it: highlighted where the console shows colour, the
same text laid out the same way where it does not.

Highlighting is rich's ``Syntax`` with pygments' bash lexer: importing them (``rich.syntax``
loads pygments' lexer machinery and its lexer table) and lexing cost ~10 ms of the CPU
``annactl ask --dry-run`` spends, on every plan shown. To a pipe, a file or a terminal
without colour (``console.color_system`` is None) every style is dropped when written, so
there the command is laid out exactly as ``Syntax`` lays it out (same width, same wrapping,
the lexer's own newline handling) without loading either. ``NO_COLOR`` keeps a colour system
(bold and italics are still written), so it still gets ``Syntax``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

TAB_SIZE = 4
"""``Syntax``'s tab size (its default)."""


class CommandView:
    """A command (already inert) for a Rich view: see the module's docstring."""

    def __init__(self, code: str) -> None:
        self.code = code

    def syntax(self) -> RenderableType:
        """The command highlighted as bash (loads pygments)."""
        from rich.syntax import Syntax

        return Syntax(self.code, "bash", theme="ansi_dark", word_wrap=True,
                      background_color="default", tab_size=TAB_SIZE)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        # Syntax's measure without line numbers or padding: no minimum, its longest line
        lines = self.code.splitlines()
        return Measurement(0, max((cell_len(line) for line in lines), default=0))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if console.color_system is not None:
            yield self.syntax()
            return
        # Syntax's word-wrapped layout (rich.syntax.Syntax._get_syntax) with no styles
        ends_on_nl = self.code.endswith("\n")
        processed = (self.code if ends_on_nl else self.code + "\n").expandtabs(TAB_SIZE)
        text = Text(_as_lexed(processed), justify="default", tab_size=TAB_SIZE, no_wrap=False)
        render_options = options.update(width=max(0, options.max_width), height=None,
                                        justify="left")
        newline = Segment("\n")
        for line in text.split("\n", allow_blank=ends_on_nl):
            for wrapped in console.render_lines(line, render_options, pad=False):
                yield from wrapped
                yield newline


def _as_lexed(code: str) -> str:
    """The text pygments' lexer hands back for ``code`` (all its tokens joined), as rich
    makes it (``stripnl=False, ensurenl=True``): a leading byte-order mark dropped, line ends
    made ``\\n``, one ``\\n`` at the end."""
    code = code.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return code if code.endswith("\n") else code + "\n"
