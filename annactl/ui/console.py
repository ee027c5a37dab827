"""Consoles and the one function that makes outside text inert.

Text from the model and from telemetry is untrusted: it may hold escape
sequences (``\\x1b[31m``, ``\\x1b]0;title\\x07``), other control characters,
bidirectional overrides, or Rich markup (``[bold red]``). :func:`inert` strips
the first three; :func:`inert_text` returns a Rich ``Text`` that is never
parsed as markup; :func:`inert_markup` escapes it for use inside markup.
Every renderer (one-shot, REPL, TUI) goes through these.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

_ESCAPES = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL/ST (titles, hyperlinks)
    r"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?"  # DCS, PM, APC, SOS strings
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI sequences (colours, cursor moves)
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
    r"|\x1b[ -/]*[0-~]?"  # other ESC sequences, or a lone ESC
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def inert(text: object, *, max_chars: int | None = None) -> str:
    """Untrusted text without escape sequences and control characters (``\\n``, ``\\t`` kept)."""
    value = text if isinstance(text, str) else str(text)
    value = _ESCAPES.sub("", value)
    value = _CONTROLS.sub("", value.replace("\r\n", "\n"))
    if max_chars is not None and len(value) > max_chars:
        value = value[: max(0, max_chars - 1)] + "…"
    return value


def inert_text(text: object, style: str = "", *, max_chars: int | None = None) -> Text:
    """A Rich ``Text`` of untrusted text: markup in it is shown literally."""
    from rich.text import Text

    return Text(inert(text, max_chars=max_chars), style=style)


def inert_markup(text: object, *, max_chars: int | None = None) -> str:
    """Untrusted text escaped for use inside a Rich markup string."""
    from rich.markup import escape

    return escape(inert(text, max_chars=max_chars))


@dataclass
class Consoles:
    """The two consoles a command writes to: results on stdout, progress and errors on stderr."""

    out: Console
    """Results (plans, tables, JSON)."""
    err: Console
    """Spinners, prompts, warnings, errors."""

    @property
    def interactive(self) -> bool:
        """Both stdin and stderr are terminals (prompts and spinners make sense)."""
        return sys.stdin.isatty() and self.err.is_terminal


def emit_json(consoles: Consoles, data: object) -> None:
    """Print a JSON document on stdout: indented and coloured on a terminal, compact otherwise.

    Untrusted strings stay escaped by JSON itself: ``ensure_ascii`` turns every control
    character, C1 code (``\\x9b`` is a CSI on some terminals) and bidi override into a
    ``\\uXXXX`` escape, so no escape code reaches the terminal either way.
    """
    import json

    if isinstance(data, dict) and "code" not in data:
        # the contract: every document has a code (``OK``, or its plan state's failure)
        from annactl.ui.jsonedge import with_code

        data = with_code(data)
    if consoles.out.is_terminal:
        consoles.out.print_json(data=data, ensure_ascii=True, default=str)
        return
    consoles.out.file.write(json.dumps(data, ensure_ascii=True, default=str) + "\n")
    consoles.out.file.flush()


class TrimmedLines:
    """A text stream that drops the spaces Rich pads lines with (table cells, grids) before
    each newline, for output that goes to a pipe or a file (``annactl status | cat``)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self._tail = ""

    def write(self, text: str) -> int:
        """Write every complete line without trailing blanks; keep the last partial one."""
        lines = (self._tail + text).split("\n")
        self._tail = lines.pop()
        if lines:
            self.stream.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        """Write what is pending and flush the stream."""
        if self._tail:
            self.stream.write(self._tail)
            self._tail = ""
        self.stream.flush()

    def isatty(self) -> bool:
        """Never a terminal (only pipes and files are wrapped)."""
        return False

    def fileno(self) -> int:
        """The underlying descriptor."""
        return self.stream.fileno()


def make_consoles(*, no_color: bool = False) -> Consoles:
    """Consoles for a real process (colour follows the terminal and NO_COLOR).

    On a terminal, results fit its width. To a pipe or a file, prose is not hard-wrapped
    (``soft_wrap``), tables keep the width ``COLUMNS`` says (80 when unset) and fold only
    their long cells, and no line ends in blanks.
    """
    from rich.console import Console

    tty = sys.stdout.isatty()
    out = Console(no_color=no_color or None, highlight=False, soft_wrap=not tty,
                  file=None if tty else TrimmedLines(sys.stdout))  # type: ignore[arg-type]
    # stderr (notes, errors, progress) to a file or pipe: one message, one line
    err = Console(stderr=True, no_color=no_color or None, highlight=False,
                  soft_wrap=not sys.stderr.isatty())
    return Consoles(out=out, err=err)
