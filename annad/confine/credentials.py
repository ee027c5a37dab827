"""Who a process runs as: the identity the runner switches to before it executes anything.

Its own module so the confinement (:mod:`annad.confine.spec`) and the runner
(:mod:`annad.confine.runner`) share it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a process runs as."""

    uid: int
    """User id."""
    gid: int
    """Primary group id."""
    groups: tuple[int, ...] = ()
    """Supplementary groups."""
    home: str = "/"
    """HOME for the process."""
    user: str = ""
    """User name (USER, LOGNAME)."""
