"""Offline answers that answer: "why is my disk full?" and steps read as argv (offrequest)."""

from __future__ import annotations

import pytest

from anna_common.distro import context_from_telemetry
from anna_common.plan import RiskLevel
from anna_common.risk.assess import assess
from anna_common.telemetry import DiskInfo
from anna_common.validate import validate
from annactl.planning import templates
from annactl.planning.offrequest import (
    off_request_findings,
    performs_install,
    performs_service_action,
)
from tests.daemonfix import make_plan
from tests.planner.conftest import make_telemetry

HOME = "/home/user"
GB = 1024**3


def _match(text, snapshot):
    return templates.match(text, snapshot, context=context_from_telemetry(snapshot, HOME),
                           home=HOME)


def _disk(mount: str, percent: float) -> DiskInfo:
    return DiskInfo(mountpoint=mount, fstype="ext4", total_bytes=100 * GB,
                    used_bytes=int(percent) * GB, free_bytes=(100 - int(percent)) * GB,
                    percent=percent)


@pytest.mark.parametrize("text", ["why is my disk full?", "Why is my disk so full",
                                  "disk full", "what is using my disk space?",
                                  "where did my disk space go?", "what's taking up space"])
def test_why_is_my_disk_full_measures_the_fullest_filesystem(text):
    snapshot = make_telemetry()
    snapshot.disks = [_disk("/", 40.0), _disk("/home", 97.0)]
    found = _match(text, snapshot)
    assert found is not None and found.confident and found.plan is not None
    assert found.plan.meta.template_used == "disk_full_v1"
    checks = {c.id: c.command for c in found.plan.necessary_checks}
    assert checks["biggest_dirs"].startswith("timeout 20 du -xh -d1 /home ")
    assert checks["package_cache"] == "du -sh /var/cache/pacman/pkg"
    assert checks["journal_size"] == "journalctl --disk-usage"
    assert checks["home_dirs"].startswith(f"timeout 20 du -xh -d1 {HOME} ")
    # nothing is proposed before the checks measured it (issue 39.5)
    assert "vacuum" not in found.plan.notes_for_user
    assert "follows from what they show" in found.plan.notes_for_user
    context = context_from_telemetry(snapshot, HOME)
    assert validate(found.plan, context).ok
    for command in checks.values():  # every check runs unasked: it must be INFO
        assert assess(command, context).risk == RiskLevel.INFO, command


@pytest.mark.parametrize("mount", ["/mnt/$(reboot)", "/mnt/a;rm -rf ~", "/mnt/`id`",
                                   "/mnt/../etc", "relative", "/mnt/a b\nc"])
def test_a_hostile_mount_point_never_reaches_the_command(mount):
    snapshot = make_telemetry()
    snapshot.disks = [_disk("/", 50.0), _disk(mount, 99.0)]
    found = _match("why is my disk full?", snapshot)
    assert found is not None and found.plan is not None
    du = next(c.command for c in found.plan.necessary_checks if c.id == "biggest_dirs")
    assert du.startswith("timeout 20 du -xh -d1 / ")  # fell back to the next plain one
    assert mount not in du


def test_apt_measures_its_own_cache_not_pacman_s():
    snapshot = make_telemetry(distro="debian")
    found = _match("why is my disk full?", snapshot)
    assert found is not None and found.plan is not None
    checks = {c.id: c.command for c in found.plan.necessary_checks}
    assert set(checks) == {"biggest_dirs", "home_dirs", "package_cache", "journal_size"}
    assert checks["package_cache"] == "du -sh /var/cache/apt/archives"
    assert "paccache" not in found.plan.notes_for_user


INSTALLS = ["sudo pacman -S htop", "env pacman -S htop", "/usr/bin/pacman -S --noconfirm htop",
            "sudo -u root pacman -Syu htop", "bash -c 'pacman -S htop'",
            "sudo sh -c \"pacman -S htop\"", "pacman --sync htop", "yay -S htop",
            "apt install htop", "sudo apt-get -y install htop", "env LANG=C pacman -S htop",
            "doas pacman -S htop", "p''acman -S htop", "\\pacman -S htop",
            "pacman -U /tmp/x.pkg.tar.zst", "command pacman -S htop", "nice -n 5 pacman -S htop",
            "eval 'pacman -S htop'", "sudo env pacman -S htop"]
NOT_INSTALLS = ["echo pacman -S htop", "pacman -Ss htop", "pacman -Si htop", "pacman -Q htop",
                "printf 'pacman -S htop'", "# pacman -S htop", "apt search htop",
                "pacman -Sp htop", "true && echo 'sudo pacman -S htop'",
                "cat <<< 'pacman -S htop'", "pacman -Sw htop", "apt show install",
                "echo $'pacman -S htop'", "grep 'pacman -S' /var/log/pacman.log",
                "man pacman", "pacman -Syw htop"]


@pytest.mark.parametrize("command", INSTALLS)
def test_install_steps_are_read_as_argv(command):
    assert performs_install(command)


@pytest.mark.parametrize("command", NOT_INSTALLS)
def test_text_that_only_mentions_an_install_is_not_one(command):
    assert not performs_install(command)


@pytest.mark.parametrize(("command", "ok"), [
    ("sudo systemctl restart sshd", True), ("env systemctl start x", True),
    ("/usr/bin/systemctl enable --now x", True), ("echo systemctl restart sshd", False),
    ("systemctl status x", False), ("printf 'systemctl restart x'", False)])
def test_service_steps_are_read_as_argv(command, ok):
    assert performs_service_action(command, "restart") is ok


def test_an_echoed_install_is_flagged_off_request():
    snapshot = make_telemetry()
    context = context_from_telemetry(snapshot, HOME)
    for command, flagged in (("echo pacman -S htop", True), ("sudo pacman -S htop", False)):
        plan = make_plan([("s", command, "MEDIUM")], goal="Install htop")
        result = validate(plan, context)
        assert result.plan is not None, result.errors
        assert bool(off_request_findings(result.plan, "install htop")) is flagged, command


def _retry_attempts(planner) -> int:
    provider = planner.provider
    return getattr(provider, "inner", provider).retry.attempts


def test_a_weak_match_without_a_configured_model_tries_it_once(make_settings):
    from annactl.planning.planner import Planner

    telemetry = make_telemetry()
    planner = Planner(make_settings(llm_url=""), daemon=None)
    outcome = planner.plan("is my disk space ok or what", telemetry=telemetry)
    assert outcome.template is not None and outcome.offline_reason
    assert _retry_attempts(planner) == 1
    configured = Planner(make_settings(llm_url="http://127.0.0.1:9"), daemon=None)
    configured.plan("is my disk space ok or what", telemetry=telemetry)
    assert _retry_attempts(configured) == 3  # a model the person configured gets its retries


@pytest.mark.parametrize(("text", "telemetry", "why"), [
    ("install htop", {"distro": "alpine"}, "installing packages offline needs pacman, apt, dnf "
     "or zypper; this machine has apk"),
    ("remove nginx", {"distro": "alpine"}, "removing packages offline needs pacman"),
    ("install foo;reboot", {}, "package_install_v1 template refused it"),
])
def test_no_template_fits_says_which_came_close_and_why(make_settings, text, telemetry, why):
    from anna_common.errors import ErrorCode, LLMError
    from annactl.planning.planner import Planner

    planner = Planner(make_settings(llm_url="http://127.0.0.1:9"), daemon=None)
    with pytest.raises(LLMError) as info:
        planner.plan(text, telemetry=make_telemetry(**telemetry))
    assert info.value.code == ErrorCode.LLM_UNAVAILABLE
    assert why in (info.value.hint or "") and why in info.value.detail["template_near_miss"]


def test_a_request_no_template_is_near_gets_no_invented_reason(make_settings):
    from anna_common.errors import LLMError
    from annactl.planning.planner import Planner

    planner = Planner(make_settings(llm_url="http://127.0.0.1:9"), daemon=None)
    with pytest.raises(LLMError) as info:
        planner.plan("compose a haiku about systemd", telemetry=make_telemetry())
    assert "template_near_miss" not in info.value.detail
