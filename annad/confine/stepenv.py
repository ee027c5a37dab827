"""The environment every spawned process gets: never inherited from a caller.

A fixed PATH (:data:`SAFE_PATH`), pagers that never wait for a person, the identity's home
and user, and only the whitelisted session variables (:data:`SESSION_KEYS`) of user-scope
steps; a root step gets a plain ``LANG`` only. ``sudo`` and ``doas`` are shell functions
(:func:`sudo_shims`) in steps that are already root and in confined commands. The runner
(:mod:`annad.confine.runner`) spawns with it; the preview builds the same environment for its
overlay.
"""

from __future__ import annotations

import os
import pwd
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from annad.confine.credentials import Identity

SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""PATH for every step: never inherited from a caller."""


def sudo_shims() -> dict[str, str]:
    """Bash functions (exported through the environment) standing in for ``sudo`` and ``doas``.

    A root step and a confined command run ``sudo CMD`` as ``CMD``: the step is already root,
    with the HOME Anna judged (real sudo would reset HOME to /root, and ``sudo sh -c 'echo >
    ~/f'`` would write where nobody looked); a confined command gains nothing from sudo (no new
    privileges) but would only print an error. Options other than plain flags (``-u USER``,
    ``-i``, ``-s``, ``-l``…) go to the real program unchanged.
    """
    shims = {}
    for name in ("sudo", "doas"):
        shims[f"BASH_FUNC_{name}%%"] = (
            '() { local a=("$@"); while [ "$#" -gt 0 ]; do case "$1" in --) shift; break;; '
            f'-*[!nEHSkbP]*) command {name} "${{a[@]}}"; return;; -*) shift;; *) break;; '
            'esac; done; "$@"; }')
    return shims


_PLAIN_LOCALE = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
SESSION_KEYS = ("XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "LANG",
                "HYPRLAND_INSTANCE_SIGNATURE", "SWAYSOCK")
"""Session variables passed to user-scope steps (compositor sockets included: hyprctl and
swaymsg need them to reach the session)."""


def step_environment(identity: Identity | None, session: Mapping[str, str | None] | None,
                     *, home: str | None = None) -> dict[str, str]:
    """The environment of a step: fixed basics, the identity's home, whitelisted session vars.

    A root step (no identity) gets ``home`` as HOME: the home Anna judged ``~`` to be (the plan
    owner's, from passwd), never the daemon's own HOME, which systemd may leave unset.
    """
    env = {
        "PATH": SAFE_PATH,
        "PAGER": "cat",
        "SYSTEMD_PAGER": "",
        "GIT_PAGER": "cat",
        "TERM": "dumb",
        "LC_ALL": "C.UTF-8",
        "SHELL": "/bin/bash",
        "DEBIAN_FRONTEND": "noninteractive",
    }
    if identity is not None:
        env.update(HOME=identity.home, USER=identity.user, LOGNAME=identity.user)
    else:
        env.update(HOME=home or _own_home(), USER="root", LOGNAME="root")
    for key in SESSION_KEYS:
        value = (session or {}).get(key)
        if not value:
            continue
        # A system-scope step runs as root for whoever asked: the caller's bus and runtime
        # addresses would point root's programs at sockets the caller controls, and a
        # locale name with a slash is a path glibc loads. Root gets a plain LANG only.
        if identity is None and (key != "LANG" or not _PLAIN_LOCALE.fullmatch(value)):
            continue
        env[key] = value
    if "LANG" in env:
        env.pop("LC_ALL", None)  # the person's language wins for messages
    return env


def _own_home() -> str:
    """The daemon's home from passwd (not ``$HOME``): a helper's fallback, never a step's."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_dir or "/"
    except KeyError:
        return "/"
