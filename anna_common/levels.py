"""Risk levels, scopes and canonical JSON: the plan's vocabulary without its pydantic models.

:mod:`anna_common.plan` re-exports all three (the same objects). They live here so the
client can compare levels (:mod:`anna_common.risk.tiers`) and hash JSON without building the plan
models: ``annactl apply`` of a stored plan starts within 15x a bare interpreter
(``bench/startup.py``), and importing pydantic alone costs more than half of that.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any


class Scope(StrEnum):
    """Who a step must run as (Anna decides it from the parsed command, never the model)."""

    USER = "user"
    """The caller's own uid, home and session."""
    SYSTEM = "system"
    """root, in the system daemon."""


class RiskLevel(StrEnum):
    """Risk tiers, ordered ``INFO < LOW < MEDIUM < HIGH``.

    INFO: pure inspection, runs without asking. LOW: reversible user
    configuration, one confirmation. MEDIUM: packages and services, one
    confirmation. HIGH: bootloader, network, filesystems, identity; two
    confirmations, the second naming what it touches.
    """

    INFO = "INFO"
    LOW = "LOW"
    MEDIUM = "MEDIUM"
    HIGH = "HIGH"

    @property
    def rank(self) -> int:
        """0 for INFO up to 3 for HIGH."""
        return _RANK[self]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, RiskLevel):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, RiskLevel):
            return NotImplemented
        return self.rank <= other.rank

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, RiskLevel):
            return NotImplemented
        return self.rank > other.rank

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, RiskLevel):
            return NotImplemented
        return self.rank >= other.rank

    @classmethod
    def max_of(cls, *levels: RiskLevel) -> RiskLevel:
        """The highest of the given levels (INFO when none are given)."""
        return max(levels, key=lambda level: level.rank, default=cls.INFO)


_RANK = {RiskLevel.INFO: 0, RiskLevel.LOW: 1, RiskLevel.MEDIUM: 2, RiskLevel.HIGH: 3}


def canonical_json(value: Any) -> bytes:
    """Canonical JSON: sorted keys, no whitespace, UTF-8, strings exactly as given.

    Used for plan digests, journal hashes and cache keys; two equal values always give
    the same bytes, whatever order their keys arrived in. Strings are NOT Unicode-
    normalised on purpose: the digest binds the exact bytes that will run, so an NFD
    command and its NFC twin (different bytes, possibly different files) must have
    different digests.
    """
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return text.encode("utf-8")
