"""Wallpaper templates record the current wallpaper, then undo to exactly it.

Round one plans the checks that record; round two (``recorded``: what they printed) gives
each changing step an undo restoring that value. GNOME is applied and restored for real
with gsettings on its keyfile backend in a temporary home (value-exact, both keys);
hyprpaper's config rewrite is applied and rolled back by the real daemon in
tests/ui/test_e2e_wallpaper.py (byte-exact)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from anna_common.distro import context_from_telemetry
from anna_common.validate import validate
from annactl.planning import templates
from tests.planner.conftest import make_telemetry
from tests.planner.test_templates import DESKTOPS

HOME = "/home/user"
IMAGE = "/home/user/Pictures/new one.png"
REQUEST = "change my wallpaper to ~/Pictures/new one.png"

RECORDED = {
    "hyprpaper": {"current_config": "ipc = on\npreload = /home/user/old.png\n"
                                    "wallpaper = ,/home/user/old.png\nsplash = false\n"},
    "swaybg": {"current": "4242 swaybg -i /home/user/old.png -m fit\n"},
    "swww": {"current": "eDP-1: 1920x1080, scale: 1, currently displaying: image: "
                        "/home/user/old.png\n"},
    "gnome": {"current_light": "'file:///home/user/old.png'\n",
              "current_dark": "'file:///home/user/old-dark.png'\n"},
    "xfce": {"current": "/home/user/old.png\n"},
    "feh": {"current": "#!/bin/sh\nfeh --no-fehbg --bg-fill '/home/user/old.png' \n"},
}
UNDO = {
    "hyprpaper": "hyprctl hyprpaper preload /home/user/old.png && hyprctl hyprpaper wallpaper "
                 ",/home/user/old.png",
    "swaybg": "pkill -x swaybg; setsid -f swaybg -i /home/user/old.png -m fit >/dev/null 2>&1",
    "swww": "swww img /home/user/old.png",
    "gnome": "gsettings set org.gnome.desktop.background picture-uri "
             "''\"'\"'file:///home/user/old.png'\"'\"'' && gsettings set "
             "org.gnome.desktop.background picture-uri-dark "
             "''\"'\"'file:///home/user/old-dark.png'\"'\"''",
    "xfce": "xfconf-query -c xfce4-desktop -p /backdrop/screen0/monitor0/workspace0/last-image "
            "-s /home/user/old.png",
    "feh": "feh --no-fehbg --bg-fill /home/user/old.png",
}


def _plan(backend: str, recorded: dict[str, str] | None, home: str = HOME):
    snapshot = make_telemetry(desktop=DESKTOPS[backend])
    context = context_from_telemetry(snapshot, home)
    found = templates.match(REQUEST.replace("~", "~"), snapshot, context=context, home=home,
                            recorded=recorded)
    assert found is not None and found.plan is not None
    assert templates.records_first(found.template)
    result = validate(found.plan, context)
    assert result.ok, result.errors
    return found.plan, result.plan


@pytest.mark.parametrize("backend", sorted(RECORDED))
def test_round_one_records_and_promises_nothing_it_cannot_keep(backend: str) -> None:
    plan, _annotated = _plan(backend, None)
    recording = [c for c in plan.necessary_checks if c.id.startswith("current")]
    assert recording and all(not c.required for c in recording)
    assert "record the current wallpaper first" in plan.notes_for_user
    # nothing recorded yet: no step that changes the desktop live claims an undo
    live = [s for s in plan.command_plan if s.id != "write_config"]
    assert all(s.rollback_id is None for s in live)


@pytest.mark.parametrize("backend", sorted(RECORDED))
def test_round_two_undoes_to_exactly_the_recorded_wallpaper(backend: str) -> None:
    plan, annotated = _plan(backend, RECORDED[backend])
    undo = {r.id: r.command for r in plan.rollback_plan}
    apply = next(s for s in plan.command_plan if s.id == "apply")
    assert apply.rollback_id is not None and undo[apply.rollback_id] == UNDO[backend]
    assert "restores the wallpaper recorded before" in plan.notes_for_user
    assert annotated.rollback_status == "available"


@pytest.mark.parametrize("backend", sorted(RECORDED))
@pytest.mark.parametrize("hostile", ["'x'; touch /tmp/pwned; '", "$(touch /tmp/pwned)",
                                     "/home/user/a`id`.png", "relative/old.png",
                                     "/home/user/../../etc/shadow"])
def test_a_recorded_value_anna_cannot_read_back_exactly_gives_no_undo(backend: str,
                                                                      hostile: str) -> None:
    recorded = {key: value.replace("/home/user/old.png", hostile).replace(
        "'file:///home/user/old.png'", hostile) for key, value in RECORDED[backend].items()}
    plan, _annotated = _plan(backend, recorded)
    apply = next(s for s in plan.command_plan if s.id == "apply")
    assert apply.rollback_id is None, [r.command for r in plan.rollback_plan]
    assert "could not be read back exactly" in plan.notes_for_user
    assert "pwned" not in " ".join(r.command for r in plan.rollback_plan)


def test_hyprpaper_rewrites_its_config_and_creates_one_when_missing() -> None:
    plan, _ = _plan("hyprpaper", RECORDED["hyprpaper"])
    write = next(s for s in plan.command_plan if s.id == "write_config")
    assert write.command.startswith("sed -i -e ") and "/home/user/.config/hypr/hyprpaper.conf" \
        in write.command
    plan, _ = _plan("hyprpaper", {})  # the check found no file
    write = next(s for s in plan.command_plan if s.id == "write_config")
    assert write.command.startswith("mkdir -p /home/user/.config/hypr && printf ")


def _gsettings(home: Path, *argv: str) -> str:
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "GSETTINGS_BACKEND": "keyfile"}
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    proc = subprocess.run(list(argv), env=env, capture_output=True, text=True, check=True,
                          timeout=30)
    return proc.stdout


def _run_each(home: Path, command: str) -> None:
    """A plan's ``gsettings … && gsettings …`` command, each part run as its own argv (no
    shell: the words are exactly what bash would pass)."""
    for part in command.split(" && "):
        argv = shlex.split(part)
        assert argv[0] == "gsettings"
        _gsettings(home, *argv)


@pytest.mark.skipif(shutil.which("gsettings") is None, reason="gsettings is not installed "
                    "(.ci/run installs libglib2.0-bin and gsettings-desktop-schemas)")
def test_gnome_applies_and_restores_both_keys_value_exact(tmp_path: Path) -> None:
    home = tmp_path / "gnome-home"
    home.mkdir()
    schema = "org.gnome.desktop.background"
    _gsettings(home, "gsettings", "set", schema, "picture-uri", "'file:///srv/light one.png'")
    _gsettings(home, "gsettings", "set", schema, "picture-uri-dark", "'file:///srv/dark.png'")
    keyfile = home / ".config" / "glib-2.0" / "settings" / "keyfile"
    before = {key: _gsettings(home, "gsettings", "get", schema, key)
              for key in ("picture-uri", "picture-uri-dark")}
    plan, _ = _plan("gnome", None, home=str(home))
    recorded = {}
    for check in plan.necessary_checks:
        if check.id.startswith("current_"):
            recorded[check.id] = _gsettings(home, *shlex.split(check.command))
    plan, _annotated = _plan("gnome", recorded, home=str(home))
    apply = next(s for s in plan.command_plan if s.id == "apply")
    _run_each(home, apply.command)
    after = {key: _gsettings(home, "gsettings", "get", schema, key) for key in before}
    assert all("Pictures/new%20one.png" in value for value in after.values()), after
    undo = next(r.command for r in plan.rollback_plan if r.id == apply.rollback_id)
    _run_each(home, undo)
    restored = {key: _gsettings(home, "gsettings", "get", schema, key) for key in before}
    assert restored == before, (restored, keyfile.read_text())
