"""The approval a plan needs: one rule shared by the client (what to ask) and the daemon
(what to demand), so the two can never disagree.

Everything here is derived from an :class:`~anna_common.findings.AnnotatedPlan` the
daemon made. A plan's tier counts its rollback commands as well as its steps: a rollback
command runs without a further question when a step fails, so approving the plan approves
it too (an INFO step whose rollback writes ``/etc`` needs that write's confirmation).

The HIGH word is compared with :func:`word_matches` on both sides: surrounding spaces are
ignored, case is not (``/etc/fstab`` is not ``/ETC/FSTAB``); the daemon compares in
constant time.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING

from anna_common.levels import RiskLevel

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan, AnnotatedStep

FALLBACK_WORD = "yes-do-it"
"""Asked for when a HIGH plan names no target (the model labelled a step HIGH that Anna's
analysis rates lower, so no touched target was found)."""
MAX_WORD_CHARS = 120
"""The word is cut to this many characters (a path can be long; nobody types 4 KiB)."""


def printable_word(raw: str | None) -> str:
    """The word as the person sees and types it: printable characters only, bounded.

    The raw word comes from a command's text (untrusted): control, format (bidi) and
    escape characters are dropped so what is shown is what must be typed.
    """
    text = "".join(ch for ch in (raw or "") if ch.isprintable())
    return text[:MAX_WORD_CHARS].strip() or FALLBACK_WORD


def _high(steps: list[AnnotatedStep]) -> list[AnnotatedStep]:
    return [s for s in steps if s.final_risk == RiskLevel.HIGH]


def plan_risk(plan: AnnotatedPlan) -> RiskLevel:
    """The plan's tier: the highest final risk of its steps *and* rollback commands.

    Recomputed from the steps rather than trusting the summary field alone; for a
    daemon-made annotation the two agree, and if they ever did not, the higher wins.
    """
    return RiskLevel.max_of(plan.final_risk, *(s.final_risk for s in plan.steps),
                            *(s.final_risk for s in plan.rollback))


def confirmations_needed(plan: AnnotatedPlan) -> int:
    """0 (INFO), 1 (LOW/MEDIUM, or a step or rollback asks for one) or 2 (HIGH).

    The daemon's policy marks (:mod:`anna_common.policy.decide`) move it between 0 and 1 only:
    an ``ask`` on any item makes it at least 1; ``allow`` on every item of an INFO/LOW plan
    waives its single confirmation. HIGH's two are never touched.
    """
    risk = plan_risk(plan)
    if risk == RiskLevel.HIGH or plan.confirmations >= 2:
        return 2
    items = [*plan.steps, *plan.rollback]
    asks = any(s.requires_confirmation for s in items)
    needed = 1 if risk >= RiskLevel.LOW or plan.confirmations == 1 or asks else 0
    if any(s.policy is not None and s.policy.action == "ask" for s in [*plan.checks, *items]):
        return 1
    asking = [s for s in items if s.final_risk >= RiskLevel.LOW or s.requires_confirmation]
    if needed == 1 and risk <= RiskLevel.LOW and items and all(
            s.policy is not None and s.policy.action == "allow" for s in asking or items):
        return 0
    return needed


def high_steps(plan: AnnotatedPlan) -> list[AnnotatedStep]:
    """The HIGH steps and rollback commands (what the second confirmation is about)."""
    return _high(plan.steps) + _high(plan.rollback)


def plan_word(plan: AnnotatedPlan) -> str | None:
    """The word a HIGH plan's second confirmation asks for (None below HIGH)."""
    if confirmations_needed(plan) < 2:
        return None
    raw = plan.confirm_word or next((s.confirm_word for s in high_steps(plan)
                                     if s.confirm_word), None)
    # no word named: what the HIGH step writes, never the fixed fallback when it is known
    raw = raw or next((s.writes[0] for s in high_steps(plan) if s.writes), None)
    return printable_word(raw)


def rollback_risk(plan: AnnotatedPlan) -> RiskLevel:
    """The tier of a later ``rollback``: the highest final risk of the rollback commands.

    A rollback always needs at least one confirmation (it changes the system); a HIGH
    rollback command also needs its word, as it did at execute.
    """
    return RiskLevel.max_of(*(s.final_risk for s in plan.rollback))


def rollback_word(plan: AnnotatedPlan) -> str | None:
    """The word a rollback with a HIGH rollback command asks for (None otherwise)."""
    if rollback_risk(plan) != RiskLevel.HIGH:
        return None
    return printable_word(next((s.confirm_word for s in _high(plan.rollback)
                                if s.confirm_word), None))


def word_matches(expected: str | None, typed: str | None) -> bool:
    """Whether ``typed`` is ``expected`` (surrounding spaces ignored, case kept).

    Constant time in the typed text, so a daemon comparing it leaks nothing by timing.
    """
    if expected is None or typed is None:
        return False
    given = typed.strip().encode("utf-8", "surrogatepass")
    return hmac.compare_digest(given, expected.encode("utf-8", "surrogatepass"))
