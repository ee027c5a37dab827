"""Wallpaper template: the backend is chosen from telemetry (running first, then the desktop)."""

from __future__ import annotations

import re
import shlex
from urllib.parse import quote as url_quote

from annactl.planning.templates.base import (
    IMAGE_SUFFIXES,
    Context,
    PlanBuilder,
    TemplateMatch,
    safe_path,
)

_WALLPAPER = re.compile(r"(?i)^(?:please )?(?:change|set|switch|make)(?: my| the)?(?: desktop)? "
                        r"(?:wallpaper|background)(?: image)? (?:to|as) (.+?)[.! ]*$")
_GNOME_KEYS = ("picture-uri", "picture-uri-dark")
_XFCE_PROP = "/backdrop/screen0/monitor0/workspace0/last-image"


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


def _steps(builder: PlanBuilder, backend: str, path: str) -> None:
    q = shlex.quote(path)
    if backend == "hyprpaper":
        builder.check("backend_running", "Verify hyprpaper is running", "pgrep -x hyprpaper")
        builder.step("apply", "Load the image in hyprpaper and show it on every monitor",
                     f"hyprctl hyprpaper preload {q} && hyprctl hyprpaper wallpaper "
                     f"{shlex.quote(',' + path)}")
    elif backend == "swww":
        builder.step("apply", "Show the image with swww", f"swww img {q}")
    elif backend == "swaybg":
        builder.step("apply", "Restart swaybg with the new image",
                     f"pkill -x swaybg; setsid -f swaybg -i {q} -m fill >/dev/null 2>&1")
    elif backend == "gnome":
        uri = shlex.quote("file://" + url_quote(path))
        builder.check("current", "Record the current wallpaper",
                      f"gsettings get org.gnome.desktop.background {_GNOME_KEYS[0]}",
                      required=False)
        builder.step("apply", "Set the GNOME background (light and dark styles)",
                     " && ".join(f"gsettings set org.gnome.desktop.background {key} {uri}"
                                 for key in _GNOME_KEYS),
                     undo=("Reset the GNOME background to the default",
                           " && ".join(f"gsettings reset org.gnome.desktop.background {key}"
                                       for key in _GNOME_KEYS)))
    elif backend == "xfce":
        builder.step("apply", "Set the XFCE desktop image (first monitor, first workspace)",
                     f"xfconf-query -c xfce4-desktop -p {_XFCE_PROP} -s {q}")
    else:
        builder.step("apply", "Set the X11 root window image with feh", f"feh --bg-fill {q}")


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
    builder = PlanBuilder(ctx, f"wallpaper_change_{backend}_v1", [f"Set the wallpaper to {path}"])
    builder.check("check_file", "Verify the image exists", f"test -f {shlex.quote(path)}")
    _steps(builder, backend, path)
    plan = builder.build(f"The session uses {backend} for the wallpaper (from telemetry).",
                         f"I will set your wallpaper to {path} with {backend}. Risk: LOW "
                         "(cosmetic, easy to change back).")
    return TemplateMatch(builder.template, True, plan)
