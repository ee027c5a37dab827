"""The caller's desktop: environment, compositor, display protocol, wallpaper backends.

The session environment (a short whitelist the client sends) is the primary
evidence; running process names fill in what it leaves open, but only when the
caller has a graphical session (or sent none at all): a person on a text
console is not "in" the GNOME session someone else left running. Process names
are untrusted; they are only compared for equality with the fixed names below.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from anna_common.protocol.models import SessionEnv
from anna_common.telemetry import DesktopInfo

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Backend:
    """How to tell that a wallpaper backend is installed or running."""

    programs: tuple[str, ...]
    """Executables that mean it is installed."""
    packages: tuple[str, ...]
    """Arch package names that mean it is installed."""
    processes: tuple[str, ...]
    """Process names that mean it is running (the daemon, or the desktop that owns it)."""


WALLPAPER_BACKENDS: dict[str, Backend] = {
    "hyprpaper": Backend(("hyprpaper",), ("hyprpaper",), ("hyprpaper",)),
    "swaybg": Backend(("swaybg",), ("swaybg",), ("swaybg",)),
    "swww": Backend(("swww", "swww-daemon"), ("swww",), ("swww-daemon",)),
    "feh": Backend(("feh",), ("feh",), ("feh",)),
    "nitrogen": Backend(("nitrogen",), ("nitrogen",), ("nitrogen",)),
    "xwallpaper": Backend(("xwallpaper",), ("xwallpaper",), ("xwallpaper",)),
    # GNOME draws the wallpaper from gsettings in gnome-shell; XFCE from xfconf in xfdesktop.
    "gsettings": Backend(("gsettings",), ("glib2",), ("gnome-shell",)),
    "xfconf": Backend(("xfconf-query",), ("xfconf",), ("xfdesktop", "xfconfd")),
}
"""Backend name → evidence. ``feh``, ``nitrogen`` and ``xwallpaper`` set the image and exit,
so "running" is rare for them; "installed" is what matters."""

DESKTOPS: dict[str, str] = {
    "gnome": "gnome", "gnome-classic": "gnome", "gnome-xorg": "gnome", "kde": "kde",
    "plasma": "kde", "plasmawayland": "kde", "plasmax11": "kde", "xfce": "xfce",
    "xfce4": "xfce", "x-cinnamon": "cinnamon", "cinnamon": "cinnamon", "mate": "mate",
    "lxqt": "lxqt", "lxde": "lxde", "budgie": "budgie", "budgie-desktop": "budgie",
    "pantheon": "pantheon", "deepin": "deepin", "cosmic": "cosmic", "unity": "unity",
    "enlightenment": "enlightenment",
}
"""XDG_CURRENT_DESKTOP / DESKTOP_SESSION token (lower case) → desktop environment."""

WINDOW_MANAGERS = frozenset({
    "hyprland", "sway", "i3", "bspwm", "awesome", "openbox", "dwm", "qtile", "river", "niri",
    "wayfire", "labwc", "herbstluftwm", "xmonad", "spectrwm", "icewm", "fluxbox", "dwl",
    "weston", "kwin", "mutter", "xfwm4", "marco", "muffin", "gala", "budgie-wm",
})
"""Window managers and compositors, as named in the session or a process."""

PROCESS_HINTS: dict[str, tuple[str | None, str | None]] = {
    "Hyprland": (None, "hyprland"), "sway": (None, "sway"), "i3": (None, "i3"),
    "bspwm": (None, "bspwm"), "awesome": (None, "awesome"), "openbox": (None, "openbox"),
    "dwm": (None, "dwm"), "qtile": (None, "qtile"), "river": (None, "river"),
    "niri": (None, "niri"), "wayfire": (None, "wayfire"), "labwc": (None, "labwc"),
    "kwin_wayland": ("kde", "kwin"), "kwin_x11": ("kde", "kwin"), "plasmashell": ("kde", None),
    "gnome-shell": ("gnome", "mutter"), "xfce4-session": ("xfce", None),
    "xfwm4": ("xfce", "xfwm4"), "cinnamon": ("cinnamon", "muffin"),
    "mate-session": ("mate", None), "marco": ("mate", "marco"), "lxqt-session": ("lxqt", None),
    "budgie-wm": ("budgie", "budgie-wm"), "gala": ("pantheon", "gala"),
}
"""Process name → (desktop, window manager) it shows is running."""


def _tokens(session: SessionEnv) -> list[str]:
    raw = [*(session.XDG_CURRENT_DESKTOP or "").split(":")]
    if session.DESKTOP_SESSION:
        raw.append(session.DESKTOP_SESSION.rstrip("/").rsplit("/", 1)[-1])
    return [t.strip().lower() for t in raw if t.strip()]


def display_protocol(session: SessionEnv) -> Literal["wayland", "x11"] | None:
    """wayland or x11 from XDG_SESSION_TYPE, else from which display variable is set."""
    kind = (session.XDG_SESSION_TYPE or "").lower()
    if kind in ("wayland", "x11"):
        return "wayland" if kind == "wayland" else "x11"
    if session.WAYLAND_DISPLAY:  # XWayland sessions set DISPLAY too; wayland is the truth
        return "wayland"
    return "x11" if session.DISPLAY else None


def _from_session(session: SessionEnv) -> tuple[str | None, str | None]:
    tokens = _tokens(session)
    de = next((DESKTOPS[t] for t in tokens if t in DESKTOPS), None)
    if session.HYPRLAND_INSTANCE_SIGNATURE:
        wm: str | None = "hyprland"
    elif session.SWAYSOCK:
        wm = "sway"
    else:
        wm = next((t for t in tokens if t in WINDOW_MANAGERS), None)
    return de, wm


def _from_processes(names: Collection[str]) -> tuple[str | None, str | None]:
    de = wm = None
    for name, (hint_de, hint_wm) in PROCESS_HINTS.items():
        if name in names:
            de = de or hint_de
            wm = wm or hint_wm
    return de, wm


def installed_programs(programs: Iterable[str], path_dirs: Iterable[Path]) -> frozenset[str]:
    """Which of ``programs`` exist as executable files in ``path_dirs``."""
    dirs = list(path_dirs)
    return frozenset(p for p in programs
                     if any(os.access(d / p, os.X_OK) and (d / p).is_file() for d in dirs))


def backend_programs_on_path(path_dirs: Iterable[Path]) -> frozenset[str]:
    """The wallpaper backends' programs present in ``path_dirs`` (machine-wide: cacheable)."""
    return installed_programs({p for b in WALLPAPER_BACKENDS.values() for p in b.programs},
                              path_dirs)


def wallpaper_backends(names: Collection[str], packages: Collection[str],
                       programs: Collection[str]) -> tuple[list[str], list[str]]:
    """(installed, running) backend names, in :data:`WALLPAPER_BACKENDS` order.

    Installed: one of its programs is in ``programs`` (found on PATH) or one of its
    packages in ``packages``. Running: one of its process names is in ``names``.
    """
    installed = [n for n, b in WALLPAPER_BACKENDS.items()
                 if any(p in programs for p in b.programs)
                 or any(p in packages for p in b.packages)]
    running = [n for n, b in WALLPAPER_BACKENDS.items() if any(p in names for p in b.processes)]
    return installed, running


def detect_desktop(session: SessionEnv | None, process_names: Collection[str],
                   package_names: Collection[str], programs: Collection[str]) -> DesktopInfo:
    """The caller's desktop from its session, completed from processes when it has a display.

    ``session`` None means the caller sent nothing (the daemon's own view): processes
    decide. ``programs`` are the backend programs found on PATH
    (:func:`backend_programs_on_path`); installed backends are machine-wide, running
    ones come from process names.
    """
    protocol = display_protocol(session) if session is not None else None
    de, wm = _from_session(session) if session is not None else (None, None)
    if session is None or protocol is not None:
        seen_de, seen_wm = _from_processes(process_names)
        de, wm = de or seen_de, wm or seen_wm
    installed, running = wallpaper_backends(process_names, package_names, programs)
    return DesktopInfo(de=de, wm=wm, display_protocol=protocol,
                       wallpaper_backends_installed=installed,
                       wallpaper_backends_running=running)
