"""Planning with a spinner on stderr (terminals only); Ctrl-C cancels the planner.

With a :class:`~annactl.ui.streamed.ProsePrinter`, the reply's prose (an answer, a plan's
analysis) is printed as the model writes it, checked for every spinner frame (0.1 s); the
spinner stops when the first words are printed, since they show the model is working.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode

if TYPE_CHECKING:
    from collections.abc import Callable

    from annactl.commands.prepared import Prepared
    from annactl.planning.outcome import Progress
    from annactl.ui.console import Consoles
    from annactl.ui.streamed import ProsePrinter

CANCEL_GRACE_S = 2.0
"""How long Ctrl-C waits for the planner to notice the cancel before leaving anyway."""


def interrupted(message: str) -> AnnaError:
    """The error for Ctrl-C (exit 130)."""
    return AnnaError(message, code=ErrorCode.CANCELLED)


class _Offered:
    """Anna's offline answer on its way from the planner's thread to the main thread."""

    def __init__(self, on_offline: Callable[[Prepared], None] | None) -> None:
        self.on_offline = on_offline
        self.offered: list[Prepared] = []
        """Appended by the planner's thread (one answer at most)."""
        self.shown: Prepared | None = None
        """The answer once ``on_offline`` showed it."""

    def waiting(self) -> bool:
        """An answer came and is not shown yet."""
        return self.on_offline is not None and bool(self.offered) and self.shown is None

    def show(self) -> None:
        """Show the waiting answer (main thread)."""
        if self.on_offline is not None and self.waiting():
            self.on_offline(self.offered[0])
            self.shown = self.offered[0]


def plan_with_spinner(consoles: Consoles, make: Callable[..., Prepared], *,
                      show_spinner: bool,
                      on_offline: Callable[[Prepared], None] | None = None,
                      prose: ProsePrinter | None = None) -> Prepared:
    """Run ``make(on_progress=..., cancel=...)`` in a thread, with a spinner; Ctrl-C cancels.

    With ``on_offline`` (the REPL, issue 24.1), ``make`` also gets ``on_offline=``: Anna's
    offline answer is handed to ``on_offline`` on this thread, the spinner paused, while the
    model goes on; Ctrl-C after it was shown stops waiting and returns it. With ``prose``,
    the reply's prose is printed as it comes (never with ``--json``: the caller passes none).
    """
    cancel = threading.Event()
    box: dict[str, Any] = {}
    latest: list[Progress] = []
    offered = _Offered(on_offline)

    def work() -> None:
        hooks: dict[str, Any] = {"on_progress": latest.append, "cancel": cancel}
        if on_offline is not None:
            hooks["on_offline"] = offered.offered.append
        try:
            box["value"] = make(**hooks)
        except BaseException as exc:  # handed to the main thread, which reports it
            box["error"] = exc

    # A daemon thread: if the model never answers a cancel, leaving must not wait for it.
    thread = threading.Thread(target=work, name="planner", daemon=True)
    started = time.monotonic()
    thread.start()
    try:
        _wait(thread, consoles, latest, started, show_spinner, offered, prose)
    except KeyboardInterrupt:
        if prose is not None:
            prose.finish()
        cancel.set()
        thread.join(CANCEL_GRACE_S)
        if offered.shown is not None:  # the person saw the offline answer: it stands
            consoles.err.print("Stopped waiting for the model: Anna's offline answer stands.",
                               style="yellow", markup=False)
            return offered.shown
        raise interrupted("planning cancelled; nothing was run") from None
    if "error" in box:
        raise box["error"]
    result: Prepared = box["value"]
    return result


def _wait(thread: threading.Thread, consoles: Consoles, latest: list[Progress],
          started: float, show_spinner: bool, offered: _Offered,
          prose: ProsePrinter | None) -> None:
    def streamed() -> Any:
        return latest[-1].streamed if latest else None

    if not show_spinner:
        while thread.is_alive():
            thread.join(0.1)
            if thread.is_alive():
                offered.show()
            if prose is not None:
                prose.feed(streamed())
        _ended(prose, streamed())
        return
    spinning = True
    with consoles.err.status("Planning…", spinner="dots") as spinner:
        while thread.is_alive():
            thread.join(0.1)
            if thread.is_alive() and offered.waiting():
                spinner.stop()  # the answer is printed where the spinner was, then it goes on
                offered.show()
                if spinning:
                    spinner.start()
            if prose is not None and prose.pending(streamed()):
                if spinning:
                    spinner.stop()  # the words show the model at work; no line to redraw
                    spinning = False
                prose.feed(streamed())
            if spinning:
                spinner.update(_spinner_text(latest[-1] if latest else None, started))
    _ended(prose, streamed())


def _ended(prose: ProsePrinter | None, streamed: Any) -> None:
    """The planner is done: what came after the last frame, then the prose's newline."""
    if prose is not None:
        prose.feed(streamed)
        prose.finish()


def _spinner_text(progress: Progress | None, started: float) -> Any:
    from rich.text import Text

    from annactl.ui.waiting import progress_line

    return Text("Planning… ") + progress_line(progress, time.monotonic() - started)
