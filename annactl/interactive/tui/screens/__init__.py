"""The TUI's screens: the approval box, details, changing steps, the confirmation word,
progress, result."""

from __future__ import annotations

from enum import StrEnum


class Decision(StrEnum):
    """What the person decided on a modal screen."""

    APPROVE = "approve"
    """Go ahead (the approval box, or the confirmation word typed correctly)."""
    CANCEL = "cancel"
    """Do nothing."""
    ROLLBACK = "rollback"
    """Undo the plan (result screen)."""
    CLOSE = "close"
    """Leave (result screen)."""
    FIX = "fix"
    """Ask the model for a new plan after a failed one (result screen)."""
    EDIT = "edit"
    """Leave steps out or edit commands: a new plan, judged again (approval box)."""
    SWITCH = "switch"
    """Leave Anna's offline answer for the model's plan, which arrived meanwhile."""
