"""Planning with a spinner on stderr (terminals only); Ctrl-C cancels the planner."""

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

CANCEL_GRACE_S = 2.0
"""How long Ctrl-C waits for the planner to notice the cancel before leaving anyway."""


def interrupted(message: str) -> AnnaError:
    """The error for Ctrl-C (exit 130)."""
    return AnnaError(message, code=ErrorCode.CANCELLED)


def plan_with_spinner(consoles: Consoles, make: Callable[..., Prepared], *,
                      show_spinner: bool) -> Prepared:
    """Run ``make(on_progress=..., cancel=...)`` in a thread, with a spinner; Ctrl-C cancels."""
    cancel = threading.Event()
    box: dict[str, Any] = {}
    latest: list[Progress] = []

    def work() -> None:
        try:
            box["value"] = make(on_progress=latest.append, cancel=cancel)
        except BaseException as exc:  # handed to the main thread, which reports it
            box["error"] = exc

    # A daemon thread: if the model never answers a cancel, leaving must not wait for it.
    thread = threading.Thread(target=work, name="planner", daemon=True)
    started = time.monotonic()
    thread.start()
    try:
        _wait(thread, consoles, latest, started, show_spinner)
    except KeyboardInterrupt:
        cancel.set()
        thread.join(CANCEL_GRACE_S)
        raise interrupted("planning cancelled; nothing was run") from None
    if "error" in box:
        raise box["error"]
    result: Prepared = box["value"]
    return result


def _wait(thread: threading.Thread, consoles: Consoles, latest: list[Progress],
          started: float, show_spinner: bool) -> None:
    if not show_spinner:
        while thread.is_alive():
            thread.join(0.1)
        return
    with consoles.err.status("Planning…", spinner="dots") as spinner:
        while thread.is_alive():
            thread.join(0.1)
            spinner.update(_spinner_text(latest[-1] if latest else None, started))


def _spinner_text(progress: Progress | None, started: float) -> Any:
    from rich.text import Text

    from annactl.ui.console import inert

    elapsed = time.monotonic() - started
    if progress is None:
        return Text(f"Planning… {elapsed:.1f} s")
    line = Text(f"Planning… {inert(progress.stage, max_chars=20)} · {elapsed:.1f} s")
    if progress.tokens:
        line.append(f" · {progress.tokens} tokens")
    if progress.message:  # the model budget left (ANNA_LLM_BUDGET)
        line.append(f" · {inert(progress.message, max_chars=60)}")
    return line
