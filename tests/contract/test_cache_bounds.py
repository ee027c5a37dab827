"""The analysis caches are bounded and still hold a whole plan (issue 22: idle memory).

A long-lived daemon sees any number of distinct commands: every cache in anna_common keeps a
bounded number of entries (bench/daemon_memory.py ``--distinct`` shows the resident memory
levelling off), and the per-command ones keep every command of the largest plan, so a plan
analysed again within a request (submit judges it twice) is found, not analysed again.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import anna_common
from anna_common.plan import MAX_LIST_ENTRIES, PLAN_COMMANDS
from anna_common.policy import subject as policy_subject
from anna_common.risk import assess as risk
from anna_common.risk.assess import AssessContext

CEILING = 4096
"""Most entries any one cache may keep."""
KEYED_BY_SETTINGS = {
    "anna_common.plan._schema_text": "one entry per bool (bounded or not)",
    "anna_common.positional._positional_text": "one entry per form of the client's prompt "
                                               "settings, never per input",
}
"""Unbounded caches whose keys never come from a request or a command."""


def _caches() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for info in pkgutil.walk_packages(anna_common.__path__, "anna_common."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if callable(getattr(value, "cache_info", None)) and getattr(
                    value, "__module__", None) == info.name:
                found[f"{info.name}.{name}"] = value
    return found


def test_every_cache_in_anna_common_is_bounded() -> None:
    caches = _caches()
    assert f"{risk.__name__}._assess_cached" in caches  # the walk finds them at all
    assert set(KEYED_BY_SETTINGS) <= set(caches)  # the exceptions still exist
    unbounded = {name: c.cache_info().maxsize for name, c in caches.items()
                 if name not in KEYED_BY_SETTINGS
                 and (c.cache_info().maxsize is None or c.cache_info().maxsize > CEILING)}
    assert not unbounded, unbounded


def test_the_commands_of_the_largest_plan_are_all_found_again() -> None:
    # steps, checks and rollback of one plan: each analysed a second time is a hit
    commands = [f"cp /etc/hosts ~/backup/h{i}.bak" for i in range(3 * MAX_LIST_ENTRIES)]
    assert len(commands) <= PLAN_COMMANDS
    ctx = AssessContext(distro="arch", home="/home/alice")
    for cached, analyse in ((risk._assess_cached, risk.assess),
                            (policy_subject._subject_cached, policy_subject.subject)):
        cached.cache_clear()
        for _ in range(2):
            for command in commands:
                analyse(command, ctx)
        info = cached.cache_info()
        assert (info.misses, info.hits) == (len(commands), len(commands)), info
