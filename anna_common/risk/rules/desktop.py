"""Desktop settings, wallpapers, audio, displays: the user's own, reversible configuration.

Changing them is LOW (seed 000: wallpaper, fonts, theming, dotfiles); asking
for their current value is INFO.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out, help_only
from anna_common.risk.writes import options

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell.grammar import SimpleCommand

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
    "xinput": {"list", "list-props", "query-state", "--list"},
    "xrandr": {"-q", "--query", "--listmonitors", "--listactivemonitors", "--listproviders",
               "--current", "--verbose"},
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


# verbs that read with no value after them and set with one ("playerctl volume 0.5")
_GETTER_SETTERS = {"playerctl": {"volume", "loop", "shuffle", "position"},
                   "wpctl": {"settings"}}
_SETTING_WORDS = {"brightnessctl": {"set", "s"}, "light": {"-S", "-A", "-U", "-I", "-O"}}
_COMMAND_KEYS = re.compile(r"(?:^|[.\-_])(?:command|exec|commandline|binding-command|"
                           r"custom-command|launcher)$", re.I)


def _reads(cmd: SimpleCommand, prog: str, verb: str) -> bool:
    words = [w.text for w in cmd.args if not w.text.startswith("-")]
    if help_only(cmd):
        return True
    if prog == "xrandr":
        return bool(cmd.args) and {w.text for w in cmd.args} <= _READ_VERBS["xrandr"]
    if verb not in _READ_VERBS.get(prog, set()):
        return False
    if verb in _GETTER_SETTERS.get(prog, set()) and len(words) > (2 if prog == "wpctl" else 1):
        return False
    return not {w.text for w in cmd.args} & _SETTING_WORDS.get(prog, set())


def _escalated(cmd: SimpleCommand, out: Out, prog: str, verb: str) -> bool:
    """Desktop changes that are more than a preference: a keybinding's command, a sound
    server module (network listeners, file sinks), a keylogger-style input test."""
    texts = [w.text for w in cmd.args]
    settable = prog.startswith("kwriteconfig") or (
        prog in ("gsettings", "dconf", "xfconf-query") and
        verb in ("set", "write", "load", "-s", "--set"))
    if settable and any(_COMMAND_KEYS.search(t.rsplit("/", 1)[-1]) for t in texts):
        out.high(Code.PERSISTENCE, f"{prog} stores a command the desktop will run later",
                 target=prog)
        return True
    if prog == "pactl" and verb == "load-module":
        out.high(Code.SYSTEM_SETTING, "pactl load-module loads a sound-server module (network "
                 "listeners, pipes to files)", target="load-module")
        return True
    if prog == "xinput" and verb in ("test", "test-xi2"):
        out.high(Code.SECRET_READ, "xinput test records every key typed (passwords too)",
                 target="xinput")
        return True
    return False


def desktop_tool(cmd: SimpleCommand, out: Out) -> None:
    """Reads are INFO; changes to the user's own session are LOW."""
    prog = cmd.program or ""
    verb = _verb(cmd)
    if _escalated(cmd, out, prog, verb):
        return
    if _reads(cmd, prog, verb):
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
