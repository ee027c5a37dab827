"""Plan builders for the user-interface tests.

Plans are built as plain dicts (what a model or a plan file would give) and annotated by the
real contract package (``anna_common.validate``), so every risk, scope and confirmation word in
these tests is Anna's own verdict, never a hand-written label.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from anna_common.findings import AnnotatedPlan
from anna_common.risk.assess import AssessContext
from anna_common.validate import validate

HOSTILE_NOTES = "red:\x1b[31mRED\x1b[0m title:\x1b]0;pwned\x07 markup:[bold red]LOUD[/] end"
"""A notes_for_user string that tries escape codes, an OSC title and Rich markup."""


def plan_dict(steps: list[tuple[str, str, str]] = (), *, checks: list[tuple[str, str]] = (),
              rollback: list[tuple[str, str]] = (), goal: str = "Do the thing",
              notes: str = "Notes for you.", analysis: str = "Analysis text.",
              rollback_ids: dict[str, str] | None = None) -> dict[str, Any]:
    """An ActionPlan v3 dict. ``steps`` are (id, command, model risk); checks (id, command)."""
    links = rollback_ids or {}
    return {
        "analysis": analysis,
        "goals": [goal],
        "necessary_checks": [
            {"id": cid, "description": f"check {cid}", "command": cmd, "risk_level": "INFO",
             "required": True} for cid, cmd in checks],
        "command_plan": [
            {"id": sid, "description": f"step {sid}", "command": cmd, "risk_level": risk,
             "rollback_id": links.get(sid), "requires_confirmation": risk != "INFO"}
            for sid, cmd, risk in steps],
        "rollback_plan": [{"id": rid, "description": f"undo {rid}", "command": cmd}
                          for rid, cmd in rollback],
        "notes_for_user": notes,
        "meta": {"detection_results": {}, "template_used": None,
                 "llm_version": "anna_runtime_v3"},
    }


def annotate_dict(data: dict[str, Any], home: Path | str = "/home/test") -> AnnotatedPlan:
    """The annotated plan Anna's validation makes of ``data`` (fails the test if invalid
    for reasons other than a ban)."""
    result = validate(data, AssessContext(distro="arch", home=str(home)))
    assert result.plan is not None, result.errors
    return result.plan


def wallpaper_plan() -> dict[str, Any]:
    """The seed's example: a wallpaper change on Hyprland with hyprpaper (LOW, rollback)."""
    conf = "~/.config/hypr/hyprpaper.conf"
    return plan_dict(
        [("backup_config", f"cp {conf} {conf}.anna_backup", "LOW"),
         ("update_config", f"sed -i 's|^preload = .*|preload = ~/besseggen.png|' {conf}", "LOW"),
         ("reload_hyprpaper", "hyprctl hyprpaper wallpaper ',~/besseggen.png'", "LOW")],
        rollback=[("restore_config", f"cp {conf}.anna_backup {conf}")],
        rollback_ids={"update_config": "restore_config"}, goal="Change wallpaper",
        notes="I'll change your wallpaper to ~/besseggen.png using hyprpaper.")
