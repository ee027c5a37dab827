"""The confirmations the daemon's own risk tier demands, checked before a plan runs or a
rollback starts.

Nothing the client says about a plan's risk is trusted: the tier, and the word a HIGH plan's
second confirmation must carry, are computed here from the daemon's annotation
(:mod:`anna_common.risk.tiers`) and compared in constant time. A flag alone is never the person's
confirmation: a client that never asked cannot send the word.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.errors import AnnaError, ErrorCode
from anna_common.risk import tiers

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan
    from anna_common.protocol.models import ExecuteRequest, RollbackRequest


def _word_state(typed: str | None) -> str:
    return "missing" if typed is None or not typed.strip() else "mismatch"


def check_confirmations(annotated: AnnotatedPlan, request: ExecuteRequest) -> None:
    """The daemon's own tier decides: LOW/MEDIUM need one confirmation, HIGH two, and the
    second must carry the word the daemon computed (compared in constant time). Rollback
    commands count toward the tier (:mod:`anna_common.risk.tiers`)."""
    needed = tiers.confirmations_needed(annotated)
    risk = tiers.plan_risk(annotated)
    given = 2 if request.confirmed and request.high_confirmed else int(request.confirmed)
    if given < needed:
        what = "two confirmations (the second naming what it touches)" if needed == 2 else \
            "a confirmation"
        raise AnnaError(f"this {risk} plan needs {what}", code=ErrorCode.CONFIRMATION_REQUIRED,
                        detail={"needed": needed, "given": given})
    if needed == 2 and not tiers.word_matches(tiers.plan_word(annotated), request.confirm_word):
        # the flag alone is not the person's word: a client that never asked cannot send it
        raise AnnaError("this HIGH plan needs the confirmation word the person typed; it is "
                        "missing or does not match, and nothing was run",
                        code=ErrorCode.CONFIRMATION_REQUIRED,
                        detail={"needed": needed, "given": 1,
                                "word": _word_state(request.confirm_word)})


def check_rollback_word(annotated: AnnotatedPlan, request: RollbackRequest) -> None:
    """A rollback with a HIGH rollback command needs the second confirmation with the word
    the daemon names (the first, ``confirmed``, is checked before the plan is read)."""
    word = tiers.rollback_word(annotated)
    # a HIGH rollback command is as HIGH at rollback time as it was at execute
    if word is not None and not (request.high_confirmed and
                                 tiers.word_matches(word, request.confirm_word)):
        raise AnnaError("a rollback command of this plan is HIGH: it needs the second "
                        "confirmation with the word it names",
                        code=ErrorCode.CONFIRMATION_REQUIRED,
                        detail={"needed": 2, "given": 1, "word": _word_state(
                            request.confirm_word)})
