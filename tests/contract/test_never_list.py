"""Seed 000's NEVER list, whole: every variant of every class is a hard ban, and each
class's look-alikes (reading, printing, the safe value) are not.

The variants are in :mod:`tests.contract.never_corpus` (at least ten per class).
"""

from __future__ import annotations

import pytest

from anna_common.risk.assess import AssessContext, assess
from tests.contract.never_corpus import NEVER, SAFE

CTX = AssessContext(distro="arch", home="/home/alice")
_BANNED = [(cls, cmd) for cls, cmds in NEVER.items() for cmd in cmds]
_SAFE = [(cls, cmd) for cls, cmds in SAFE.items() for cmd in cmds]


def test_every_class_has_ten_variants() -> None:
    short = {cls: len(cmds) for cls, cmds in NEVER.items() if len(cmds) < 10}
    assert not short, short


@pytest.mark.parametrize(("cls", "command"), _BANNED, ids=[c for _, c in _BANNED])
def test_never_variant_is_banned(cls: str, command: str) -> None:
    verdict = assess(command, CTX)
    assert verdict.banned, (cls, verdict.codes, verdict.reasons)


@pytest.mark.parametrize(("cls", "command"), _SAFE, ids=[c for _, c in _SAFE])
def test_look_alike_is_not_banned(cls: str, command: str) -> None:
    verdict = assess(command, CTX)
    assert not verdict.banned, (cls, verdict.codes, verdict.reasons)


def test_never_corpus_is_wholly_banned() -> None:
    """The figure the closing note reports: the whole NEVER corpus, banned."""
    banned = sum(assess(cmd, CTX).banned for _, cmd in _BANNED)
    assert banned == len(_BANNED)
