"""Issue 39.4: a unit a template uses is the machine's own unit file, case included, or the
answer says there is none (the real planner, no model reachable)."""

from __future__ import annotations

from typing import Any

import pytest

from anna_common.telemetry import FailedUnit, Telemetry
from annactl.planning.planner import Planner
from tests.planner.conftest import make_telemetry

DEAD = "http://127.0.0.1:9"
ARCH = ["NetworkManager.service", "sshd.service", "nginx.service", "bluetooth.service"]
DEBIAN = ["NetworkManager.service", "ssh.service", "cron.service"]


def _plan(make_settings: Any, request_text: str, telemetry: Telemetry) -> Any:
    outcome = Planner(make_settings(llm_url=DEAD), daemon=None).plan(request_text,
                                                                     telemetry=telemetry)
    assert outcome.plan is not None and outcome.result.ok
    return outcome.plan


def _machine(distro: str, files: list[str]) -> Telemetry:
    telemetry = make_telemetry(distro=distro)
    telemetry.services.unit_files = files
    return telemetry


@pytest.mark.parametrize(("distro", "files", "request_text", "command"), [
    ("arch", ARCH, "restart networkmanager", "systemctl restart NetworkManager.service"),
    ("debian", DEBIAN, "restart networkmanager", "systemctl restart NetworkManager.service"),
    ("debian", [], "restart networkmanager", "systemctl restart NetworkManager.service"),
    ("arch", ARCH, "restart ssh", "systemctl restart sshd.service"),
    ("debian", DEBIAN, "restart ssh", "systemctl restart ssh.service"),
    ("debian", DEBIAN, "enable CRON", "systemctl enable --now cron.service"),
    ("arch", ARCH, "restart the failed service", "systemctl restart bluetooth.service"),
])
def test_the_unit_is_spelled_as_the_machine_spells_it(make_settings: Any, distro: str,
                                                      files: list[str], request_text: str,
                                                      command: str) -> None:
    plan = _plan(make_settings, request_text, _machine(distro, files))
    assert [s.command for s in plan.command_plan] == [command]
    assert plan.necessary_checks[0].required  # systemctl cat still stops a wrong guess


@pytest.mark.parametrize(("request_text", "says"), [
    ("restart the network", "There is no network.service on this machine"),
    ("restart nginx", "There is no nginx.service"),
])
def test_a_unit_the_machine_lacks_is_said_not_planned(make_settings: Any, request_text: str,
                                                       says: str) -> None:
    plan = _plan(make_settings, request_text, _machine("debian", DEBIAN))
    assert plan.command_plan == [] and says in plan.notes_for_user


def test_several_failed_units_are_a_question(make_settings: Any) -> None:
    telemetry = _machine("arch", ARCH)
    telemetry.services.failed.append(FailedUnit(name="cups.service"))
    plan = _plan(make_settings, "restart the failed service", telemetry)
    assert plan.command_plan == []
    assert "Which unit? Failed units now: bluetooth.service, cups.service" in \
        plan.notes_for_user


@pytest.mark.parametrize(("files", "command", "says"), [
    (["ufw.service", "ssh.service"], "systemctl enable --now ufw.service", "ufw"),
    (DEBIAN, None, "No firewall is installed"),
])
def test_the_firewall_without_a_package_list_comes_from_the_unit_files(
        make_settings: Any, files: list[str], command: str | None, says: str) -> None:
    plan = _plan(make_settings, "enable the firewall", _machine("debian", files))
    assert [s.command for s in plan.command_plan] == ([command] if command else [])
    assert says in plan.notes_for_user + plan.analysis
