"""A command shown without colour is laid out exactly as rich's ``Syntax`` lays it out, alone
and in a table cell (where its measure sizes the column), at any width: only the pygments
import and the lexing are spared (annactl/ui/command_view.py). With colour it is ``Syntax``.
"""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console, RenderableType
from rich.table import Table

from annactl.ui.command_view import CommandView
from annactl.ui.console import inert
from annactl.ui.render_plan import command_text

_PIECES = st.sampled_from([
    "sed -i s/volume=3/volume=9/ ~/.config/app.conf", "ls", " ", "  ", "\n", "\n\n", "\t",
    "\r\n", "\r", "\ufeff", "'quoted text'", '"$HOME/x y"', "[bold]x[/]", "|", "&&", "#c",
    "$(date)", "<<EOF\nbody\nEOF", "日本語のパス", "averyveryveryveryveryveryverylongword",
    "é", "😀", "x" * 90])
_COMMANDS = st.lists(_PIECES, max_size=12).map("".join) | st.text(max_size=200)


def _shown(renderable: RenderableType, width: int, *, table: bool) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, highlight=False)
    if table:
        grid = Table(expand=True, show_lines=True)
        for name in ("id", "command", "risk"):
            grid.add_column(name)
        grid.add_row("look", renderable, "INFO")
        renderable = grid
    console.print(renderable)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    return str(out)


@settings(max_examples=300, deadline=None)
@given(command=_COMMANDS, width=st.integers(min_value=1, max_value=130),
       table=st.booleans())
def test_without_colour_it_is_laid_out_as_syntax_lays_it_out(command, width, table):
    view = CommandView(inert(command))
    assert _shown(view, width, table=table) == _shown(view.syntax(), width, table=table)


def test_the_plan_view_command_is_this_view_and_loads_no_pygments_to_a_pipe():
    import subprocess
    import sys

    probe = ("import io, sys\n"
             "from rich.console import Console\n"
             "from annactl.ui.render_plan import command_text\n"
             "c = Console(file=io.StringIO(), width=60, color_system=None)\n"
             "c.print(command_text('sed -i s/a/b/ ~/.config/app.conf'))\n"
             "assert 'sed -i s/a/b/' in c.file.getvalue()\n"
             "print(sorted(m for m in sys.modules if m.startswith(('pygments', 'rich.syntax'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "[]"
    assert isinstance(command_text("ls"), CommandView)


def test_with_colour_it_is_highlighted():
    console = Console(file=io.StringIO(), width=60, color_system="truecolor", highlight=False)
    console.print(command_text("echo 'hello' | grep h"))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b[" in out and "hello" in out
