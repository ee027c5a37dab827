"""Wait on a condition, never on time: the one bounded poll every test uses.

A test that checks state right after an action (a key press, a request, a signal) races
the program doing the work; under load the check comes first and the test fails although
nothing is wrong. So a test waits until the condition holds, with a generous bound, and on
timeout fails saying what it last saw. :func:`wait_until` polls from ordinary code;
:func:`wait_until_async` polls from a coroutine (Textual's Pilot), where the pause between
polls must let the event loop run.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

WAIT_S = 60.0
"""How long a condition may take before the test fails (generous: CI machines are slow)."""
INTERVAL_S = 0.05
"""Pause between polls."""


class _Poll:
    """The bookkeeping shared by both waits: the deadline and the failure message."""

    def __init__(self, what: str, timeout: float, saw: Callable[[], object] | None) -> None:
        self.what = what
        self.timeout = timeout
        self.saw = saw
        self.deadline = time.monotonic() + timeout

    def expired(self) -> bool:
        """The bound has passed."""
        return time.monotonic() >= self.deadline

    def failure(self, last: object) -> AssertionError:
        """Fail naming the condition and what the test saw last."""
        seen = last
        if self.saw is not None:
            try:
                seen = self.saw()
            except Exception as exc:  # describing must never hide the timeout itself
                seen = f"(could not describe: {exc!r})"
        return AssertionError(f"timed out after {self.timeout:g} s waiting for {self.what}; "
                              f"saw: {seen}")


def wait_until(condition: Callable[[], T], what: str, *, timeout: float = WAIT_S,
               saw: Callable[[], object] | None = None, interval: float = INTERVAL_S) -> T:
    """Poll ``condition`` until it returns something true and return that.

    On timeout raise AssertionError naming ``what`` and showing ``saw()`` (or the last
    value ``condition`` returned).
    """
    poll = _Poll(what, timeout, saw)
    while True:
        value = condition()
        if value:
            return value
        if poll.expired():
            raise poll.failure(value)
        time.sleep(interval)


async def wait_until_async(condition: Callable[[], T], what: str, *,
                           pause: Callable[[], Awaitable[object]], timeout: float = WAIT_S,
                           saw: Callable[[], object] | None = None) -> T:
    """:func:`wait_until` inside a coroutine: ``await pause()`` between polls."""
    poll = _Poll(what, timeout, saw)
    while True:
        value = condition()
        if value:
            return value
        if poll.expired():
            raise poll.failure(value)
        await pause()
