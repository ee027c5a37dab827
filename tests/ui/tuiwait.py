"""Waiting on a Textual app driven by Pilot: until a screen is mounted and focused as expected.

Textual switches screens, mounts their children and applies ``AUTO_FOCUS`` in separate
steps of its event loop, and workers report from threads; a check right after
``pilot.press`` or ``pilot.pause()`` can run before any of that. These helpers poll (with
:func:`tests.waiting.wait_until_async`) and fail describing the app as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from textual.pilot import Pilot
from textual.screen import Screen

from tests.waiting import INTERVAL_S, WAIT_S, wait_until_async

T = TypeVar("T")
S = TypeVar("S", bound=Screen[Any])


def describe(app: Any) -> str:
    """The app's state, for a failure message: screens, focus, notifications."""
    focused = app.focused
    return (f"screen stack {[type(s).__name__ for s in app.screen_stack]}, "
            f"focused {type(focused).__name__ if focused else None}"
            f"#{getattr(focused, 'id', None)}, "
            f"notifications {[n.message for n in app._notifications]}")


async def until(pilot: Pilot[Any], condition: Callable[[], T], what: str, *,
                timeout: float = WAIT_S) -> T:
    """Let the app run until ``condition()`` is true; fail describing the app."""
    return await wait_until_async(condition, what, pause=lambda: pilot.pause(INTERVAL_S),
                                  timeout=timeout, saw=lambda: describe(pilot.app))


def on_screen(app: Any, screen: type[Screen[Any]], *, focus: str | None = None,
              selector: str | None = None) -> bool:
    """``screen`` is active and mounted, ``selector`` (if given) is mounted in it, and the
    focused widget (if ``focus`` is given) is that id on that screen."""
    active = app.screen
    if not isinstance(active, screen) or not active.is_mounted:
        return False
    if selector is not None and not any(w.is_mounted for w in active.query(selector)):
        return False
    if focus is None:
        return True
    focused = active.focused
    return focused is not None and focused.id == focus and app.focused is focused


async def ready(pilot: Pilot[Any], screen: type[S], *, focus: str | None = None,
                selector: str | None = None, timeout: float = WAIT_S) -> S:
    """Wait until ``screen`` is active, mounted and focused as given; return it."""
    want = screen.__name__ + (f" with {selector} mounted" if selector else "") + (
        f" and focus on #{focus}" if focus else "")
    await until(pilot, lambda: on_screen(pilot.app, screen, focus=focus, selector=selector),
                want, timeout=timeout)
    active = pilot.app.screen
    assert isinstance(active, screen)
    return active


def notified(app: Any, text: str) -> bool:
    """A notification containing ``text`` is up."""
    return any(text in n.message for n in app._notifications)
