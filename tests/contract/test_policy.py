"""Issue 13 item 2: the policy file format and the decision rules (pure, no daemon)."""

from __future__ import annotations

import pytest

from anna_common.errors import ErrorCode
from anna_common.plan import RiskLevel
from anna_common.policy.decide import Policy, PolicyError, combine, decide_command, parse
from anna_common.risk.assess import Scope, assess
from anna_common.risk.rules.base import AssessContext

ADMIN = "/etc/anna/policy.toml"
USER = "/home/alice/.config/anna/policy.toml"
CTX = AssessContext(distro="arch", home="/home/alice")


def policy(text: str, *, source: str = ADMIN, origin: str = "admin") -> Policy:
    return parse(text, source=source, origin=origin)  # type: ignore[arg-type]


def verdict(pol: Policy, command: str) -> tuple[str, str | None]:
    a = assess(command, CTX)
    d = decide_command(pol, command, a.risk, a.scope, CTX)
    return d.action, d.rule.id if d.rule else None


# ---------------------------------------------------------------------- malformed files

@pytest.mark.parametrize(("text", "line", "words"), [
    ("[[rule]]\naction = \"deny\"\nprogram = \n", 3, "not valid TOML"),
    ("[[rule]]\naction = \"deny\"\nprogram = \"rm\"\nfrobnicate = 1\n", 4, "unknown key"),
    ("# c\n\n[[rule]]\naction = \"permit\"\n", 4, "action must be"),
    ("[[rule]]\nprogram = \"rm\"\n", 1, "action must be"),
    ("[[rule]]\naction = \"deny\"\n\n[[rule]]\naction = \"deny\"\npath = \"/etc/[ab\"\n", 6,
     "bad path glob"),
    ("[[rule]]\naction = \"deny\"\npath = \"etc/ssh\"\n", 3, "bad path glob"),
    ("[[rule]]\naction = \"deny\"\npath = \"/etc/a**b\"\n", 3, "bad path glob"),
    ("[[rule]]\naction = \"deny\"\ntier = \"CRITICAL\"\n", 3, "tier must be"),
    ("[[rule]]\naction = \"deny\"\nscope = [\"root\"]\n", 3, "scope must be"),
    ("[[rule]]\naction = \"deny\"\nprogram = []\n", 3, "non-empty"),
    ("[[rule]]\naction = \"deny\"\nprogram = 5\n", 3, "non-empty"),
    ("[[rule]]\naction = \"ask\"\naccess = \"read\"\npath = \"/x\"\n", 3, "access"),
    ("allow_all = true\n", 1, "unknown key"),
    ("version = 2\n", 1, "version must be 1"),
    ("rule = \"deny\"\n", 1, "[[rule]] tables"),
    ("[[rule]]\nid = \"has space\"\naction = \"deny\"\n", 2, "id must be"),
])
def test_a_malformed_file_is_an_error_naming_the_file_and_line(text: str, line: int,
                                                                words: str) -> None:
    with pytest.raises(PolicyError) as caught:
        parse(text, source=ADMIN)
    err = caught.value
    assert err.code is ErrorCode.POLICY_INVALID
    assert err.detail == {"file": ADMIN, "line": line}
    assert err.message.startswith(f"{ADMIN}:{line}: ") and words in err.message


def test_an_empty_file_is_no_rules_and_a_good_file_keeps_order_and_sources() -> None:
    assert parse("", source=ADMIN).rules == ()
    pol = policy('version = 1\n\n[[rule]]\nid = "a"\naction = "ask"\nprogram = "ip"\n\n'
                 '[[rule]]\naction = "deny"\nprogram = "/usr/bin/dd"\n')
    assert [r.id for r in pol.rules] == ["a", "policy.toml:8"]
    assert pol.rules[1].program == ("dd",) and pol.rules[1].source == f"{ADMIN}:8"


# ---------------------------------------------------------------------- semantics

RULES = """
[[rule]]
id = "cache-ok"
action = "allow"
program = "paccache"

[[rule]]
id = "ask-net"
action = "ask"
program = ["ip", "nmcli"]

[[rule]]
id = "no-ssh-edits"
action = "deny"
path = "/etc/ssh/**"

[[rule]]
id = "ask-info-etc"
action = "ask"
path = "/etc/**"
access = "any"
tier = "INFO"

[[rule]]
id = "late-allow"
action = "allow"
program = "ip"
"""


def test_deny_wins_over_an_earlier_allow() -> None:
    pol = policy('[[rule]]\nid="ok"\naction="allow"\nprogram="rm"\n\n'
                 '[[rule]]\nid="no"\naction="deny"\npath="~/keep/**"\n')
    assert verdict(pol, "rm ~/keep/a") == ("deny", "no")
    assert verdict(pol, "rm ~/other/a")[0] == "allow"


def test_first_matching_ask_or_allow_decides() -> None:
    pol = policy(RULES)
    assert verdict(pol, "ip addr") == ("ask", "ask-net")  # before late-allow
    assert verdict(pol, "cat /etc/hostname") == ("ask", "ask-info-etc")
    assert verdict(pol, "cat /var/log/pacman.log")[0] == "default"


def test_allow_waives_only_info_and_low() -> None:
    pol = policy(RULES)
    a = assess("paccache -rk3", CTX)
    d = decide_command(pol, "paccache -rk3", a.risk, a.scope, CTX)
    assert a.risk > RiskLevel.LOW and d.action == "default" and d.rule is not None
    assert "only INFO/LOW" in d.note
    low = decide_command(pol, "paccache -rk3", RiskLevel.LOW, Scope.USER, CTX)
    assert low.action == "allow"
    high = decide_command(pol, "paccache -rk3", RiskLevel.HIGH, Scope.SYSTEM, CTX)
    assert high.action == "default"


def test_allow_covers_only_commands_it_fully_sees() -> None:
    pol = policy('[[rule]]\nid="t"\naction="allow"\nprogram="touch"\n')
    assert decide_command(pol, "touch ~/a", RiskLevel.LOW, Scope.USER, CTX).action == "allow"
    for command in ("touch ~/a; rm ~/b", "touch $(cat f)", "eval touch ~/a",
                    "touch ~/a && python3 -c 'print(1)'", "touch ~/a | bash"):
        assert decide_command(pol, command, RiskLevel.LOW, Scope.USER, CTX).action != "allow", \
            command


def test_path_allow_needs_every_write_inside() -> None:
    pol = policy('[[rule]]\nid="dl"\naction="allow"\npath="~/Downloads/**"\n')
    low = RiskLevel.LOW
    assert decide_command(pol, "touch ~/Downloads/x", low, Scope.USER, CTX).action == "allow"
    assert decide_command(pol, "touch ~/Downloads/x ~/y", low, Scope.USER,
                          CTX).action == "default"
    assert decide_command(pol, "touch ~/Down*/x", low, Scope.USER, CTX).action == "default"
    assert decide_command(pol, "kill 1234", low, Scope.USER, CTX).action == "default"


def test_scope_and_tier_rules() -> None:
    pol = policy('[[rule]]\nid="sys"\naction="ask"\nscope="system"\n\n'
                 '[[rule]]\nid="hi"\naction="deny"\ntier=["HIGH"]\n')
    assert decide_command(pol, "ls", RiskLevel.INFO, Scope.SYSTEM, CTX).rule.id == "sys"  # type: ignore[union-attr]
    assert decide_command(pol, "ls", RiskLevel.INFO, Scope.USER, CTX).action == "default"
    assert decide_command(pol, "ls", RiskLevel.HIGH, Scope.USER, CTX).action == "deny"


def test_a_user_policy_may_only_restrict() -> None:
    admin = policy('[[rule]]\nid="touch-ok"\naction="allow"\nprogram="touch"\n')
    user = policy('[[rule]]\nid="mine"\naction="allow"\nprogram="rm"\n\n'
                  '[[rule]]\nid="careful"\naction="ask"\npath="~/notes/**"\n\n'
                  '[[rule]]\nid="never"\naction="deny"\nprogram="shred"\n',
                  source=USER, origin="user")
    assert [r.id for r in user.rules] == ["careful", "never"]
    assert user.notes and "ignored" in user.notes[0] and f"{USER}:1" in user.notes[0]
    both = combine(admin, user)
    low = RiskLevel.LOW
    assert decide_command(both, "rm ~/x", low, Scope.USER, CTX).action == "default"
    # the user's ask overrides the administrator's allow
    d = decide_command(both, "touch ~/notes/a", low, Scope.USER, CTX)
    assert (d.action, d.rule.origin) == ("ask", "user")  # type: ignore[union-attr]
    assert decide_command(both, "touch ~/x", low, Scope.USER, CTX).action == "allow"
    assert decide_command(both, "shred ~/x", low, Scope.USER, CTX).action == "deny"


def test_home_globs_meet_absolute_homes() -> None:
    pol = policy('[[rule]]\nid="keys"\naction="deny"\npath="/home/*/.ssh/**"\n')
    assert verdict(pol, "rm ~/.ssh/id_ed25519") == ("deny", "keys")
    assert verdict(pol, "rm /home/alice/.ssh/authorized_keys") == ("deny", "keys")
    pol = policy('[[rule]]\nid="keys"\naction="deny"\npath="~/.ssh/**"\n')
    assert verdict(pol, "rm /home/alice/.ssh/authorized_keys") == ("deny", "keys")
    assert verdict(pol, "rm /home/alice/ssh")[0] != "deny"
