"""Issue 8, pure half: what client and daemon agree on about a plan.

Class 5 (rollback commands count toward the tier), class 14 (the HIGH word rule both
sides apply; the digest over exact bytes) and seed 000's "MEDIUM must have clear
rollback". The daemon half is tests/daemon/test_hardening_integrity.py.
"""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest

from anna_common.annotate import NO_UNDO_REASON, _medium_needs_undo
from anna_common.findings import AnnotatedPlan, AnnotatedStep
from anna_common.plan import ActionPlan, RiskLevel, canonical_json, plan_digest
from anna_common.risk import tiers
from anna_common.risk.assess import AssessContext, Assessment, Scope
from anna_common.validate import validate
from annactl.ui import confirm
from annactl.ui.confirm import Tier
from tests.daemonfix import make_plan

HOME = "/home/ann"
CTX = AssessContext(home=HOME)


def annotate(raw: dict[str, Any]) -> AnnotatedPlan:
    result = validate(raw, CTX)
    assert result.plan is not None, result.errors
    assert result.ok, result.errors
    return result.plan


# ------------------------------------------------------------------ class 5: rollback counts

# rollback commands that write system configuration, in the disguises the contract unwraps
ROLLBACK_WRITES_ETC = [
    "cp /tmp/anna-x/motd.bak /etc/motd.d/anna",
    "sudo cp /tmp/anna-x/a.conf /etc/anna-test.conf",
    "env LC_ALL=C cp /tmp/anna-x/a /etc/anna-b",
    "sudo env X=1 install -m644 /tmp/anna-x/a /etc/anna-c",
    "bash -c 'cp /tmp/anna-x/a /etc/anna-d.conf'",
    "sudo bash -c \"cat /tmp/anna-x/a > /etc/anna-e.conf\"",
    "echo x | sudo tee /etc/anna-f.conf",
    "tee /etc/anna-g.conf <<< 'x'",
    "printf '%s\\n' x > /etc/anna-h.conf",
    "eval 'cp /tmp/anna-x/a /etc/anna-i.conf'",
    "$'cp' /tmp/anna-x/a /etc/anna-j.conf",
]


@pytest.mark.parametrize("undo", ROLLBACK_WRITES_ETC)
def test_info_step_with_a_writing_rollback_needs_a_confirmation(undo: str) -> None:
    plan = annotate(make_plan([("look", "ls -la /tmp", "INFO")], rollback={"look": undo}))
    assert plan.steps[0].final_risk == RiskLevel.INFO
    assert plan.rollback[0].final_risk >= RiskLevel.LOW, plan.rollback[0].reasons
    assert plan.final_risk >= RiskLevel.LOW
    assert plan.confirmations >= 1
    assert tiers.confirmations_needed(plan) >= 1
    assert confirm.requirement(plan).tier in (Tier.ONE, Tier.TWO)


def test_an_unreferenced_rollback_command_counts_too() -> None:
    raw = make_plan([("look", "ls /tmp", "INFO")])
    raw["rollback_plan"] = [{"id": "orphan", "description": "x",
                             "command": "cp /tmp/anna-x/fstab /etc/fstab"}]
    plan = annotate(raw)
    assert plan.final_risk == RiskLevel.HIGH and plan.confirmations == 2
    assert tiers.plan_word(plan) == "/etc/fstab"


HIGH_ROLLBACKS = [
    ("cp /tmp/anna-x/fstab /etc/fstab", "/etc/fstab"),
    ("sudo tee /etc/hosts < /tmp/anna-x/hosts", "/etc/hosts"),
    ("echo x | sudo tee -a /etc/pam.d/su", "/etc/pam.d/su"),
    ("bash -c 'echo x > /etc/motd'", "/etc/motd"),
    ("rm -rf ~/projects", "~/projects"),
    ("find ~/d -delete", "~/d"),
]


@pytest.mark.parametrize(("undo", "word"), HIGH_ROLLBACKS)
def test_a_high_rollback_command_makes_the_plan_high(undo: str, word: str) -> None:
    plan = annotate(make_plan([("add", "touch ~/anna-note", "LOW")], rollback={"add": undo}))
    assert plan.steps[0].final_risk == RiskLevel.LOW
    assert plan.final_risk == RiskLevel.HIGH and plan.confirmations == 2
    assert plan.confirm_word == word and tiers.plan_word(plan) == word
    req = confirm.requirement(plan)
    assert req.tier == Tier.TWO and req.word == word
    assert any(r.startswith("rollback undo-add") for r in req.reasons)
    # a later `annactl rollback` runs it again: the same word is asked then
    assert tiers.rollback_word(plan) == word
    assert confirm.rollback_requirement(plan).tier == Tier.TWO
    # --yes alone does not cover it, on either occasion
    with pytest.raises(Exception, match="no terminal"):
        confirm.ask(req, None, yes=True)
    assert confirm.by_flags(confirm.rollback_requirement(plan), yes=True,
                            allow_high=False) is None


def test_the_steps_word_comes_before_the_rollbacks() -> None:
    plan = annotate(make_plan([("wipe", "rm -rf ~/old", "HIGH")],
                              rollback={"wipe": "cp /tmp/anna-x/fstab /etc/fstab"}))
    assert tiers.plan_word(plan) == "~/old"
    assert tiers.rollback_word(plan) == "/etc/fstab"


def test_a_rollback_below_high_asks_one_confirmation() -> None:
    plan = annotate(make_plan([("add", "touch ~/a", "LOW")], rollback={"add": "rm -f ~/a"}))
    assert tiers.rollback_word(plan) is None
    req = confirm.rollback_requirement(plan)
    assert req.tier == Tier.ONE and req.word is None
    assert confirm.by_flags(req, yes=True, allow_high=False) is not None


def test_info_plan_with_info_rollback_still_runs_unasked() -> None:
    plan = annotate(make_plan([("look", "ls /tmp", "INFO")], rollback={"look": "true"}))
    assert plan.final_risk == RiskLevel.INFO and plan.confirmations == 0
    assert confirm.requirement(plan).tier == Tier.NONE


def test_client_never_asks_less_than_the_rollback_tier_even_if_the_summary_lies() -> None:
    plan = annotate(make_plan([("add", "touch ~/a", "LOW")],
                              rollback={"add": "cp /tmp/anna-x/fstab /etc/fstab"}))
    lying = plan.model_copy(update={"final_risk": RiskLevel.LOW, "confirmations": 1,
                                    "confirm_word": None})
    assert tiers.confirmations_needed(lying) == 2
    assert confirm.requirement(lying).word == "/etc/fstab"


# ------------------------------------------------------------------ class 14: the word rule


def test_word_matching_is_exact_case_and_ignores_surrounding_space() -> None:
    assert tiers.word_matches("/etc/fstab", "/etc/fstab")
    assert tiers.word_matches("/etc/fstab", "  /etc/fstab\n")
    for wrong in ("/ETC/FSTAB", "/etc/fstab/", "etc/fstab", "", "/etc/fst ab", "/etc/fstab\x00"):
        assert not tiers.word_matches("/etc/fstab", wrong), wrong
    assert not tiers.word_matches(None, "yes-do-it")
    assert not tiers.word_matches("/etc/fstab", None)
    # NFD twin of a word is not the word
    word = "~/caf\u00e9"
    assert not tiers.word_matches(word, unicodedata.normalize("NFD", word))
    assert tiers.word_matches("\udcff", "\udcff")  # lone surrogates never crash


def test_printable_word_drops_what_a_terminal_would_hide() -> None:
    assert tiers.printable_word("/etc/\x1b[8mfstab") == "/etc/[8mfstab"
    assert tiers.printable_word("\u202e/etc/fstab\u202c") == "/etc/fstab"
    assert tiers.printable_word("\n\t ") == tiers.FALLBACK_WORD
    assert tiers.printable_word(None) == tiers.FALLBACK_WORD
    assert len(tiers.printable_word("a" * 5000)) == tiers.MAX_WORD_CHARS


def test_client_sends_the_typed_word_and_flags_send_the_daemons_word() -> None:
    plan = annotate(make_plan([("wipe", "rm -rf ~/old", "HIGH")]))
    req = confirm.requirement(plan)
    typed = confirm.approval(req, confirmed=True, typed_word="  ~/old ")
    assert typed.word == "~/old" and typed.high_confirmed
    flagged = confirm.ask(req, None, yes=True, allow_high=True)
    assert flagged.word == tiers.plan_word(plan) == "~/old"
    with pytest.raises(Exception, match="did not match"):
        confirm.approval(req, confirmed=True, typed_word="~/OLD")


# ------------------------------------------------------------------ class 14: exact digest

NFC_NFD = ["touch ~/caf\u00e9", "cp a ~/\u00c5ngstr\u00f6m", "mkdir ~/\uac00"]


@pytest.mark.parametrize("command", NFC_NFD)
def test_nfc_and_nfd_twins_have_different_digests(command: str) -> None:
    nfd = unicodedata.normalize("NFD", command)
    assert nfd != command
    one = make_plan([("s", command, "LOW")])
    two = make_plan([("s", nfd, "LOW")])
    assert plan_digest(one) != plan_digest(two)
    assert annotate(one).digest != annotate(two).digest
    # the annotation keeps the exact bytes: what is hashed is what runs
    assert annotate(two).steps[0].command.encode() == nfd.encode()


def test_canonical_json_keeps_strings_exact_and_keys_sorted() -> None:
    value = {"b": "e\u0301", "a": ["\u00e9"], "\u00e9": 1, "e\u0301": 2}
    text = canonical_json(value).decode()
    assert text == '{"a":["\u00e9"],"b":"e\u0301","e\u0301":2,"\u00e9":1}'
    assert canonical_json(dict(reversed(list(value.items())))) == canonical_json(value)
    nfc = ActionPlan.model_validate(make_plan([("s", "touch ~/x", "LOW")], goal="Caf\u00e9"))
    nfd = ActionPlan.model_validate(make_plan([("s", "touch ~/x", "LOW")], goal="Cafe\u0301"))
    assert nfc.digest() != nfd.digest()  # prose too: the digest is over every exact byte


# ------------------------------------------------------------------ seed 000: MEDIUM rollback

NO_UNDO_MEDIUM = ["bluetoothctl power on", "kill 1234", "sudo kill -HUP 4321",
                  "env X=1 bluetoothctl power off"]


@pytest.mark.parametrize("command", NO_UNDO_MEDIUM)
def test_medium_without_any_undo_is_high(command: str) -> None:
    plan = annotate(make_plan([("s", command, "MEDIUM")]))
    step = plan.steps[0]
    assert step.final_risk == RiskLevel.HIGH, step.reasons
    assert NO_UNDO_REASON in step.reasons
    assert plan.confirmations == 2
    assert confirm.requirement(plan).tier == Tier.TWO
    # the typed word names what the step runs, not a stock phrase
    assert step.confirm_word and step.confirm_word != "yes-do-it"
    assert step.confirm_word in command


@pytest.mark.parametrize("command", NO_UNDO_MEDIUM)
def test_medium_with_a_model_rollback_stays_medium(command: str) -> None:
    plan = annotate(make_plan([("s", command, "MEDIUM")], rollback={"s": "frobnicate --revert"}))
    assert plan.steps[0].final_risk == RiskLevel.MEDIUM
    assert NO_UNDO_REASON not in plan.steps[0].reasons
    # a rollback that changes nothing is no rollback (tests/contract/test_seed_rules.py)
    plan = annotate(make_plan([("s", command, "MEDIUM")], rollback={"s": "true"}))
    assert plan.steps[0].final_risk == RiskLevel.HIGH


KEEPS_MEDIUM = [
    "pacman -S --noconfirm ripgrep",     # recognised inverse: package pre-state
    "sudo systemctl restart cups",       # unit pre-state
    "cp /tmp/anna-x/a /etc/anna.conf",   # known target the daemon snapshots
    "env X=1 cp a /etc/anna-b",
    "dd if=/dev/zero of=~/img bs=1M count=1",
    "curl https://example.com",          # changes nothing: nothing to undo
]


@pytest.mark.parametrize("command", KEEPS_MEDIUM)
def test_medium_with_a_snapshot_or_an_inverse_stays_medium(command: str) -> None:
    plan = annotate(make_plan([("s", command, "MEDIUM")]))
    assert plan.steps[0].final_risk == RiskLevel.MEDIUM, plan.steps[0].reasons


def test_low_and_info_steps_are_not_raised() -> None:
    plan = annotate(make_plan([("a", "ls /tmp", "INFO"), ("b", "touch ~/x", "LOW")]))
    assert [s.final_risk for s in plan.steps] == [RiskLevel.INFO, RiskLevel.LOW]


def _step(codes: list[str], writes: list[str]) -> tuple[AnnotatedStep, Assessment]:
    verdict = Assessment(command="python3 -c 'x'", risk=RiskLevel.MEDIUM, banned=False,
                         scope=Scope.USER, codes=codes, reasons=["interpreter"], parse_ok=True,
                         writes=writes)
    step = AnnotatedStep(kind="step", index=0, id="s", description="", command=verdict.command,
                         model_risk=RiskLevel.MEDIUM, floor=RiskLevel.MEDIUM,
                         final_risk=RiskLevel.MEDIUM, banned=False, scope=Scope.USER,
                         codes=codes, reasons=["interpreter"], parse_ok=True,
                         requires_confirmation=True, writes=writes)
    return step, verdict


@pytest.mark.parametrize("code", ["UNCAPTURED_WRITE", "uncaptured_write"])
def test_uncaptured_writes_are_no_snapshot(code: str) -> None:
    step, verdict = _step(["HOME_WRITE", code], ["~/out.txt"])
    raised = _medium_needs_undo(step, verdict, [], "command_plan[0].command")
    assert raised.final_risk == RiskLevel.HIGH and NO_UNDO_REASON in raised.reasons
    step, verdict = _step(["HOME_WRITE"], ["~/out.txt"])
    assert _medium_needs_undo(step, verdict, [], "p").final_risk == RiskLevel.MEDIUM


def test_offline_templates_keep_their_tiers() -> None:
    for command in ("pacman -S --noconfirm ripgrep", "pacman -Rns --noconfirm ripgrep",
                    "paccache -rk2", "systemctl restart cups", "systemctl enable --now cups",
                    "swww img /home/ann/a.png", "feh --bg-fill /home/ann/a.png"):
        plan = annotate(make_plan([("s", command, "LOW")]))
        assert plan.steps[0].final_risk <= RiskLevel.MEDIUM, (command, plan.steps[0].reasons)
