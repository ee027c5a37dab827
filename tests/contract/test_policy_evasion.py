"""Issue 13 item 2: a deny rule cannot be walked around (commands are analysed, never run).

The policy matches Anna's parsed analysis, so each class of disguise the analyser sees
through (wrappers, quoting, ``$'…'``, absolute paths, nested shells, substitutions,
functions, interpreter strings, globs, working directories) is tried against a program
rule and a path rule; what the analyser cannot see through matches every deny rule.
"""

from __future__ import annotations

import pytest

from anna_common.plan import RiskLevel
from anna_common.policy.decide import decide_command, parse
from anna_common.risk.assess import Scope, assess
from anna_common.risk.rules.base import AssessContext

CTX = AssessContext(distro="arch", home="/home/alice")
POLICY = parse("""
[[rule]]
id = "no-remove"
action = "deny"
program = "pacman"
argv = ["-R"]

[[rule]]
id = "no-remove-long"
action = "deny"
program = "pacman"
argv = ["--remove"]

[[rule]]
id = "ssh-config"
action = "deny"
path = "/etc/ssh/**"
""", source="/etc/anna/policy.toml")


def action(command: str) -> tuple[str, str | None]:
    verdict = assess(command, CTX)
    decision = decide_command(POLICY, command, verdict.risk, verdict.scope, CTX)
    return decision.action, decision.rule.id if decision.rule else None


PROGRAM_VARIANTS = [
    "pacman -R linux", "pacman -Rns linux", "pacman -Rdd linux", "pacman -sR linux",
    "pacman --remove linux", "pacman \"-R\" linux", "pacman $'-R' linux", "pacman -\\R linux",
    "sudo pacman -R linux", "sudo -u root pacman -R linux", "doas pacman -R linux",
    "env pacman -R linux", "env -i PATH=/usr/bin pacman -R linux", "LANG=C pacman -R linux",
    "nice -n 5 pacman -R linux", "nohup pacman -R linux", "timeout 60 pacman -R linux",
    "command pacman -R linux", "exec pacman -R linux", "\\pacman -R linux",
    "p''acman -R linux", "\"pacman\" -R linux", "$'pacman' -R linux", "$'\\x70acman' -R linux",
    "/usr/bin/pacman -R linux", "/bin/pacman -R linux", "/usr/bin/../bin/pacman -R linux",
    "bash -c 'pacman -R linux'", "sh -c \"pacman -R linux\"", "bash -lc 'pacman -R linux'",
    "sudo bash -c 'sudo pacman -R linux'", "su -c 'pacman -R linux'",
    "eval 'pacman -R linux'", "eval \"pacman -R linux\"", "echo $(pacman -R linux)",
    "x=$(pacman -R linux)", "cat <(pacman -R linux)", "pacman -R linux &",
    "{ pacman -R linux; }", "(pacman -R linux)", "if true; then pacman -R linux; fi",
    "for p in linux; do pacman -R $p; done", "f() { pacman -R linux; }; f",
    "bash <<< 'pacman -R linux'", "bash <<'EOF'\npacman -R linux\nEOF",
    "echo 'pacman -R linux' | bash", "xargs pacman -R < list", "find / -name x -exec pacman -R {} \\;",
    "python3 -c 'import os; os.system(\"pacman -R linux\")'",
    "python3 -c 'import subprocess; subprocess.run([\"pacman\", \"-R\", \"linux\"])'",
    "perl -e 'system(\"pacman -R linux\")'", "P=pacman; $P -R linux", "\"$P\" -R linux",
    "pac$(echo man) -R linux", "bash -c \"$CMD\"", "eval \"$CMD\"", "$CMD",
    "trap 'pacman -R linux' EXIT", "watch pacman -R linux", "flock /tmp/l pacman -R linux",
    "systemd-run pacman -R linux", "pacman -R $PKG", "pacman $OPT linux",
    "bash ./remove.sh", "source ./remove.sh", "pacman -R linux # harmless",
    "pacman -R @(linux)",
]


@pytest.mark.parametrize("command", PROGRAM_VARIANTS)
def test_a_program_deny_rule_holds_for_every_disguise(command: str) -> None:
    got, rule = action(command)
    assert got == "deny", (command, got)
    assert rule in ("no-remove", "no-remove-long", "ssh-config")


PATH_VARIANTS = [
    "rm /etc/ssh/sshd_config", "sudo rm /etc/ssh/sshd_config", "echo x > /etc/ssh/sshd_config",
    "echo x >> /etc/ssh/sshd_config", "tee -a /etc/ssh/sshd_config < /dev/null",
    "sed -i s/a/b/ /etc/ssh/sshd_config", "cp x /etc/ssh/", "mv x /etc/ssh/sshd_config",
    "ln -sf /tmp/x /etc/ssh/sshd_config", "chmod 777 /etc/ssh/sshd_config",
    "chown nobody /etc/ssh/sshd_config", "rm -rf /etc", "rm -rf /e*", "rm /e?c/ss?/sshd_config",
    "rm /etc/[s]sh/sshd_config", "rm /etc/ss{h,x}/sshd_config", "rm \"/etc/ssh/sshd_config\"",
    "rm '/etc'/ssh/sshd_config", "rm $'/etc/ssh/sshd_config'", "rm /etc//ssh/sshd_config",
    "rm /etc/./ssh/sshd_config", "rm /tmp/../etc/ssh/sshd_config",
    "cd /etc/ssh && rm sshd_config", "cd /etc; rm -r ssh", "cd \"$D\" && rm sshd_config",
    "X=/etc/ssh; rm $X/sshd_config", "rm $D/sshd_config", "rm /etc/$SUB/sshd_config",
    "dd if=/dev/zero of=/etc/ssh/sshd_config", "install -m600 x /etc/ssh/sshd_config",
    "truncate -s0 /etc/ssh/sshd_config", "find /etc/ssh -delete",
    "find /etc -name sshd_config -exec rm {} +", "echo /etc/ssh/x | xargs rm",
    "bash -c 'rm /etc/ssh/sshd_config'", "sudo sh -c 'echo x > /etc/ssh/sshd_config'",
    "python3 -c 'open(\"/etc/ssh/sshd_config\", \"w\").write(\"x\")'",
    "perl -pi -e s/a/b/ /etc/ssh/sshd_config", "shopt -s nocaseglob; rm /ETC/SS[H]/sshd_config",
    "rsync -a x/ /etc/ssh/", "tar -xf a.tar -C /etc/ssh", "mv /etc/ssh /tmp/gone",
    "f() { rm /etc/ssh/sshd_config; }; f", "echo $(rm /etc/ssh/sshd_config)",
    "rm /etc/ssh/sshd_config & wait",
]


@pytest.mark.parametrize("command", PATH_VARIANTS)
def test_a_path_deny_rule_holds_for_every_disguise(command: str) -> None:
    got, _ = action(command)
    assert got == "deny", (command, got)


@pytest.mark.parametrize("command", [
    "pacman -Qi linux", "pacman -Ss ssh", "pacman -Syu", "echo pacman -R linux",
    "grep -r 'pacman -R' /etc/pacman.conf", "man pacman", "cat /etc/ssh/sshd_config",
    "rm /etc/sshx", "rm /tmp/etc/ssh/x", "ls /etc", "touch ~/notes",
    "python3 -c 'print(1)'", "systemctl status sshd",
])
def test_commands_outside_the_rules_are_not_denied(command: str) -> None:
    assert action(command)[0] != "deny", command


def test_allow_never_reaches_high_and_a_ban_stays_a_ban() -> None:
    pol = parse('[[rule]]\nid="all"\naction="allow"\n', source="/p.toml")
    for command in ("rm -rf /", "dd if=/dev/zero of=/dev/sda", "pacman -Rdd glibc"):
        verdict = assess(command, CTX)
        decision = decide_command(pol, command, verdict.risk, verdict.scope, CTX)
        assert verdict.risk > RiskLevel.LOW and decision.action == "default", command
    banned = assess("rm -rf /", CTX)
    assert banned.banned  # the ban is the assessment's, which no policy can lift
    assert decide_command(pol, "ls", RiskLevel.INFO, Scope.USER, CTX).action == "allow"
