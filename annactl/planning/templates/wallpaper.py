"""Wallpaper template: the backend is chosen from telemetry (running first, then the desktop)."""

from __future__ import annotations

import re
import shlex

from annactl.planning.templates.base import (
    IMAGE_SUFFIXES,
    Context,
    PlanBuilder,
    TemplateMatch,
    safe_path,
)

_WALLPAPER = re.compile(r"(?i)^(?:please )?(?:change|set|switch|make)(?: my| the)?(?: desktop)? "
                        r"(?:wallpaper|background)(?: image)? (?:to|as) (.+?)[.! ]*$")
RECORDING_PREFIX = "wallpaper_change_"
"""Templates with this id prefix record the current wallpaper first (planned twice)."""


def choose_backend(ctx: Context) -> str | None:
    """The wallpaper backend for this session, from telemetry; None when unknown."""
    desktop = ctx.telemetry.desktop
    running = desktop.wallpaper_backends_running
    installed = desktop.wallpaper_backends_installed
    for backend in ("hyprpaper", "swww", "swaybg"):
        if backend in running:
            return backend
    de = (desktop.de or "").lower()
    wm = (desktop.wm or "").lower()
    if "gnome" in de:
        return "gnome"
    if "xfce" in de:
        return "xfce"
    if wm == "hyprland" and "hyprpaper" in installed:
        return "hyprpaper"
    for backend in ("swww", "swaybg"):
        if backend in installed and desktop.display_protocol == "wayland":
            return backend
    if desktop.display_protocol == "x11" and "feh" in installed:
        return "feh"
    return None


def change_wallpaper(ctx: Context) -> TemplateMatch | None:
    """"change my wallpaper to PATH" → the command for the detected backend."""
    found = _WALLPAPER.match(ctx.request)
    if found is None:
        return None
    template = "wallpaper_change_v1"
    path = safe_path(found.group(1), ctx.home)
    if path is None or not path.lower().endswith(IMAGE_SUFFIXES):
        return TemplateMatch(template, True, rejected=f"{found.group(1)!r} is not a plain "
                             "absolute path to an image")
    backend = choose_backend(ctx)
    if backend is None:
        return None  # the environment is unclear: the model can add detection checks
    builder = PlanBuilder(ctx, f"{RECORDING_PREFIX}{backend}_v1", [f"Set the wallpaper to {path}"])
    builder.check("check_file", "Verify the image exists", f"test -f {shlex.quote(path)}")
    # imported here: only a wallpaper request needs the backends (issue 23.7)
    from annactl.planning.templates.wallpaper_backends import BACKENDS

    persist = BACKENDS[backend](builder, path, ctx.recorded)
    undone = all(step.rollback_id for step in builder.steps
                 if step.id != "write_config")  # the daemon's backup undoes the file
    if ctx.recorded is None:
        how = "The checks record the current wallpaper first, so a rollback restores it."
    elif undone:
        how = "A rollback restores the wallpaper recorded before."
    else:
        how = ("The previous wallpaper could not be read back exactly, so a rollback cannot "
               "restore it.")
    plan = builder.build(f"The session uses {backend} for the wallpaper (from telemetry).",
                         f"I will set your wallpaper to {path} with {backend}. {persist} "
                         f"{how} Risk: LOW (cosmetic).")
    return TemplateMatch(builder.template, True, plan)
