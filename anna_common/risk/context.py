"""The facts about a machine a command is judged in (:class:`AssessContext`).

Its own module, so what only builds or carries a context (the client's planner, telemetry's
:func:`anna_common.distro.context_from_telemetry`) does not import the rules and the path and
word analyses under :mod:`anna_common.risk.rules.base` (~8 ms of a planning request's
imports), which re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AssessContext:
    """Facts about the machine a command will run on (from telemetry).

    Frozen and hashable so assessments can be cached per (command, context).
    """

    distro: str | None = None
    """Distribution family: ``arch``, ``debian``, ``fedora``, ``suse``, ... or None if unknown."""
    home: str | None = None
    """The caller's home directory, so ``/home/alice/x`` is recognised as home."""
    bootloader: str | None = None
    """Detected bootloader (``grub``, ``systemd-boot``, ...): evidence for boot changes."""
    initramfs_tool: str | None = None
    """Detected initramfs generator (``mkinitcpio``, ``dracut``, ...)."""
    efi: bool = False
    """Booted through UEFI."""
