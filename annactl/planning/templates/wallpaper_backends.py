"""Each wallpaper backend's steps, and how the previous wallpaper is read back and restored.

A wallpaper template is planned twice (:func:`annactl.planning.templates.wallpaper
.change_wallpaper`): first with read-only checks that *record* the current wallpaper; once
they ran, again with what they printed (``recorded``, check id → output), so each changing
step carries an undo that puts back exactly the previous value: the GVariant text GNOME
printed for both keys (light and dark), XFCE's property, feh's ``~/.fehbg``, swaybg's
and swww's current image. hyprpaper's change persists in ``~/.config/hypr/hyprpaper.conf``
(its ``preload``/``wallpaper`` lines rewritten): the daemon backs the file up before the
step writes it and restores it on rollback, and the live reload is undone by showing the
wallpaper the old file named.

Recorded values are untrusted (they come from the desktop): each must match a strict shape
(a plain absolute path, a plain file URI in GVariant text) before it goes into a command, quoted; a
value that does not is not restored, and the step has no undo (the plan says so).
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING
from urllib.parse import quote as url_quote

from annactl.planning.templates.base import safe_path

if TYPE_CHECKING:
    from annactl.planning.templates.base import PlanBuilder

HYPRPAPER_CONF = ".config/hypr/hyprpaper.conf"
"""hyprpaper's configuration, under the home directory."""
GNOME_SCHEMA = "org.gnome.desktop.background"
GNOME_KEYS = ("picture-uri", "picture-uri-dark")
"""GNOME's wallpaper keys: the light style's and the dark style's."""
XFCE_PROP = "/backdrop/screen0/monitor0/workspace0/last-image"
SWAYBG_MODES = frozenset({"stretch", "fill", "fit", "center", "tile"})
_GNOME_URI = re.compile(r"^'(?:file://(/[A-Za-z0-9%/._~+@:,= -]{0,2000}))?'$")
"""What ``gsettings get`` prints for a file URI (or an empty one), as GVariant text."""


def _gnome_value(raw: str, home: str) -> str | None:
    """The GVariant text ``gsettings get`` printed, when it names a plain absolute path (or
    nothing): exactly what ``gsettings set`` takes back."""
    from urllib.parse import unquote

    value = raw.strip()
    found = _GNOME_URI.match(value)
    if found is None:
        return None
    path = found.group(1)
    return value if path is None or _path(unquote(path), home) == unquote(path) else None
_MONITOR = re.compile(r"^[A-Za-z0-9_.:-]{0,64}$")
_CONF_LINE = re.compile(r"^\s*wallpaper\s*=\s*([^,]*),(.+?)\s*$")


def _path(raw: str | None, home: str) -> str | None:
    return safe_path(raw, home) if raw else None


def _hyprpaper_previous(conf: str | None, home: str) -> list[tuple[str, str]]:
    """(monitor, image) pairs of the old config's ``wallpaper =`` lines (plain ones only)."""
    pairs = []
    for line in (conf or "").splitlines()[:200]:
        found = _CONF_LINE.match(line)
        if found is None:
            continue
        monitor, path = found.group(1).strip(), _path(found.group(2).strip(), home)
        if path is None or not _MONITOR.match(monitor):
            return []  # one line Anna cannot read back exactly: restore none by hand
        pairs.append((monitor, path))
    return pairs[:8]


def hyprpaper(builder: PlanBuilder, path: str, recorded: dict[str, str] | None) -> str:
    """Rewrite the config's preload/wallpaper lines, then show the image; returns a note."""
    home = builder.ctx.home.rstrip("/")
    conf = shlex.quote(f"{home}/{HYPRPAPER_CONF}")
    q = shlex.quote(path)
    builder.check("backend_running", "Verify hyprpaper is running", "pgrep -x hyprpaper")
    builder.check("current_config", "Record the current hyprpaper configuration",
                  f"cat {conf}", required=False)
    lines = f"printf 'preload = %s\\nwallpaper = ,%s\\n' {q} {q}"
    if recorded is not None and "current_config" not in recorded:
        builder.step("write_config", "Create hyprpaper.conf naming the image (it had none)",
                     f"mkdir -p {shlex.quote(home + '/.config/hypr')} && {lines} > {conf}")
    else:
        builder.step("write_config", "Replace the preload and wallpaper lines of "
                     "hyprpaper.conf, so the change survives a restart",
                     f"sed -i -e '/^[[:space:]]*\\(preload\\|wallpaper\\)[[:space:]]*=/d' "
                     f"{conf} && {lines} >> {conf}")
    previous = _hyprpaper_previous((recorded or {}).get("current_config"), home)
    undo = None
    if previous:
        undo = ("Show the previous wallpaper again", " && ".join(
            f"hyprctl hyprpaper preload {shlex.quote(old)} && hyprctl hyprpaper wallpaper "
            f"{shlex.quote(monitor + ',' + old)}" for monitor, old in previous))
    builder.step("apply", "Load the image in hyprpaper and show it on every monitor",
                 f"hyprctl hyprpaper preload {q} && hyprctl hyprpaper wallpaper "
                 f"{shlex.quote(',' + path)}", undo=undo)
    return "The daemon keeps a copy of hyprpaper.conf and restores it on rollback."


def swaybg(builder: PlanBuilder, path: str, recorded: dict[str, str] | None) -> str:
    """Restart swaybg with the image; the undo restarts it with the recorded one."""
    builder.check("current", "Record the image swaybg shows now", "pgrep -a -x swaybg",
                  required=False)
    undo = None
    found = re.search(r"\s-i\s+(.+?)(?:\s+-m\s+(\S+))?\s*$",
                      ((recorded or {}).get("current") or "").splitlines()[0]
                      if (recorded or {}).get("current") else "")
    old = _path(found.group(1), builder.ctx.home) if found else None
    mode = (found.group(2) if found else None) or "fill"
    if old is not None and mode in SWAYBG_MODES:
        undo = ("Restart swaybg with the previous image",
                f"pkill -x swaybg; setsid -f swaybg -i {shlex.quote(old)} -m {mode} "
                ">/dev/null 2>&1")
    builder.step("apply", "Restart swaybg with the new image",
                 f"pkill -x swaybg; setsid -f swaybg -i {shlex.quote(path)} -m fill "
                 ">/dev/null 2>&1", undo=undo)
    return "swaybg forgets this at logout: your sway config's `output * bg` line decides then."


def swww(builder: PlanBuilder, path: str, recorded: dict[str, str] | None) -> str:
    """Show the image with swww; the undo shows the image ``swww query`` reported."""
    builder.check("current", "Record the image swww shows now", "swww query", required=False)
    found = re.search(r"image: (.+?)\s*$", ((recorded or {}).get("current") or "")
                      .splitlines()[0] if (recorded or {}).get("current") else "")
    old = _path(found.group(1), builder.ctx.home) if found else None
    undo = ("Show the previous image", f"swww img {shlex.quote(old)}") if old else None
    builder.step("apply", "Show the image with swww", f"swww img {shlex.quote(path)}",
                 undo=undo)
    return "swww forgets this at logout unless your compositor's startup sets it."


def gnome(builder: PlanBuilder, path: str, recorded: dict[str, str] | None) -> str:
    """Set both GNOME keys; the undo sets each back to the exact value recorded."""
    uri = shlex.quote("file://" + url_quote(path))
    olds = []
    for key in GNOME_KEYS:
        check_id = "current_" + ("dark" if key.endswith("dark") else "light")
        builder.check(check_id, f"Record the current {key}",
                      f"gsettings get {GNOME_SCHEMA} {key}", required=False)
        olds.append(_gnome_value((recorded or {}).get(check_id) or "", builder.ctx.home))
    undo = None
    if all(olds):
        undo = ("Set both keys back to the values recorded before",
                " && ".join(f"gsettings set {GNOME_SCHEMA} {key} {shlex.quote(old or '')}"
                            for key, old in zip(GNOME_KEYS, olds, strict=True)))
    builder.step("apply", "Set the GNOME background (light and dark styles)",
                 " && ".join(f"gsettings set {GNOME_SCHEMA} {key} {uri}" for key in GNOME_KEYS),
                 undo=undo)
    return "GNOME keeps the setting across logins."


def xfce(builder: PlanBuilder, path: str, recorded: dict[str, str] | None) -> str:
    """Set XFCE's desktop image property; the undo sets the recorded one again."""
    prop = f"xfconf-query -c xfce4-desktop -p {XFCE_PROP}"
    builder.check("current", "Record the current XFCE desktop image", prop, required=False)
    old = _path(((recorded or {}).get("current") or "").strip(), builder.ctx.home)
    undo = ("Set the previous image again", f"{prop} -s {shlex.quote(old)}") if old else None
    builder.step("apply", "Set the XFCE desktop image (first monitor, first workspace)",
                 f"{prop} -s {shlex.quote(path)}", undo=undo)
    return "XFCE keeps the setting across logins."


def feh(builder: PlanBuilder, path: str, recorded: dict[str, str] | None) -> str:
    """Set the root window image (feh writes ~/.fehbg); the undo shows the recorded one."""
    fehbg = shlex.quote(builder.ctx.home.rstrip("/") + "/.fehbg")
    builder.check("current", "Record the image in ~/.fehbg", f"cat {fehbg}", required=False)
    old = None
    for line in ((recorded or {}).get("current") or "").splitlines()[:20]:
        try:
            words = shlex.split(line)  # parsed as data, never run
        except ValueError:
            continue
        if words[:1] == ["feh"] and words and any(w.startswith("--bg-") for w in words):
            old = _path(words[-1], builder.ctx.home)
    undo = None
    if old is not None:
        undo = ("Show the previous image (the daemon restores ~/.fehbg)",
                f"feh --no-fehbg --bg-fill {shlex.quote(old)}")
    builder.step("apply", "Set the X11 root window image with feh (and ~/.fehbg)",
                 f"feh --bg-fill {shlex.quote(path)}", undo=undo)
    return "feh writes ~/.fehbg, which your session runs at login; the daemon keeps its copy."


BACKENDS = {"hyprpaper": hyprpaper, "swaybg": swaybg, "swww": swww, "gnome": gnome,
            "xfce": xfce, "feh": feh}
"""Backend name → the function that adds its checks and steps."""
