"""Risk-tiered confirmation: one implementation, every tier, flags and prompts."""

from __future__ import annotations

import pytest

from anna_common.errors import AnnaError, ErrorCode, PlanError
from anna_common.findings import AnnotatedPlan
from annactl.core.exit_codes import ExitStatus, exit_status_for
from annactl.ui import confirm
from annactl.ui.confirm import Approval, Tier

from .plans import annotate_dict, plan_dict


class Answers:
    """A prompter that answers from a script and records every question asked."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    def yes_no(self, question: str) -> bool:
        self.asked.append(question)
        return confirm.is_yes(self.answers.pop(0) if self.answers else "")

    def text(self, question: str) -> str:
        self.asked.append(question)
        return self.answers.pop(0) if self.answers else ""


def test_tiers_come_from_annas_assessment(info_plan: AnnotatedPlan, low_plan: AnnotatedPlan,
                                          medium_plan: AnnotatedPlan, high_plan: AnnotatedPlan,
                                          banned_plan: AnnotatedPlan) -> None:
    assert confirm.requirement(info_plan).tier == Tier.NONE
    assert confirm.requirement(low_plan).tier == Tier.ONE
    assert confirm.requirement(medium_plan).tier == Tier.ONE
    high = confirm.requirement(high_plan)
    assert high.tier == Tier.TWO and high.word == "/etc/fstab"
    banned = confirm.requirement(banned_plan)
    assert banned.tier == Tier.BANNED
    assert any("wipe" in reason for reason in banned.reasons)


def test_model_label_cannot_lower_the_tier() -> None:
    # the model calls a HIGH edit of /etc/fstab "INFO"; Anna's floor wins
    plan = annotate_dict(plan_dict([("edit", "cp /tmp/x /etc/fstab", "INFO")]))
    assert confirm.requirement(plan).tier == Tier.TWO


def test_model_high_label_without_target_names_what_it_writes() -> None:
    """Issue 36.8: the word names what the step touches, not the fixed fallback."""
    plan = annotate_dict(plan_dict([("w", "echo x > /tmp/anna-ui/x", "HIGH")]))
    req = confirm.requirement(plan)
    assert req.tier == Tier.TWO and req.word == "/tmp/anna-ui/x" != confirm.FALLBACK_WORD


def test_model_high_label_that_writes_nothing_gets_fallback_word() -> None:
    plan = annotate_dict(plan_dict([("w", "true", "HIGH")]))
    req = confirm.requirement(plan)
    assert req.tier == Tier.TWO and req.word in (confirm.FALLBACK_WORD, "true")


def test_info_runs_without_asking(info_plan: AnnotatedPlan) -> None:
    prompter = Answers()
    assert confirm.ask(confirm.requirement(info_plan), prompter) == Approval(False, False)
    assert prompter.asked == []
    # and without a terminal too
    assert confirm.ask(confirm.requirement(info_plan), None) == Approval(False, False)


def test_low_one_confirmation_default_no(low_plan: AnnotatedPlan) -> None:
    req = confirm.requirement(low_plan)
    prompter = Answers("y")
    assert confirm.ask(req, prompter) == Approval(True, False)
    assert len(prompter.asked) == 1 and "[y/N]" in prompter.asked[0]
    for answer in ("", "n", "no", "sure", "YES please"):
        with pytest.raises(AnnaError) as info:
            confirm.ask(req, Answers(answer))
        assert info.value.code == ErrorCode.DECLINED


def test_high_refuses_a_single_confirmation(high_plan: AnnotatedPlan) -> None:
    req = confirm.requirement(high_plan)
    with pytest.raises(AnnaError) as info:
        confirm.ask(req, Answers("y"))  # the word prompt gets end of input
    assert info.value.code == ErrorCode.DECLINED
    with pytest.raises(AnnaError):
        confirm.ask(req, Answers("y", "yes"))
    with pytest.raises(AnnaError):
        confirm.approval(req, confirmed=True)
    prompter = Answers("yes", " /etc/fstab ")
    assert confirm.ask(req, prompter) == Approval(True, True, "/etc/fstab")
    assert "'/etc/fstab'" in prompter.asked[1]


def test_banned_is_never_approvable(banned_plan: AnnotatedPlan) -> None:
    req = confirm.requirement(banned_plan)
    for call in (lambda: confirm.ask(req, Answers("y", "y")),
                 lambda: confirm.ask(req, None, yes=True, allow_high=True),
                 lambda: confirm.approval(req, confirmed=True, typed_word=req.word or "")):
        with pytest.raises(PlanError) as info:
            call()
        assert info.value.code == ErrorCode.PLAN_BANNED
        assert exit_status_for(info.value) == ExitStatus.PLAN_INVALID
        assert "wipe" in info.value.message


def test_flags(low_plan: AnnotatedPlan, medium_plan: AnnotatedPlan,
               high_plan: AnnotatedPlan) -> None:
    for plan in (low_plan, medium_plan):
        assert confirm.ask(confirm.requirement(plan), None, yes=True) == Approval(True, False)
    high = confirm.requirement(high_plan)
    with pytest.raises(AnnaError) as info:
        confirm.ask(high, None, yes=True)
    assert info.value.code == ErrorCode.DECLINED and "--allow-high" in (info.value.hint or "")
    with pytest.raises(AnnaError):
        confirm.ask(high, None, allow_high=True)  # --allow-high alone approves nothing
    assert confirm.ask(high, None, yes=True, allow_high=True) == Approval(True, True, "/etc/fstab")


def test_no_terminal_no_flags_declines(low_plan: AnnotatedPlan) -> None:
    with pytest.raises(AnnaError) as info:
        confirm.ask(confirm.requirement(low_plan), None)
    assert exit_status_for(info.value) == ExitStatus.DECLINED


def test_yes_without_allow_high_still_asks_on_a_terminal(high_plan: AnnotatedPlan) -> None:
    prompter = Answers("y", "/etc/fstab")
    assert confirm.ask(confirm.requirement(high_plan), prompter,
                       yes=True) == Approval(True, True, "/etc/fstab")
    assert len(prompter.asked) == 2


def test_repl_ok_is_the_one_confirmation(low_plan: AnnotatedPlan,
                                         high_plan: AnnotatedPlan) -> None:
    prompter = Answers()
    assert confirm.ask(confirm.requirement(low_plan), prompter,
                       already_confirmed=True) == Approval(True, False)
    assert prompter.asked == []
    prompter = Answers("/etc/fstab")
    assert confirm.ask(confirm.requirement(high_plan), prompter,
                       already_confirmed=True) == Approval(True, True, "/etc/fstab")
    assert len(prompter.asked) == 1  # only the word
    with pytest.raises(AnnaError):
        confirm.ask(confirm.requirement(high_plan), Answers("y"), already_confirmed=True)
