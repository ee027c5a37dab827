"""A command past the analysis budget has no known write targets: its rollback cannot be honest
unless the verdict says Anna cannot back it up (the daemon keys its rollback report on
``uncaptured_write``)."""

from __future__ import annotations

import pytest

from anna_common.plan import RiskLevel
from anna_common.risk.assess import assess
from anna_common.risk.rules.base import Code

OVER_BUDGET = [
    "touch ~/x" + "{a,b}" * 20,
    "echo " + " ".join(f"w{i}" for i in range(400)) + " > ~/f",
    "sudo bash -c 'cp ~/a /tmp/b" + "{1,2}" * 16 + "'",
]


@pytest.mark.parametrize("command", OVER_BUDGET)
def test_over_budget_commands_say_anna_cannot_back_them_up(command: str) -> None:
    verdict = assess(command)
    assert verdict.risk == RiskLevel.HIGH
    assert str(Code.TOO_LARGE) in verdict.codes
    assert str(Code.UNCAPTURED_WRITE) in verdict.codes
    assert any("Anna cannot back this up" in r for r in verdict.reasons)


def test_a_small_command_is_not_marked_uncaptured() -> None:
    verdict = assess("touch ~/x{a,b}")
    assert str(Code.UNCAPTURED_WRITE) not in verdict.codes
    assert verdict.risk == RiskLevel.LOW
