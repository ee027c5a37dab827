"""Colours of risk badges and plan/step states, shared by every view (no Rich import here)."""

from __future__ import annotations

RISK_STYLE = {"INFO": "bold white on blue", "LOW": "bold black on green",
              "MEDIUM": "bold black on yellow", "HIGH": "bold white on red"}
"""Badge colours (seed 000): INFO blue, LOW green, MEDIUM yellow, HIGH red."""

STATUS_STYLE = {"succeeded": "green", "failed": "red", "rolled_back": "yellow",
                "rollback_failed": "bold red", "rollback_incomplete": "bold red",
                "rollback_unverified": "bold yellow",
                "interrupted": "magenta", "running": "cyan",
                "submitted": "blue", "rolling_back": "yellow", "pending": "dim",
                "answered": "green", "dry_run": "blue", "refused": "yellow",
                "skipped": "dim", "undone": "yellow", "undo_failed": "bold red",
                "verify_failed": "bold red"}
"""Colours of plan and step states (one set of states: the journal's)."""
