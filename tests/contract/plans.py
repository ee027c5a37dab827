"""Plan fixtures for contract tests (dicts, as a model would send them)."""

from __future__ import annotations

import copy
from typing import Any

WALLPAPER: dict[str, Any] = {
    "analysis": "Wayland with Hyprland; hyprpaper is installed and running.",
    "goals": ["Set wallpaper to /home/alice/besseggen.png"],
    "necessary_checks": [
        {"id": "check_file", "description": "Verify image file exists",
         "command": "test -f /home/alice/besseggen.png && echo exists || echo missing",
         "risk_level": "INFO", "required": True},
        {"id": "check_hyprpaper", "description": "Verify hyprpaper is running",
         "command": "pgrep -x hyprpaper > /dev/null && echo running || echo 'not running'",
         "risk_level": "INFO", "required": True},
    ],
    "command_plan": [
        {"id": "update_config", "description": "Update hyprpaper preload",
         "command": "sed -i 's|^preload = .*|preload = /home/alice/besseggen.png|' "
                    "~/.config/hypr/hyprpaper.conf",
         "risk_level": "LOW", "rollback_id": "restore_config", "requires_confirmation": True},
        {"id": "reload_hyprpaper", "description": "Apply the wallpaper",
         "command": "hyprctl hyprpaper wallpaper ',/home/alice/besseggen.png'",
         "risk_level": "LOW", "rollback_id": None, "requires_confirmation": False},
    ],
    "rollback_plan": [
        {"id": "restore_config", "description": "Restore previous config",
         "command": "cp ~/.config/hypr/hyprpaper.conf.bak ~/.config/hypr/hyprpaper.conf"},
    ],
    "notes_for_user": "I'll change your wallpaper using hyprpaper.",
    "meta": {"detection_results": {"de": None, "wm": "hyprland",
                                   "wallpaper_backends": ["hyprpaper"],
                                   "display_protocol": "wayland"},
             "template_used": None, "llm_version": "anna_runtime_v3"},
}

STATUS: dict[str, Any] = {
    "analysis": "User wants a status overview.",
    "goals": ["Provide system health summary"],
    "necessary_checks": [], "command_plan": [], "rollback_plan": [],
    "notes_for_user": "Your system is healthy.",
    "meta": {"detection_results": {}, "template_used": "system_status_overview",
             "llm_version": "anna_runtime_v3"},
}


def plan(base: dict[str, Any] | None = None, **changes: Any) -> dict[str, Any]:
    """A deep copy of ``base`` (the wallpaper plan) with top-level keys replaced."""
    data = copy.deepcopy(base or WALLPAPER)
    data.update(changes)
    return data


def step(ident: str, command: str, risk: str = "LOW", rollback: str | None = None,
         confirm: bool = True) -> dict[str, Any]:
    """One command_plan entry."""
    return {"id": ident, "description": f"step {ident}", "command": command, "risk_level": risk,
            "rollback_id": rollback, "requires_confirmation": confirm}
