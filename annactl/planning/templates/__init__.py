"""Offline templates: common requests answered from telemetry without a model.

Each template is a function ``(Context) -> TemplateMatch | None``. A
*confident* match (the whole request has the template's shape) is answered
without asking the model; a weak match (a keyword only) is used only when no
model is reachable, and the planner says so. The plans are ordinary
ActionPlans with ``meta.template_used`` set, validated like any other.

Templates: kernel, IP addresses, uptime, logins and listeners (telemetry alone), system
status, failed services, disk usage, why a disk is full, what uses the
memory or CPU, wallpaper change (hyprpaper, swww, swaybg, GNOME, XFCE, feh), install and
remove a package, upgrade the system and clean the package cache (pacman, apt, dnf, zypper),
restart, start or enable a service (checked against the machine's unit files or installed
packages), enable the installed firewall, append a line to a dotfile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from annactl.planning.templates.base import Context, TemplateMatch
from annactl.planning.templates.disks import DISK_FULL_TEMPLATE, disk_full, disk_health
from annactl.planning.templates.dotfiles import append_line
from annactl.planning.templates.info import disk_usage, failed_services, system_status
from annactl.planning.templates.machine import machine_fact
from annactl.planning.templates.packages import (
    clean_cache,
    install_package,
    remove_package,
    upgrade_system,
)
from annactl.planning.templates.processes import top_processes
from annactl.planning.templates.services import enable_firewall, service_action
from annactl.planning.templates.wallpaper import RECORDING_PREFIX, change_wallpaper

if TYPE_CHECKING:
    from anna_common.risk.rules.base import AssessContext
    from anna_common.telemetry import Telemetry

__all__ = ["TEMPLATES", "Context", "TemplateMatch", "match", "records_first"]

TEMPLATES: tuple[Callable[[Context], TemplateMatch | None], ...] = (
    install_package,
    remove_package,
    clean_cache,
    upgrade_system,
    enable_firewall,
    service_action,
    change_wallpaper,
    append_line,
    machine_fact,
    top_processes,
    failed_services,
    disk_health,
    disk_full,
    disk_usage,
    system_status,
)
"""Every template, most specific first (system status catches the most)."""

MAX_TEMPLATE_REQUEST = 300
"""Longer requests are never answered by a template."""


def records_first(template: str | None, confident: bool = True) -> bool:
    """Whether ``template`` plans twice: once to record the current state with its checks,
    then again with what they printed (``match(..., recorded=...)``), so its undo restores
    exactly that state (wallpaper) or it proposes only what they measured (disk full, when
    the whole request asked it: a weak match's checks run once, for the model to read)."""
    if not template:
        return False
    return str(template).startswith(RECORDING_PREFIX) or (confident
                                                           and template == DISK_FULL_TEMPLATE)


def match(request: str, telemetry: Telemetry, *, context: AssessContext,
          home: str, recorded: dict[str, str] | None = None) -> TemplateMatch | None:
    """The best template answer: the first confident match, else the first weak one
    (``recorded``: a recording template's second round, see :func:`records_first`)."""
    text = " ".join(request.split())
    if not text or len(text) > MAX_TEMPLATE_REQUEST:
        return None
    ctx = Context(request=text, telemetry=telemetry, assess_context=context, home=home,
                  recorded=recorded)
    weak: TemplateMatch | None = None
    for template in TEMPLATES:
        found = template(ctx)
        if found is None:
            continue
        if found.confident:
            return found
        weak = weak or found
    return weak
