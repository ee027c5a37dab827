"""The one bounded poll the tests wait with: returns the condition's value, or fails saying
what it waited for and what it saw."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from tests.waiting import wait_until, wait_until_async


def test_returns_the_first_true_value() -> None:
    counter = itertools.count()
    assert wait_until(lambda: next(counter) >= 3 and "ready", "the counter") == "ready"


def test_times_out_naming_the_condition_and_what_it_saw() -> None:
    with pytest.raises(AssertionError) as info:
        wait_until(lambda: False, "the door to open", timeout=0.2, saw=lambda: "a closed door")
    assert "the door to open" in str(info.value) and "a closed door" in str(info.value)
    with pytest.raises(AssertionError) as info:
        wait_until(lambda: [], "a list", timeout=0.1)
    assert "saw: []" in str(info.value)  # without saw(), the condition's last value


def test_a_failing_description_does_not_hide_the_timeout() -> None:
    def broken() -> str:
        raise RuntimeError("boom")

    with pytest.raises(AssertionError) as info:
        wait_until(lambda: False, "x", timeout=0.1, saw=broken)
    assert "timed out" in str(info.value) and "boom" in str(info.value)


def test_async_wait_pauses_between_polls() -> None:
    pauses: list[int] = []

    async def pause() -> None:
        pauses.append(1)
        await asyncio.sleep(0)

    async def main() -> int:
        return await wait_until_async(lambda: len(pauses) >= 2 and len(pauses), "two pauses",
                                      pause=pause)

    assert asyncio.run(main()) == 2
