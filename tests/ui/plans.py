"""Plan builders for the user-interface tests.

Plans are built as plain dicts (what a model or a plan file would give) and annotated by the
real contract package (``anna_common.validate``), so every risk, scope and confirmation word in
these tests is Anna's own verdict, never a hand-written label.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from anna_common.findings import AnnotatedPlan
from anna_common.risk.assess import AssessContext
from anna_common.validate import validate

HOSTILE_NOTES = "red:\x1b[31mRED\x1b[0m title:\x1b]0;pwned\x07 markup:[bold red]LOUD[/] end"
"""A notes_for_user string that tries escape codes, an OSC title and Rich markup."""


def plan_dict(steps: Sequence[tuple[str, str, str]] = (), *,
              checks: Sequence[tuple[str, str]] = (), rollback: Sequence[tuple[str, str]] = (),
              goal: str = "Do the thing",
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


HOOK_TAIL = "touch /tmp/anna-hook-tail-END"
"""The last thing the long hook command runs: what a cut at 600 characters hid."""


APT_HOOK = ('sudo apt-get -o APT::Update::Pre-Invoke::="', '" update')
"""An apt hook: the review's case (valid where apt is the package manager)."""
SHELL_HOOK = ("sudo sh -c '", "'")
"""The same program as a root shell's (valid on any distribution: the end-to-end tests')."""


def hook_command(length: int = 2000, form: tuple[str, str] = APT_HOOK) -> str:
    """A hook command of about ``length`` characters: numbered filler (``w0000;``…), a
    markup-looking word that must stay text, then :data:`HOOK_TAIL` at its very end."""
    head = f"{form[0]}[bold red]hook[/] "
    words: list[str] = []
    while len(head) + len(" ".join(words)) + len(HOOK_TAIL) + 12 < length:
        words.append(f"w{len(words):04d};")
    return f'{head}{" ".join(words)} {HOOK_TAIL}{form[1]}'


def hook_words(command: str) -> list[str]:
    """The numbered filler words of :func:`hook_command`: each must be on screen."""
    return [w for w in command.split() if w.startswith("w") and w.endswith(";")]
