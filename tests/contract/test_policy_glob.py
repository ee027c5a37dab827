"""Issue 13 item 2: the policy's path matching (glob against glob) and its cost bounds."""

from __future__ import annotations

import time

import pytest

from anna_common.policy.decide import decide, parse
from anna_common.policy.glob import intersects, is_valid_glob, rule_variants, under
from anna_common.policy.subject import subject
from anna_common.risk.assess import assess
from anna_common.risk.rules.base import AssessContext
from tests.worst_inputs import worst_inputs

CTX = AssessContext(distro="arch", home="/home/alice")


@pytest.mark.parametrize(("rule", "path", "expected"), [
    ("/etc/ssh/**", "/etc/ssh/sshd_config", True),
    ("/etc/ssh/**", "/etc/sshx", False),
    ("/etc/*/x", "/etc/a/b/x", False),
    ("/etc/**/x", "/etc/a/b/x", True),
    ("/etc/[ab]c", "/etc/bc", True),
    ("/etc/[ab]c", "/etc/cc", False),
    ("/srv/[!x]*", "/srv/\u00fcber", True),
    ("/srv/[!x]*", "/srv/xfile", False),
    ("/etc/ssh/**", "/e?c/s*", True),          # the command's own wildcards
    ("/etc/ssh/sshd_config", "/etc/*", True),  # a command-side * may hold a /
    ("/etc/ssh/**", "/etc/[!s]*", False),     # its first letter cannot be the s of ssh
    ("/etc/ssh/**", "/usr/*", False),
    ("/srv/**", "/srv/" + "a" * 4000, True),
    ("/srv/a*b", "/srv/" + "a*" * 2000, True),  # long patterns: no recursion, bounded work
])
def test_two_patterns_intersect_when_some_path_matches_both(rule: str, path: str,
                                                           expected: bool) -> None:
    assert intersects(rule, path) is expected


def test_under_reaches_the_area_from_above_and_variants_cover_the_directory() -> None:
    assert under("/etc/ssh/**", "/etc") and under("/etc/ssh/**", "/")
    assert not under("/etc/ssh/**", "/etc/sshd") and not under("/etc/ssh/**", "/var")
    assert set(rule_variants("/a/**/b/**")) >= {"/a/**/b/**", "/a/b/**", "/a/**/b", "/a/b"}


@pytest.mark.parametrize(("glob", "ok"), [
    ("/etc/ssh/**", True), ("~/.ssh/*", True), ("/etc/[ab]c", True), ("etc/x", False),
    ("/etc/[ab", False), ("/etc/a**", False), ("/etc/\x1b[31m", False), ("~user/x", False),
])
def test_rule_globs_are_validated(glob: str, ok: bool) -> None:
    assert is_valid_glob(glob) is ok


def test_the_worst_inputs_are_decided_quickly_and_never_raise() -> None:
    policy = parse("".join(
        f'[[rule]]\nid = "r{i}"\naction = "{("deny", "ask", "allow")[i % 3]}"\n'
        + (f'path = "/srv/d{i}/**/x*[ab]?"\n' if i % 2 else f'program = "p{i}"\n') + "\n"
        for i in range(200)), source="/p.toml")
    slowest = 0.0
    for name, command in worst_inputs().items():
        verdict = assess(command, CTX)
        start = time.process_time()
        decision = decide(policy, subject(command, CTX), verdict.risk, verdict.scope)
        slowest = max(slowest, time.process_time() - start)
        assert decision.action in ("deny", "ask", "allow", "default"), name
    assert slowest < 0.5, slowest
