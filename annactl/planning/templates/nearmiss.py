"""When no offline template answers: which one came close, and why it could not.

Said instead of a bare ``LLM_UNAVAILABLE`` ("installing packages offline needs pacman, apt,
dnf or zypper; this machine has apk"), so a person without a model learns what would work
and what will not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from annactl.planning.templates.packages import _CLEAN, _INSTALL, _REMOVE
from annactl.planning.templates.services import _SERVICE
from annactl.planning.templates.wallpaper import _WALLPAPER

if TYPE_CHECKING:
    from annactl.planning.templates.base import Context, TemplateMatch

WALLPAPER_BACKENDS = "hyprpaper, swww, swaybg, GNOME, XFCE or feh"
"""What the wallpaper templates can drive."""


def _manager(ctx: Context) -> str:
    packages = ctx.telemetry.packages
    if packages.manager and packages.manager not in ("none", "pacman"):
        return packages.manager
    distro = ctx.assess_context.distro or ctx.telemetry.system.distro_id
    return {"alpine": "apk", "gentoo": "portage", "void": "xbps"}.get(
        distro or "", f"no readable pacman database ({packages.reason or distro or 'unknown'})")


def near_miss(ctx: Context, found: TemplateMatch | None) -> str | None:
    """Why the template closest to the request did not answer it, or None."""
    if found is not None and found.rejected:
        return f"the {found.template} template refused it: {found.rejected}"
    text = ctx.request
    if _INSTALL.match(text) or _REMOVE.match(text) or _CLEAN.match(text):
        verb = "installing" if _INSTALL.match(text) else ("removing" if _REMOVE.match(text)
                                                          else "cleaning the cache of")
        return (f"{verb} packages offline needs pacman, apt, dnf or zypper; this machine has "
                f"{_manager(ctx)}")
    if _SERVICE.match(text) and not ctx.telemetry.services.available:
        return ("restarting or enabling a service needs systemd: "
                f"{ctx.telemetry.services.reason or 'systemd is not reachable'}")
    if _WALLPAPER.match(text):
        return (f"changing the wallpaper offline needs {WALLPAPER_BACKENDS}; none was found "
                "running or installed")
    return None
