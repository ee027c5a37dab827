"""Issue 22: following the values an arithmetic text evaluates is linear, not quadratic.

``a='b[1]'; a='c[1]'; …; (( a+a+…+a ))`` (and nested subscripts ``${a[${a[…]}]}``, which
name the same variables again at every level) had ``_values_evaluated`` look at every value
of a name once per mention: names × values. The work is counted (membership tests of the
``seen`` set, the loop's unit of work), not timed, so the bound holds on a loaded machine.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from anna_common.risk.assess import AssessContext
from anna_common.risk.rules import builtins
from anna_common.risk.rules.base import Out

CTX = AssessContext(distro="arch", home="/home/alice")


class CountingSet(set[str]):
    """A set that counts the membership tests made on it."""

    tests = 0

    def __contains__(self, item: object) -> bool:
        self.tests += 1
        return super().__contains__(item)


def work(mentions: int, values: int, *, nested: bool = False) -> tuple[int, Out]:
    """The membership tests ``judge_arithmetic``'s value-following makes for one command
    whose arithmetic names ``a`` ``mentions`` times, ``a`` having ``values`` values."""
    text = ("${a[" * mentions + "1" + "]}" * mentions) if nested else "+".join(["a"] * mentions)
    assigned = {"a": [f"b{i}[1]" for i in range(values)]}
    seen = CountingSet()
    out = Out(ctx=CTX)
    builtins._values_evaluated(text, assigned, out, seen, set())
    return seen.tests, out


@settings(max_examples=30, deadline=None)
@given(mentions=st.integers(1, 400), values=st.integers(1, 400), nested=st.booleans())
def test_the_work_is_the_mentions_plus_the_values(mentions: int, values: int,
                                                  nested: bool) -> None:
    tests, _ = work(mentions, values, nested=nested)
    # each value is looked at once (and each name in a value once): never mentions × values
    assert tests <= values + 2, (mentions, values, tests)


def test_doubling_the_input_doubles_the_work_at_most() -> None:
    for nested in (False, True):
        small, _ = work(200, 200, nested=nested)
        large, _ = work(400, 400, nested=nested)
        assert large / small <= 2.1, (nested, small, large)  # quadratic would be 4


def test_every_value_is_still_followed() -> None:
    """The bound changes the work, not the verdict: a value with code is still judged."""
    text = "a+b"
    assigned = {"a": ["x[1]"], "b": ["y[$(id)]"], "x": ["z[1]"]}
    seen = CountingSet()
    out = Out(ctx=CTX)
    builtins._values_evaluated(text, assigned, out, seen, set())
    assert {"x[1]", "y[$(id)]"} <= set(seen)
    assert any("arithmetic" in r.message for r in out.reasons), out.reasons
