"""Why the system daemon is not this user's to use, and the one command that fixes it.

The system daemon's socket lives in ``/run/anna`` (``0750 root:anna``): only root and
members of group ``anna`` can reach it at all. Everyone else works through a per-user
daemon, which runs their own changes only. When a plan needs root there, the person is
told why in words that match this machine (nothing set up; set up but not a member;
added to the group but in a session that started before) and the command that fixes it.
"""

from __future__ import annotations

import grp
import os
import pwd
from dataclasses import dataclass

GROUP = "anna"
"""The group whose members may run plans through the system daemon (``anna.sysusers``)."""
SETUP_COMMAND = "annactl setup"
"""Installs and starts the system daemon and adds the person to :data:`GROUP`."""


@dataclass(frozen=True)
class Access:
    """Why system steps cannot run for this user now, and what fixes it."""

    why: str
    """The reason, in words for people."""
    fix: str
    """The exact command (or action) that fixes it."""


def system_access(uid: int | None = None) -> Access:
    """What stands between this user and the system daemon (read from passwd and group)."""
    uid = os.getuid() if uid is None else uid
    try:
        user = pwd.getpwuid(uid)
    except KeyError:
        return Access(f"uid {uid} has no passwd entry", SETUP_COMMAND)
    try:
        group = grp.getgrnam(GROUP)
    except KeyError:
        return Access("the system daemon is not set up on this machine (there is no group "
                      f"{GROUP})", SETUP_COMMAND)
    member = user.pw_name in group.gr_mem or user.pw_gid == group.gr_gid
    if uid != 0 and not member:
        return Access(f"only root and group {GROUP} may use the system daemon, and "
                      f"{user.pw_name} is not in that group",
                      join_fix(user.pw_name, administers=_administers(user)))
    session = {os.getegid(), *os.getgroups()}
    if uid != 0 and group.gr_gid not in session:
        return Access(f"{user.pw_name} is in group {GROUP}, but this session started before "
                      "that", f"log in again (or start a shell with: newgrp {GROUP})")
    from annactl.core.sysdaemon import DEFAULT_SOCKET, LOOK, installed

    if installed(DEFAULT_SOCKET):  # set up already: annactl setup again would not help
        return Access("the system daemon is installed but does not answer", LOOK)
    return Access("the system daemon does not answer (not installed, or not running)",
                  SETUP_COMMAND)


ADMIN_GROUPS = ("wheel", "sudo", "admin")
"""Groups whose members are usually allowed sudo (Arch and Fedora ``wheel``, Debian
``sudo``, older Ubuntu ``admin``): a hint, never a permission Anna relies on."""


def join_fix(name: str, *, administers: bool) -> str:
    """What a user outside group anna, on a machine that is set up, can do: an
    administrator runs ``annactl setup`` (it adds them, asking for sudo); anyone else asks
    one, since ``annactl setup`` would only fail at its first sudo."""
    if administers:
        return f"{SETUP_COMMAND} (it adds {name} to group {GROUP}; then log in again)"
    return (f"ask an administrator to add you to group {GROUP} (sudo usermod -aG {GROUP} "
            f"{name}), then log in again")


def _administers(user: pwd.struct_passwd) -> bool:
    """``user`` is in one of :data:`ADMIN_GROUPS` (by name or primary group)."""
    for name in ADMIN_GROUPS:
        try:
            group = grp.getgrnam(name)
        except KeyError:
            continue
        if user.pw_name in group.gr_mem or user.pw_gid == group.gr_gid:
            return True
    return False
