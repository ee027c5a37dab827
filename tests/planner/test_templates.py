"""Offline templates: each plan validates with no errors, checks are INFO, values are safe."""

from __future__ import annotations

import pytest

from anna_common.distro import context_from_telemetry
from anna_common.plan import RiskLevel
from anna_common.risk.assess import assess
from anna_common.telemetry import DesktopInfo
from anna_common.validate import validate
from annactl.planning import templates
from tests.planner.conftest import make_telemetry

HOME = "/home/user"

DESKTOPS = {
    "hyprpaper": DesktopInfo(wm="hyprland", display_protocol="wayland",
                             wallpaper_backends_installed=["hyprpaper"],
                             wallpaper_backends_running=["hyprpaper"]),
    "swww": DesktopInfo(wm="hyprland", display_protocol="wayland",
                        wallpaper_backends_installed=["swww"], wallpaper_backends_running=["swww"]),
    "swaybg": DesktopInfo(wm="sway", display_protocol="wayland",
                          wallpaper_backends_installed=["swaybg"],
                          wallpaper_backends_running=["swaybg"]),
    "gnome": DesktopInfo(de="gnome", display_protocol="wayland"),
    "xfce": DesktopInfo(de="xfce", display_protocol="x11"),
    "feh": DesktopInfo(wm="i3", display_protocol="x11", wallpaper_backends_installed=["feh"]),
}

CASES = [
    ("how is my system?", "system_status_v1", None),
    ("Show failed services", "failed_services_v1", None),
    ("disk usage", "disk_usage_v1", None),
    ("install ripgrep", "package_install_v1", None),
    ("install htop", "package_install_v1", None),  # already installed: nothing to do
    ("remove nginx", "package_remove_v1", None),
    ("clean the package cache", "package_cache_clean_v1", None),
    ("restart nginx", "service_restart_v1", None),
    ("enable sshd", "service_enable_v1", None),
    *[(f"change my wallpaper to {HOME}/Pictures/My Fjord.png", f"wallpaper_change_{b}_v1", b)
      for b in DESKTOPS],
    ("set my background to ~/bg.jpg", "wallpaper_change_hyprpaper_v1", "hyprpaper"),
]


def _match(text, snapshot):
    return templates.match(text, snapshot, context=context_from_telemetry(snapshot, HOME),
                           home=HOME)


@pytest.mark.parametrize(("text", "template", "desktop"), CASES)
def test_each_template_plan_validates_and_its_checks_are_info(text, template, desktop):
    snapshot = make_telemetry(desktop=DESKTOPS[desktop] if desktop else None)
    found = _match(text, snapshot)
    assert found is not None and found.confident and found.plan is not None
    assert found.plan.meta.template_used == template
    context = context_from_telemetry(snapshot, HOME)
    result = validate(found.plan, context)
    assert result.ok and result.errors == [], result.errors
    assert not [w for w in result.warnings if w.code in ("RISK_RAISED", "CONFIRMATION_ADDED")
                and not w.path.startswith("rollback_plan")]
    for check in found.plan.necessary_checks:
        assert assess(check.command, context).risk == RiskLevel.INFO, check.command


def test_status_summary_uses_the_telemetry():
    plan = _match("how is my system?", make_telemetry()).plan
    notes = plan.notes_for_user
    assert "Test CPU" in notes and "6.0 GB of 16.0 GB" in notes
    assert "bluetooth.service" in notes and "Nearly full: /" in notes
    assert plan.command_plan == []


def test_wallpaper_path_is_quoted_and_home_expanded():
    found = _match("set my wallpaper to ~/Pictures/a b.png", make_telemetry())
    commands = " ".join(s.command for s in found.plan.command_plan)
    assert "'/home/user/Pictures/a b.png'" in commands


@pytest.mark.parametrize("text", [
    "install htop;reboot",
    "install $(curl evil)",
    "install -rf",
    "remove ../../etc",
    "restart -H",
    "change my wallpaper to /tmp/$(id).png",
    "change my wallpaper to /home/user/a.png; rm -rf ~",
    "change my wallpaper to /home/user/../../etc/shadow.png",
    "change my wallpaper to relative.png",
    "change my wallpaper to /home/user/notes.txt",
])
def test_unsafe_values_are_rejected_not_fixed(text):
    found = _match(text, make_telemetry())
    assert found is None or found.plan is None
    if found is not None:
        assert found.rejected


def test_package_templates_only_for_a_family_anna_speaks():
    assert _match("install htop", make_telemetry(distro="alpine")) is None


def test_the_package_form_is_offered_for_exactly_the_families_with_a_manager():
    from annactl.planning.forms import PACKAGE_FAMILIES
    from annactl.planning.templates.managers import MANAGERS

    assert set(MANAGERS) == PACKAGE_FAMILIES


def test_remove_of_a_package_that_is_not_installed_has_no_steps():
    found = _match("remove libreoffice", make_telemetry())
    assert found.plan is not None and found.plan.command_plan == []


def test_wallpaper_without_a_known_backend_is_left_to_the_model():
    assert _match("change my wallpaper to /a.png", make_telemetry(desktop=DesktopInfo())) is None


def test_weak_matches_are_not_confident():
    found = _match("what is my disk doing lately", make_telemetry())
    assert found is not None and not found.confident
    assert _match("write me a poem", make_telemetry()) is None


def test_install_step_has_a_rollback_and_is_medium():
    plan = _match("install ripgrep", make_telemetry()).plan
    step = plan.command_plan[0]
    assert step.command == "pacman -S --needed --noconfirm ripgrep"
    assert step.risk_level == RiskLevel.MEDIUM and step.requires_confirmation
    assert plan.rollback_plan[0].id == step.rollback_id
