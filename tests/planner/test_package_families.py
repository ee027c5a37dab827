"""Issue 39.4: install, remove, clean and upgrade on every supported family (pacman, apt,
dnf, zypper), each step Anna's own assessment and each check read-only; through the real
planner with no model reachable."""

from __future__ import annotations

from typing import Any

import pytest

from anna_common.plan import RiskLevel
from annactl.planning.planner import Planner
from tests.planner.conftest import make_telemetry

DEAD = "http://127.0.0.1:9"

FAMILIES: dict[str, dict[str, tuple[str | None, str, str | None]]] = {
    "debian": {"install htop": ("apt-get -s install htop", "apt-get install -y htop",
                                "apt-get remove -y htop"),
               "remove nginx": ("dpkg -s nginx", "apt-get remove -y nginx",
                                "apt-get install -y nginx"),
               "clean the package cache": ("du -sh /var/cache/apt/archives", "apt-get clean",
                                           None),
               "update my system": ("apt-get -s upgrade", "apt-get upgrade -y", None)},
    "fedora": {"install htop": ("dnf info htop", "dnf install -y htop", "dnf remove -y htop"),
               "remove nginx": ("rpm -q nginx", "dnf remove -y nginx", "dnf install -y nginx"),
               "clean the package cache": ("du -sh /var/cache/dnf", "dnf clean packages", None),
               "upgrade all packages": ("dnf check-update", "dnf upgrade -y", None)},
    "opensuse-tumbleweed": {
        "install htop": ("zypper --non-interactive search --match-exact htop",
                         "zypper --non-interactive install htop",
                         "zypper --non-interactive remove htop"),
        "remove nginx": ("rpm -q nginx", "zypper --non-interactive remove nginx",
                         "zypper --non-interactive install nginx"),
        "clean the package cache": ("du -sh /var/cache/zypp/packages", "zypper clean", None),
        "update my system": (None, "zypper --non-interactive update", None)},
}
CASES = [(d, r, *v) for d, rows in FAMILIES.items() for r, v in rows.items()]


@pytest.mark.parametrize(("distro", "request_text", "check", "step", "undo"), CASES)
def test_each_family_gets_its_own_commands_offline(make_settings: Any, distro: str,
                                                   request_text: str, check: str | None,
                                                   step: str, undo: str | None) -> None:
    outcome = Planner(make_settings(llm_url=DEAD), daemon=None).plan(
        request_text, telemetry=make_telemetry(distro=distro))
    plan = outcome.plan
    assert plan is not None and outcome.result.ok and outcome.template_confident
    assert "pacman" not in plan.model_dump_json()
    commands = [s.command for s in plan.command_plan]
    assert step in commands
    assert all(c.risk_level == RiskLevel.INFO for c in plan.necessary_checks)
    if check is None:
        assert plan.necessary_checks == []
    else:
        assert check in [c.command for c in plan.necessary_checks]
    undos = [r.command for r in plan.rollback_plan]
    assert undos == ([undo] if undo else [])
    if request_text.startswith(("install", "remove")):
        # telemetry does not list these families' packages: the required check decides
        assert [c.required for c in plan.necessary_checks] == [True]


def test_an_upgrade_on_arch_says_it_cannot_be_rolled_back(make_settings: Any) -> None:
    outcome = Planner(make_settings(llm_url=DEAD), daemon=None).plan(
        "update my system", telemetry=make_telemetry())
    assert outcome.plan is not None
    assert [s.command for s in outcome.plan.command_plan] == ["pacman -Syu --noconfirm"]
    assert "cannot roll an upgrade back" in outcome.plan.notes_for_user


def test_a_hostile_name_never_reaches_apt(make_settings: Any) -> None:
    from anna_common.distro import context_from_telemetry
    from annactl.planning.templates import match
    from annactl.planning.templates.base import Context  # noqa: F401 - the type match builds

    telemetry = make_telemetry(distro="debian")
    found = match("install foo;reboot", telemetry,
                  context=context_from_telemetry(telemetry, "/home/u"), home="/home/u")
    assert found is not None and found.plan is None and "not a valid package" in str(
        found.rejected)
