"""A plan's ``rollback_status`` claims an undo only where one exists, as the daemon decides it:
the plan's rollback command, a snapshot of the files a step names
(:func:`annad.backups.targets.snapshot_targets`), or package and unit state the daemon records
(:mod:`annad.execution.prestate`). A risk code is no undo: a desktop setting (``USER_CONFIG``)
runs live and nothing of it is recorded."""

from __future__ import annotations

from typing import Any

import pytest

from anna_common.risk.assess import AssessContext
from anna_common.shell.grammar import analyse
from anna_common.validate import validate
from annad.backups.targets import snapshot_targets
from annad.execution.prestate import pacman_call, unit_calls

from .plans import plan, step

HOME = "/home/user"
CTX = AssessContext(home=HOME)

LIVE_SETTINGS = [
    "gsettings set org.gnome.desktop.background picture-uri 'file:///home/user/a.png'",
    "hyprctl keyword general:gaps_in 4",
    "loginctl lock-session",
    "swaymsg 'output * bg /home/user/a.png fill'",
]
"""Desktop settings (USER_CONFIG): LOW, live, nothing the daemon records."""


def _annotated(steps: list[dict[str, Any]], rollback: list[dict[str, str]] | None = None
               ) -> Any:
    result = validate(plan(necessary_checks=[], command_plan=steps,
                           rollback_plan=rollback or []), CTX)
    assert result.ok, result.errors
    assert result.plan is not None
    return result.plan


def _daemon_undoes(command: str) -> bool:
    """What the daemon itself would take back of ``command`` (no plan rollback)."""
    targets, _ = snapshot_targets(command, home=HOME, cwd=HOME)
    recorded = any(pacman_call(c) or unit_calls(c) for c in analyse(command).commands)
    return bool(targets) or recorded


@pytest.mark.parametrize("command", LIVE_SETTINGS)
def test_a_desktop_setting_without_a_rollback_claims_no_undo(command: str) -> None:
    annotated = _annotated([step("set", command)])
    assert "USER_CONFIG" in annotated.steps[0].codes
    assert not _daemon_undoes(command)  # the daemon has nothing to take it back with
    assert annotated.rollback_status == "none"


@pytest.mark.parametrize("command", LIVE_SETTINGS)
def test_its_rollback_command_is_its_undo(command: str) -> None:
    annotated = _annotated([step("set", command, rollback="undo")],
                           [{"id": "undo", "description": "undo",
                             "command": "gsettings reset org.gnome.desktop.background "
                                        "picture-uri"}])
    assert annotated.rollback_status == "available"


def test_a_snapshot_and_a_recorded_unit_are_undo_and_a_setting_beside_them_is_not() -> None:
    write = f"echo 'set -o vi' >> {HOME}/.bashrc"
    unit = "systemctl --user restart pipewire.service"
    for command in (write, unit):
        assert _daemon_undoes(command)
        assert _annotated([step("a", command)]).rollback_status == "available"
    mixed = _annotated([step("a", write), step("b", LIVE_SETTINGS[0])])
    assert mixed.rollback_status == "partial"
