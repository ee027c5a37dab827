"""Tell the owner's desktop session that a plan waits (``notify-send``).

The command is a setting (``notify_command``; tests point it at a recording script).
A per-user daemon notifies its own session (its ``DBUS_SESSION_BUS_ADDRESS`` or
``$XDG_RUNTIME_DIR/bus``). The system daemon notifies each logged-in user's session
bus under ``notify_runtime_root`` (``/run/user/UID/bus``), running the command *as that
user* (never as root in someone's session). No session, or no command: nothing is sent
and the queue still holds the plan. The text names only the recipe (a checked name) and
the tier: no plan text reaches a notification server that may interpret markup.
"""

from __future__ import annotations

import logging
import os
import pwd
import shutil
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from annad.confine import runner
from annad.confine.credentials import Identity

if TYPE_CHECKING:
    from annad.config import DaemonSettings

log = logging.getLogger(__name__)
TIMEOUT_S = 10.0
"""How long one notify-send may take."""


def _program(command: str) -> str | None:
    if "/" in command:
        return command if os.access(command, os.X_OK) else None
    return shutil.which(command)


def _is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(path.stat().st_mode)
    except OSError:
        return False


def _sessions(settings: DaemonSettings, user_mode: bool
              ) -> list[tuple[Identity | None, dict[str, str]]]:
    if user_mode:
        env = {k: v for k, v in os.environ.items()
               if k in ("DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "DISPLAY",
                        "WAYLAND_DISPLAY")}
        bus = Path(env.get("XDG_RUNTIME_DIR", "/nonexistent")) / "bus"
        if "DBUS_SESSION_BUS_ADDRESS" not in env and _is_socket(bus):
            env["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={bus}"
        return [(None, env)] if "DBUS_SESSION_BUS_ADDRESS" in env else []
    found: list[tuple[Identity | None, dict[str, str]]] = []
    root = settings.notify_runtime_root
    try:
        dirs = sorted(p for p in root.iterdir() if p.name.isdigit())
    except OSError:
        return []
    for directory in dirs:
        uid = int(directory.name)
        bus = directory / "bus"
        if uid == 0 or not _is_socket(bus):
            continue
        try:
            entry = pwd.getpwuid(uid)
        except KeyError:
            continue
        ident = Identity(uid=uid, gid=entry.pw_gid, home=entry.pw_dir,
                                user=entry.pw_name)
        found.append((ident, {"DBUS_SESSION_BUS_ADDRESS": f"unix:path={bus}",
                              "XDG_RUNTIME_DIR": str(directory)}))
    return found


def notify(settings: DaemonSettings, *, user_mode: bool, summary: str, body: str) -> int:
    """Send the notification to every session found; how many accepted it."""
    program = _program(settings.notify_command)
    if program is None:
        log.info("no %s: the queue is not announced on a desktop", settings.notify_command)
        return 0
    sent = 0
    for identity, env in _sessions(settings, user_mode):
        result = runner.run_argv([program, "--app-name=Anna", "--urgency=normal", summary,
                                  body], timeout=TIMEOUT_S, identity=identity, env=env)
        if result.exit_code == 0:
            sent += 1
        else:
            log.warning("%s failed (exit %s): %s", program, result.exit_code,
                        result.output[-300:])
    return sent
