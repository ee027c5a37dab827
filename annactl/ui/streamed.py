"""Printing a reply's prose while the model writes it (issue 36.1), inert.

:class:`ProsePrinter` is fed the planner's :class:`~annactl.planning.streaming.StreamedReply`
between spinner frames and prints what is new of its prose. The prose is the model's:
untrusted. Each time the whole prose so far is made inert (:func:`~annactl.ui.console.inert`)
and only what lies beyond the printed part is written, as plain text (never markup). An
escape sequence can arrive cut in two; the tail from a trailing ESC (or 8-bit CSI) on is
held back until the sequence is complete, so the part printed never changes once printed
(when it would, printing stops and the plan view shows the whole text instead).

Only the first reply with prose is printed: a repair or a refinement writes the plan again,
and the final view shows whatever differs (:attr:`ProsePrinter.shown`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from annactl.planning.streaming import StreamedReply

HELD_CHARS = 64
"""A trailing escape sequence no longer than this is held back until it is complete."""


def _settled(text: str) -> str:
    """``text`` without a trailing escape sequence that may still be cut."""
    cut = max(text.rfind("\x1b"), text.rfind("\x9b"))
    return text[:cut] if cut >= 0 and len(text) - cut <= HELD_CHARS else text


class ProsePrinter:
    """Prints the growing prose of one streamed reply on ``console``."""

    def __init__(self, console: Console, plans: Console | None = None) -> None:
        self.console = console
        """Where an answer's prose goes (stdout: the answer is the output)."""
        self.plans = plans or console
        """Where a plan's analysis goes: with a read-only plan's answer on stdout, a plan's
        prose is chrome (stderr), like the plan table it introduces."""
        self._to = console
        self.shown = ""
        """The inert prose printed so far (what the final view need not repeat)."""
        self._call: int | None = None
        self._stopped = False
        self._ended = False

    @property
    def started(self) -> bool:
        """Something was printed."""
        return bool(self.shown)

    def pending(self, streamed: StreamedReply | None) -> bool:
        """There is prose in ``streamed`` this printer would print now."""
        if streamed is None or self._stopped:
            return False
        if self._call is not None and streamed.call != self._call:
            return False
        text = streamed.prose()
        return bool(text and text.strip())

    def feed(self, streamed: StreamedReply | None) -> None:
        """Print what is new of ``streamed``'s prose."""
        from rich.text import Text

        from annactl.ui.console import inert

        if not self.pending(streamed):
            return
        assert streamed is not None
        self._call = streamed.call
        clean = inert(_settled(streamed.prose() or "")).lstrip()
        if not clean.startswith(self.shown):
            self._stopped = True  # never rewrite what is on the screen
            return
        new = clean[len(self.shown):]
        if new:
            self._to = self.console if streamed.form == "answer" else self.plans
            self._to.print(Text(new), end="", soft_wrap=True, highlight=False, markup=False)
            self._to.file.flush()
            self.shown = clean

    def finish(self) -> None:
        """End the printed prose with a newline (once), if any was printed."""
        if self.shown and not self._ended:
            self._to.print()
        self._stopped = self._ended = True

    def printed_on(self, console: Console) -> bool:
        """The prose went to ``console`` (a view there need not repeat it)."""
        return self._to is console

    def repeats(self, text: str) -> bool:
        """``text`` (the final plan's prose) is what was printed: the view leaves it out."""
        from annactl.ui.console import inert

        return bool(self.shown) and inert(text).strip() == self.shown.strip()


def prose_printer(console: Console, *, as_json: bool, plans: Console | None = None
                  ) -> ProsePrinter | None:
    """A printer for the model's prose as it is written (an answer's on ``console``, a plan's
    on ``plans``), or None with ``--json``: the document stays one document."""
    return None if as_json else ProsePrinter(console, plans)
