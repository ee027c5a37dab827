"""Templates claim only what they checked: units from the installed packages, the firewall
that is installed, processes from telemetry, a dotfile line that stays one word."""

from __future__ import annotations

import shlex

import pytest

from anna_common.distro import context_from_telemetry
from anna_common.plan import RiskLevel
from anna_common.risk.assess import assess
from anna_common.telemetry import ServicesInfo
from anna_common.validate import validate
from annactl.planning import templates
from tests.planner.conftest import make_telemetry

HOME = "/home/user"


def _match(text: str, snapshot=None):
    snapshot = snapshot or make_telemetry()
    found = templates.match(text, snapshot, context=context_from_telemetry(snapshot, HOME),
                            home=HOME)
    assert found is not None and found.plan is not None, text
    result = validate(found.plan, context_from_telemetry(snapshot, HOME))
    assert result.ok, result.errors
    return found


def _commands(found) -> list[str]:
    return [s.command for s in found.plan.command_plan]


@pytest.mark.parametrize("text", ["restart the ssh service", "restart ssh", "restart sshd",
                                  "Restart the SSH server"])
def test_ssh_is_archs_sshd_when_openssh_is_installed(text: str) -> None:
    found = _match(text, make_telemetry(extra_packages=("openssh",)))
    assert _commands(found) == ["systemctl restart sshd.service"]
    assert "openssh package, installed (version" in found.plan.analysis
    check = found.plan.necessary_checks[0]
    assert check.command == "systemctl cat sshd.service" and check.required


def test_a_unit_whose_package_is_missing_is_an_answer_not_a_step() -> None:
    found = _match("restart the ssh service")  # openssh is not in the default snapshot
    assert found.confident and _commands(found) == []
    assert "openssh is not installed" in found.plan.notes_for_user


def test_an_unknown_unit_gets_a_required_existence_check() -> None:
    found = _match("restart foobar")
    assert _commands(found) == ["systemctl restart foobar.service"]
    exists = [c for c in found.plan.necessary_checks if c.id == "unit_exists"]
    assert exists and exists[0].required and "cannot vouch" in found.plan.analysis


def test_enable_the_firewall_with_none_installed_answers_so() -> None:
    found = _match("enable the firewall")
    assert found.plan.meta.template_used == "firewall_enable_v1"
    assert _commands(found) == [] and "No firewall is installed" in found.plan.notes_for_user


@pytest.mark.parametrize(("packages", "unit"), [(("ufw",), "ufw.service"),
                                                (("nftables",), "nftables.service"),
                                                (("nftables", "firewalld"), "firewalld.service")])
def test_enable_the_firewall_uses_the_installed_one(packages, unit) -> None:
    found = _match("turn on the firewall", make_telemetry(extra_packages=packages))
    assert _commands(found) == [f"systemctl enable --now {unit}"]
    # switching a firewall off is banned: no undo command is ever written for it
    assert found.plan.rollback_plan == [] and "never switches a firewall off" in \
        found.plan.notes_for_user


@pytest.mark.parametrize(("text", "first"), [("what is using my memory?", "kitty"),
                                             ("what's eating my RAM", "kitty"),
                                             ("which process is using the most cpu?", "firefox"),
                                             ("top processes by cpu", "firefox")])
def test_memory_and_cpu_come_from_telemetry_without_a_command(text: str, first: str) -> None:
    found = _match(text)
    assert found.plan.meta.template_used == "top_processes_v1" and found.confident
    assert _commands(found) == [] and found.plan.necessary_checks == []
    notes = found.plan.notes_for_user
    assert f"1. {first} (pid" in notes and "of 120 processes" in notes


def test_a_dotfile_line_that_runs_a_banned_command_is_banned() -> None:
    """The line is one word of the printf, and what it would run at every login is judged:
    ``rm -rf ~`` inside an alias is banned like the command itself (issue 34, content)."""
    snapshot = make_telemetry()
    context = context_from_telemetry(snapshot, HOME)
    found = templates.match('add alias x="$(rm -rf ~)"; touch /tmp/pwned to my bashrc',
                            snapshot, context=context, home=HOME)
    assert found is not None and found.plan is not None
    result = validate(found.plan, context)
    assert not result.ok and any("runs-banned" in f.message for f in result.errors), result


@pytest.mark.parametrize("line", ["alias ll='ls -la'", "export EDITOR=nvim",
                                  "`echo hi` $HOME 'quote\" mix"])
def test_dotfile_line_is_one_word_and_assessed(line: str) -> None:
    found = _match(f"add {line} to my bashrc")
    [command] = _commands(found)
    argv = shlex.split(command.split(" >> ")[0])
    assert argv == ["printf", "%s\\n", line]
    assert command.endswith(" >> /home/user/.bashrc")
    step = found.plan.command_plan[0]
    context = context_from_telemetry(make_telemetry(), HOME)
    assert step.risk_level == assess(command, context).risk >= RiskLevel.LOW


def test_dotfile_article_and_other_files() -> None:
    found = _match("add an alias ll='ls -la' to my bashrc")
    assert "'alias ll='\"'\"'ls -la'\"'\"''" in _commands(found)[0]
    found = _match("append export EDITOR=nvim to ~/.zshrc")
    assert _commands(found)[0].endswith(">> /home/user/.zshrc")


def test_dotfile_refuses_control_characters() -> None:
    snapshot = make_telemetry()
    found = templates.match("add alias a=b\x1b[2J to my bashrc", snapshot,
                            context=context_from_telemetry(snapshot, HOME), home=HOME)
    assert found is not None and found.plan is None and found.rejected


def test_failed_services_without_systemd_is_an_answer() -> None:
    snapshot = make_telemetry()
    snapshot.services = ServicesInfo(available=False, reason="no systemd in this container")
    found = _match("show failed services", snapshot)
    assert _commands(found) == []
    assert "no systemd in this container" in found.plan.notes_for_user
