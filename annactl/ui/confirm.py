"""Risk-tiered confirmation: the one implementation used by one-shot, the REPL and the TUI.

The tier comes from the *daemon's* :class:`~anna_common.findings.AnnotatedPlan`
(Anna's own final risk per step), never from the model's labels alone:

| plan | what the person must do |
|---|---|
| no steps, or only INFO steps | nothing: it runs without asking |
| LOW or MEDIUM | one confirmation, default No |
| HIGH | that confirmation, then type the word the prompt names (molly-guard) |
| banned | nothing can approve it; the reasons are shown |

The tier counts the plan's rollback commands as well as its steps (they run unasked
when a step fails); the rule is :mod:`anna_common.risk.tiers`, which the daemon applies too.

``--yes`` stands in for the one confirmation (up to MEDIUM); a HIGH plan also
needs ``--allow-high``. Without a terminal and without those flags nothing
runs: the plan is declined (exit 4). The word the person typed travels to the
daemon, which compares it with the word it computed itself; with
``--yes --allow-high`` the client sends the word the daemon's own annotation
names, because those flags *are* the person's approval of that HIGH plan.

The front ends differ only in how they ask (a :class:`Prompter` for the
terminal; modal screens in the TUI, which call :func:`requirement`,
:func:`word_matches` and :func:`approval` directly).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from anna_common.errors import AnnaError, ErrorCode, PlanError
from anna_common.levels import RiskLevel
from anna_common.risk import tiers
from annactl.ui.console import inert

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

    from anna_common.findings import AnnotatedPlan, AnnotatedStep
    from anna_common.protocol.preview import PlanPreview

FALLBACK_WORD = tiers.FALLBACK_WORD
"""Asked for when a HIGH plan names no target (the model labelled a step HIGH that Anna's
analysis rates lower, so no touched target was found)."""


class Tier(StrEnum):
    """How much approval a plan needs."""

    NONE = "none"
    """INFO only (or no steps): runs without asking."""
    ONE = "one"
    """LOW or MEDIUM: one confirmation."""
    TWO = "two"
    """HIGH: a confirmation and the typed word."""
    BANNED = "banned"
    """Hard-banned: can never be approved."""


@dataclass(frozen=True)
class Requirement:
    """What a plan needs before it may run, derived from Anna's annotation."""

    tier: Tier
    """The tier."""
    risk: RiskLevel
    """The plan's final risk (highest final risk of its steps)."""
    word: str | None = None
    """For :attr:`Tier.TWO`: what the person must type (untrusted text, already inert)."""
    reasons: list[str] = field(default_factory=list)
    """For :attr:`Tier.BANNED`: why (one line per banned command); for TWO: what is HIGH."""


@dataclass(frozen=True)
class Approval:
    """What the person granted; sent to the daemon with ``execute``."""

    confirmed: bool
    """Confirmed once (LOW/MEDIUM, and the first half of HIGH)."""
    high_confirmed: bool
    """Typed the confirmation word (HIGH)."""
    word: str | None = None
    """For HIGH: the word the person typed (or, with ``--yes --allow-high``, the word the
    daemon's annotation names); the daemon compares it with its own."""


class Prompter(Protocol):
    """How a front end asks a question at the terminal."""

    def yes_no(self, question: str) -> bool:
        """Ask a yes/no question whose default (empty answer, end of input) is No."""

    def text(self, question: str) -> str:
        """Ask for a line of text ("" at end of input)."""


def _all_steps(plan: AnnotatedPlan) -> list[AnnotatedStep]:
    return [*plan.checks, *plan.steps, *plan.rollback]


def _banned_reasons(plan: AnnotatedPlan) -> list[str]:
    lines = []
    for step in _all_steps(plan):
        if step.banned:
            why = "; ".join(step.reasons[:2]) or "hard-banned"
            lines.append(inert(f"{step.kind} {step.id}: {why}", max_chars=300))
    return lines or ["the plan contains a hard-banned command"]


def requirement(plan: AnnotatedPlan) -> Requirement:
    """The approval a plan needs. Never fewer confirmations than the annotation asks for."""
    risk = tiers.plan_risk(plan)
    if plan.banned or any(s.banned for s in _all_steps(plan)):
        return Requirement(Tier.BANNED, risk, reasons=_banned_reasons(plan))
    needed = tiers.confirmations_needed(plan)
    if needed >= 2:
        reasons = [inert(f"{'rollback ' if s.kind == 'rollback' else ''}{s.id}: "
                         f"{'; '.join(s.reasons[:2])}", max_chars=300)
                   for s in tiers.high_steps(plan)]
        return Requirement(Tier.TWO, RiskLevel.HIGH, word=tiers.plan_word(plan),
                           reasons=reasons)
    return Requirement(Tier.ONE if needed else Tier.NONE, risk)


def rollback_requirement(plan: AnnotatedPlan) -> Requirement:
    """What a later ``rollback`` needs: always one confirmation; a HIGH rollback command
    also its word (the daemon demands the same, :func:`anna_common.risk.tiers.rollback_word`)."""
    word = tiers.rollback_word(plan)
    if word is None:
        return Requirement(Tier.ONE, RiskLevel.max_of(tiers.rollback_risk(plan), RiskLevel.LOW))
    reasons = [inert(f"rollback {s.id}: {'; '.join(s.reasons[:2])}", max_chars=300)
               for s in plan.rollback if s.final_risk == RiskLevel.HIGH]
    return Requirement(Tier.TWO, RiskLevel.HIGH, word=word, reasons=reasons)


def word_matches(req: Requirement, typed: str) -> bool:
    """Whether ``typed`` is exactly the confirmation word (surrounding spaces ignored)."""
    return tiers.word_matches(req.word, typed)


def approval(req: Requirement, *, confirmed: bool, typed_word: str | None = None) -> Approval:
    """The approval given by a confirmation (and, for HIGH, the typed word); raises when short.

    Raises :class:`PlanError` (PLAN_BANNED) for a banned plan and :class:`AnnaError`
    (DECLINED) when what was given does not cover the tier.
    """
    if req.tier == Tier.BANNED:
        raise banned_error(req)
    if req.tier == Tier.NONE:
        return Approval(confirmed=False, high_confirmed=False)
    if not confirmed:
        raise declined("the plan was not approved")
    if req.tier == Tier.ONE:
        return Approval(confirmed=True, high_confirmed=False)
    if typed_word is None or not word_matches(req, typed_word):
        raise declined("the confirmation word did not match; nothing was run")
    return Approval(confirmed=True, high_confirmed=True, word=typed_word.strip())


def by_flags(req: Requirement, *, yes: bool, allow_high: bool) -> Approval | None:
    """The approval the command-line flags give, or None when they do not cover the tier."""
    if req.tier == Tier.BANNED:
        raise banned_error(req)
    if req.tier == Tier.NONE:
        return Approval(confirmed=False, high_confirmed=False)
    if req.tier == Tier.ONE and yes:
        return Approval(confirmed=True, high_confirmed=False)
    if req.tier == Tier.TWO and yes and allow_high:
        # the flags are the person's approval of this HIGH plan: send the word the
        # daemon's own annotation names, which the daemon checks against its own
        return Approval(confirmed=True, high_confirmed=True, word=req.word)
    return None


RUN_ANYWAY = "run anyway"
"""What a person types to run a plan one of whose steps failed in its preview."""


def failed_in_preview(preview: PlanPreview | None) -> list[str]:
    """The steps that exited non-zero when the daemon previewed them."""
    from anna_common.protocol.routes import FAILED_IN_PREVIEW

    if preview is None:
        return []
    return [s.step_id for s in preview.steps if (s.reason or "").startswith(FAILED_IN_PREVIEW)]


def anyway(req: Requirement, failed: list[str]) -> Requirement:
    """The typed word a LOW/MEDIUM plan needs when steps failed in their preview: never a
    plain yes for what will probably fail (issue 36.6); checked here, the daemon's tier is
    unchanged."""
    steps = inert(", ".join(failed), max_chars=200)
    return Requirement(Tier.TWO, req.risk, word=RUN_ANYWAY,
                       reasons=[f"{steps} failed in the preview: it will probably fail for "
                                "real, and then every change is undone"])


def ask(req: Requirement, prompter: Prompter | None, *, yes: bool = False,
        allow_high: bool = False, already_confirmed: bool = False,
        failed: list[str] | None = None) -> Approval:
    """Get approval from the flags or, failing that, by asking.

    ``prompter=None`` means there is no terminal: a plan the flags do not cover is
    declined. ``already_confirmed`` is the REPL's ``ok`` typed after seeing the plan: it
    is the one confirmation, so a HIGH plan is asked only for its word. ``failed``: steps
    that failed in their preview; a LOW/MEDIUM plan then asks for :data:`RUN_ANYWAY` typed
    (flags still decide: ``--yes`` is an approval given before anything was shown).
    """
    granted = by_flags(req, yes=yes or (already_confirmed and not failed),
                       allow_high=allow_high)
    if granted is not None:
        return granted
    if failed and req.tier == Tier.ONE and prompter is not None:
        extra = anyway(req, failed)
        typed = prompter.text(f"{extra.reasons[0]}. Type {RUN_ANYWAY!r} to run it:")
        if not tiers.word_matches(RUN_ANYWAY, typed):
            raise declined("not confirmed; nothing was run",
                           hint=f"type {RUN_ANYWAY} to run a plan whose preview failed")
        return approval(req, confirmed=True)
    if prompter is None:
        need = "--yes --allow-high" if req.tier == Tier.TWO else "--yes"
        raise declined(f"this {req.risk} plan needs a confirmation and there is no terminal "
                       "to ask on", hint=f"run it on a terminal, or pass {need}")
    if not already_confirmed and not prompter.yes_no(f"Run this {req.risk} plan? [y/N]"):
        raise declined("declined; nothing was run")
    if req.tier == Tier.ONE:
        return approval(req, confirmed=True)
    typed = prompter.text(f"This is a HIGH-risk plan. Type {req.word!r} to run it:")
    return approval(req, confirmed=True, typed_word=typed)


HELP_ANSWERS = frozenset({"?", "h", "help"})
"""Answers to a y/N question that ask what the answers do."""
MAX_HELP_ASKS = 10
"""After this many help requests in a row the question counts as No (never a loop)."""
YES_NO_HELP = ("y or yes: go ahead.  n, Enter or anything else: no (nothing is run).\n"
               "Before you decide: annactl show ID shows the plan and its preview; annactl "
               "apply ID --skip STEP or --edit STEP=COMMAND approves a changed plan instead.")
"""What ``?`` at a y/N question prints."""


class TerminalPrompter:
    """Asks on the error console and reads answers from standard input.

    Questions go to stderr so that stdout carries only results; answers are read a line
    at a time, and end of input counts as No.
    """

    def __init__(self, err: Console, read_line: Callable[[], str] | None = None) -> None:
        self.err = err
        self.read_line = read_line or sys.stdin.readline

    def _ask(self, question: str) -> str:
        # markup=False: the question may name a confirmation word taken from a command
        self.err.print(question + " ", style="bold", end="", markup=False, highlight=False)
        self.err.file.flush()
        return self.read_line().rstrip("\n")

    def yes_no(self, question: str) -> bool:
        """Default No; ``?`` (or ``help``) shows what the answers do and asks again, a
        bounded number of times, instead of counting as No."""
        for _ in range(MAX_HELP_ASKS):
            answer = self._ask(question)
            if answer.strip().lower() not in HELP_ANSWERS:
                return is_yes(answer)
            self.err.print(YES_NO_HELP, style="dim", markup=False, highlight=False)
        return False

    def text(self, question: str) -> str:
        """One line."""
        return self._ask(question)


def declined(message: str, *, hint: str | None = None) -> AnnaError:
    """The error for a plan the person did not approve (exit status DECLINED)."""
    return AnnaError(message, code=ErrorCode.DECLINED, hint=hint)


def banned_error(req: Requirement) -> PlanError:
    """The error for a banned plan, carrying the reasons."""
    return PlanError("the plan contains a hard-banned command and cannot be approved: "
                     + " | ".join(req.reasons), code=ErrorCode.PLAN_BANNED,
                     detail={"reasons": list(req.reasons)})


def is_yes(answer: str) -> bool:
    """``y`` or ``yes`` (any case); anything else, including nothing, is No."""
    return answer.strip().lower() in {"y", "yes"}
