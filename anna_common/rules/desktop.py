"""Desktop settings, wallpapers, audio, displays: the user's own, reversible configuration.

Changing them is LOW (seed 000: wallpaper, fonts, theming, dotfiles); asking
for their current value is INFO.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.rules.base import Code, Out, help_only
from anna_common.writes import options

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell import SimpleCommand

_READ_VERBS = {
    "gsettings": {"get", "list-schemas", "list-relocatable-schemas", "list-keys",
                  "list-children", "list-recursively", "range", "describe", "writable", "monitor",
                  "help"},
    "dconf": {"read", "list", "dump", "watch", "help", "_complete"},
    "hyprctl": {"monitors", "workspaces", "activeworkspace", "workspacerules", "clients",
                "activewindow", "layers", "devices", "version", "getoption", "splash",
                "cursorpos", "binds", "globalshortcuts", "instances", "animations", "rollinglog",
                "systeminfo", "decorations", "layouts", "configerrors", "locked", "descriptions",
                "submap", "getprop"},
    "pactl": {"list", "info", "stat", "get-default-sink", "get-default-source",
              "get-sink-volume", "get-sink-mute", "get-source-volume", "get-source-mute",
              "subscribe"},
    "wpctl": {"status", "inspect", "get-volume", "settings"},
    "amixer": {"scontrols", "scontents", "controls", "contents", "get", "sget", "info"},
    "playerctl": {"status", "metadata", "position", "volume", "loop", "shuffle", "-l",
                  "--list-all"},
    "brightnessctl": {"info", "get", "max", "-l", "--list", "-m"},
    "light": {"-G", "-L", "-M", "-P"},
    "xinput": {"list", "list-props", "query-state", "test", "--list"},
    "swww": {"query"},
    "kscreen-doctor": {"-o", "--outputs", "-j", "--json"},
    "gnome-extensions": {"list", "info", "show", "prefs"},
    "xdg-mime": {"query"},
    "xdg-settings": {"get", "check"},
    "xset": {"q", "-q"},
    "setxkbmap": {"-query", "-print"},
}

_USER_TOOLS = frozenset({
    "gsettings", "dconf", "xfconf-query", "kwriteconfig5", "kwriteconfig6", "kreadconfig5",
    "kreadconfig6", "plasma-apply-wallpaperimage", "plasma-apply-colorscheme",
    "plasma-apply-desktoptheme", "plasma-apply-lookandfeel", "plasma-apply-cursortheme",
    "lookandfeeltool", "hyprctl", "hyprpaper", "swaybg", "swww", "swaymsg", "feh", "nitrogen",
    "xwallpaper", "xsetroot", "wal", "waypaper", "azote", "mpvpaper", "wbg", "variety", "xrandr",
    "wlr-randr", "kscreen-doctor", "gnome-extensions", "setxkbmap", "xset", "xinput",
    "brightnessctl", "light", "pactl", "wpctl", "amixer", "playerctl", "notify-send", "xdg-open",
    "xdg-mime", "xdg-settings", "fc-cache", "update-desktop-database", "gtk-update-icon-cache",
    "hyprshade", "gammastep", "redshift", "wlsunset", "swaync-client", "makoctl", "dunstctl",
    "i3-msg", "bspc", "qdbus", "qdbus6", "gnome-session-quit", "xdotool", "wmctrl",
    "spectacle", "grim", "slurp", "scrot", "hyprpicker", "hyprlock", "swaylock", "wallust",
    "matugen", "nwg-look", "lxappearance", "qt5ct", "qt6ct", "kvantummanager",
    "xdg-user-dirs-update",
})
"""Programs that configure the user's own desktop session."""


def _verb(cmd: SimpleCommand) -> str:
    for word in cmd.args:
        if not word.text.startswith("-") or word.text in ("-l", "--list", "-q", "-query",
                                                          "-print", "-o", "--outputs", "-G",
                                                          "-L", "-M", "-P", "-m", "--list-all"):
            return word.text
    return ""


def desktop_tool(cmd: SimpleCommand, out: Out) -> None:
    """Reads are INFO; changes to the user's own session are LOW."""
    prog = cmd.program or ""
    verb = _verb(cmd)
    reads = _READ_VERBS.get(prog, set())
    if help_only(cmd) or verb in reads:
        out.read_only()
        return
    if prog == "swaymsg" and any(w.text.startswith("get_") for w in cmd.args):
        out.read_only()
        return
    if prog in ("xfconf-query",) and not options(cmd.args) & {"-s", "--set", "-r", "--reset",
                                                              "-n", "--create", "-T",
                                                              "--toggle"}:
        out.read_only()
        return
    if prog in ("kreadconfig5", "kreadconfig6", "wmctrl") and not (
            prog == "wmctrl" and options(cmd.args) & {"-c", "-k", "-s", "-r", "-a", "-o", "-n",
                                                      "-e", "-b", "-N", "-I", "-T", "-t"}):
        out.read_only()
        return
    if prog == "hyprctl" and verb == "plugin":
        out.high(Code.LIBRARY_PRELOAD, "hyprctl plugin loads code into the compositor",
                 target="plugin")
        return
    if prog == "dconf" and verb == "update":
        out.medium(Code.SYSTEM_SETTING, "dconf update rebuilds system-wide settings", system=True)
        return
    if prog in ("xrandr", "wlr-randr", "kscreen-doctor") and not cmd.args:
        out.read_only()
        return
    out.low(Code.USER_CONFIG, f"{prog} changes your desktop settings",
            target=verb or prog)


DESKTOP_RULES: dict[str, Callable[[SimpleCommand, Out], None]] = dict.fromkeys(
    sorted(_USER_TOOLS), desktop_tool
)
"""Rules for desktop-session programs."""
