"""Issue 22 item 1: the analysis is bounded whatever the input's depth or width.

Generated inputs nest substitutions, subshells, groups, quotes, ``bash -c`` and ``&&`` chains
to any depth and repeat them side by side. For every one, the risk assessment and the
policy's view never raise, never exhaust the stack, and stay within their budgets: the
policy sees at most one part per simple command the budget lets the analyser emit (it was
2^(n+1)−1 for ``echo $($(…))`` n deep), the memory allocated stays under a few MB
(tracemalloc, a count, not a clock), and what is too deep is judged HIGH with a reason.
"""

from __future__ import annotations

import sys
import threading
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anna_common.plan import RiskLevel
from anna_common.policy import subject as policy_subject
from anna_common.policy.subject import subject
from anna_common.risk import assess as risk
from anna_common.risk.assess import AssessContext, assess
from anna_common.shell.grammar import analyse
from anna_common.shell.model import LIMITS, MAX_LEVELS, MAX_SOURCE

CTX = AssessContext(distro="arch", home="/home/alice")
MAX_PARTS = LIMITS["commands"] * 2 + 8
"""Parts the policy may list for one command: each command the budget allows, plus the
opaque reasons (a generous bound; exponential growth passes it at depth 8)."""
MAX_ALLOCATED = 64 * 1024 * 1024
"""Peak bytes allocated while judging one command of at most 4 KB (25 deep used 797 MB)."""

_WRAPS = [("$(", ")"), ("\"$(", ")\""), ("(", ")"), ("{ ", "; }"), ("`", "`"),
          ("bash -c '", "'"), ("<(", ")"), ("${a[", "]}"), ("$(( ", " ))"),
          ("if true; then ", "; fi"), ("while false; do ", "; done")]


def _nest(inner: str, wraps: list[tuple[str, str]]) -> str:
    for opening, closing in wraps:
        inner = opening + inner + closing
    return inner


@st.composite
def hostile(draw: st.DrawFn) -> str:
    """A command nested ``depth`` deep with ``width`` copies side by side, cut to 4 KB."""
    depth = draw(st.integers(min_value=1, max_value=1200))
    kinds = draw(st.lists(st.sampled_from(_WRAPS), min_size=1, max_size=4))
    wraps = [kinds[i % len(kinds)] for i in range(depth)]
    core = draw(st.sampled_from(["x", "rm -rf /", "ls", "echo $(id)"]))
    one = _nest(core, wraps)
    width = draw(st.integers(min_value=1, max_value=20))
    joiner = draw(st.sampled_from([" ", "; ", " && ", " | "]))
    return ("echo " + joiner.join([one] * width))[:MAX_SOURCE]


def _judged_within_bounds(command: str) -> None:
    risk._assess_cached.cache_clear()
    policy_subject._subject_cached.cache_clear()
    tracemalloc.start()
    try:
        verdict = assess(command, CTX)
        view = subject(command, CTX)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert verdict.risk >= RiskLevel.INFO
    assert not any("failed" in r for r in verdict.reasons), verdict.reasons
    assert not any("analysis failed" in p.text for p in view.parts), view.parts
    assert len(view.parts) <= MAX_PARTS, len(view.parts)
    assert peak <= MAX_ALLOCATED, peak


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile())
def test_generated_deep_and_wide_commands_stay_within_budget(command: str) -> None:
    _judged_within_bounds(command)


@pytest.mark.parametrize("depth", [25, 30, 100, 1000])
def test_nested_substitutions_cost_one_part_per_command(depth: int) -> None:
    command = "echo " + "$(" * depth + "x" + ")" * depth
    _judged_within_bounds(command)
    view = subject(command, CTX)
    if depth < MAX_LEVELS // 2:
        # every level seen once: the echo, depth programs named at run time, x
        assert len(view.parts) <= 2 * depth + 2
    else:
        assert view.opaque
        assert assess(command, CTX).risk is RiskLevel.HIGH


@pytest.mark.parametrize("command", [
    "echo " + "$(" * 1000 + "x" + ")" * 1000,
    "(" * 2000 + "ls" + ")" * 2000,
    "ls && " * 680 + "ls",
    "echo " + '"$(' * 600 + "x" + ')"' * 600,
])
def test_too_deep_is_a_high_verdict_that_says_so(command: str) -> None:
    analysis = analyse(command)
    assert any("too complex to analyse" in why for why in analysis.too_large), analysis
    verdict = assess(command, CTX)
    assert verdict.risk is RiskLevel.HIGH
    assert any("too complex" in r or "too large" in r for r in verdict.reasons), verdict.reasons


def test_the_depth_budget_keeps_the_stack_small() -> None:
    """The walk never needs more than the interpreter gives a thread: run it where the
    recursion limit is half the default and the input is as deep as 4 KB allows."""
    command = "echo " + "$(" * 1300 + "x" + ")" * 1300
    found: list[object] = []

    def walk() -> None:
        try:
            found.append(analyse(command))
        except RecursionError as exc:  # recorded, so the assertion below names it
            found.append(exc)

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(500)
    try:
        worker = threading.Thread(target=walk)
        worker.start()
        worker.join()
    finally:
        sys.setrecursionlimit(old)
    assert len(found) == 1 and not isinstance(found[0], RecursionError), found
