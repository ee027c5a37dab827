"""Issue 39.5: templates that are right or absent — an alias needs its definition, disk
health is SMART, and "why is my disk full" proposes only what its checks measured."""

from __future__ import annotations

from typing import Any

import pytest

from anna_common.distro import context_from_telemetry
from anna_common.plan import RiskLevel
from anna_common.risk.assess import assess
from anna_common.telemetry import DiskInfo, PackageInfo, Telemetry
from annactl.planning import templates
from annactl.planning.planner import Planner
from tests.fakellm import plan_json
from tests.planner.conftest import make_telemetry

HOME = "/home/user"
DEAD = "http://127.0.0.1:9"
GB = 1024**3


def _match(request_text: str, telemetry: Telemetry,
           recorded: dict[str, str] | None = None) -> templates.TemplateMatch:
    found = templates.match(request_text, telemetry,
                            context=context_from_telemetry(telemetry, HOME), home=HOME,
                            recorded=recorded)
    assert found is not None and found.plan is not None
    return found


def test_an_alias_without_its_definition_is_a_question_offline(make_settings: Any) -> None:
    outcome = Planner(make_settings(llm_url=DEAD), daemon=None).plan(
        "add an alias ll to my bashrc", telemetry=make_telemetry())
    assert outcome.plan is not None and outcome.plan.command_plan == []
    assert "What should ll run?" in outcome.plan.notes_for_user
    assert "alias ll='COMMAND'" in outcome.plan.notes_for_user


def test_an_alias_without_its_definition_is_left_to_a_model(fake_llm: Any,
                                                            make_settings: Any) -> None:
    step = {"id": "s1", "description": "Append the alias", "risk_level": "HIGH",
            "command": "printf '%s\\n' \"alias ll='ls -la'\" >> /home/user/.bashrc",
            "requires_confirmation": True, "rollback_id": None}
    fake_llm.push(plan_json(goals=["Define the alias ll"], command_plan=[step]))
    outcome = Planner(make_settings(llm_url=fake_llm.ollama_url), daemon=None).plan(
        "add an alias ll to my bashrc", telemetry=make_telemetry())
    assert outcome.template is None and outcome.offline_reason is None, outcome.offline_reason
    assert len(fake_llm.chat_bodies()) == 1


def test_an_alias_with_its_definition_is_still_appended() -> None:
    found = _match("add an alias ll='ls -la' to my bashrc", make_telemetry())
    assert found.confident
    assert found.plan.command_plan[0].command == \
        "printf '%s\\n' 'alias ll='\"'\"'ls -la'\"'\"'' >> /home/user/.bashrc"


def _with_disks(telemetry: Telemetry) -> Telemetry:
    telemetry.disks = [DiskInfo(mountpoint="/", device="/dev/nvme0n1p2", total_bytes=100 * GB,
                                percent=50.0),
                       DiskInfo(mountpoint="/data", device="/dev/sdb1", total_bytes=GB,
                                percent=10.0),
                       DiskInfo(mountpoint="/boot", device="/dev/nvme0n1p1", total_bytes=GB,
                                percent=20.0)]
    return telemetry


@pytest.mark.parametrize("request_text", ["check disk health", "is my ssd healthy?",
                                          "check the smart status", "disk health"])
def test_disk_health_is_smart_per_disk(request_text: str) -> None:
    telemetry = _with_disks(make_telemetry())
    telemetry.packages.packages.append(PackageInfo(name="smartmontools", version="7.4-1"))
    found = _match(request_text, telemetry)
    assert found.template == "disk_health_v1" and found.confident
    assert [s.command for s in found.plan.command_plan] == ["smartctl -H /dev/nvme0n1",
                                                           "smartctl -H /dev/sdb"]
    context = context_from_telemetry(telemetry, HOME)
    for step in found.plan.command_plan:
        assert assess(step.command, context).risk == RiskLevel.INFO
    assert "df" not in " ".join(s.command for s in found.plan.command_plan)


def test_disk_health_without_smartmontools_says_so() -> None:
    found = _match("check disk health", _with_disks(make_telemetry()))
    assert found.plan.command_plan == []
    assert "smartmontools) is not installed" in found.plan.notes_for_user


def test_disk_health_where_packages_are_unknown_checks_for_smartctl() -> None:
    found = _match("check disk health", _with_disks(make_telemetry(distro="debian")))
    assert [(c.command, c.required) for c in found.plan.necessary_checks] == [
        ("smartctl --version", True)]


JOURNAL_EMPTY = "Archived and active journals take up 0B in the file system."
JOURNAL_BIG = "Archived and active journals take up 3.5G in the file system."


@pytest.mark.parametrize(("cache", "journal", "offered", "never"), [
    ("1.5G\t/var/cache/pacman/pkg", JOURNAL_EMPTY, "clean the package cache", "journalctl"),
    ("12M\t/var/cache/pacman/pkg", JOURNAL_BIG, "journalctl --vacuum-time", "clean the "),
    ("12M\t/var/cache/pacman/pkg", JOURNAL_EMPTY, "Not worth cleaning", "vacuum"),
])
def test_disk_full_proposes_only_what_its_checks_measured(cache: str, journal: str,
                                                          offered: str, never: str) -> None:
    assert templates.records_first("disk_full_v1")
    telemetry = make_telemetry()
    first = _match("why is my disk full?", telemetry)
    assert "vacuum" not in first.plan.notes_for_user
    second = _match("why is my disk full?", telemetry,
                    recorded={"package_cache": cache, "journal_size": journal})
    notes = second.plan.notes_for_user
    assert offered in notes and never not in notes
    assert "Measured: package cache" in notes and "journal" in notes
    assert {c.id for c in second.plan.necessary_checks} >= {"biggest_dirs", "home_dirs"}


def test_disk_full_on_a_daemon_offers_the_measured_plan(make_settings: Any,
                                                       user_daemon: Any) -> None:
    """The real flow: the first plan's read-only checks run confined on the daemon, and the
    plan offered is written from what they printed (never the unmeasured first one)."""
    from annactl.commands.flow import Flow

    snapshot = make_telemetry()
    snapshot.disks[0].mountpoint = str(user_daemon.home)
    final = Flow(make_settings(llm_url=DEAD), user_daemon.client()).plan_text(
        "why is my disk full?", telemetry=snapshot)
    assert final.outcome is not None and final.outcome.template == "disk_full_v1"
    notes = final.outcome.plan.notes_for_user if final.outcome.plan else ""
    assert "follows from what they show" not in notes  # the second round's plan
    assert "Measured:" in notes or "could not measure" in notes
    assert "vacuum" not in notes or "journal" in notes.split("Measured:")[1]
    assert {c.id for c in final.checks} >= {"biggest_dirs", "journal_size"}
