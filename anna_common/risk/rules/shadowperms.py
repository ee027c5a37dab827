"""Whether a permission, ACL or ownership change opens the password hashes to others.

``/etc/shadow`` readable by everyone gives every local user the hashes to crack offline;
writable by everyone, any user can set root's password. Modes are read the way chmod
reads them (octal, or symbolic clauses with an optional who); a mode copied from another
file (``--reference``) is only trusted when that file is itself a shadow file.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anna_common.risk.rules.base import Out
    from anna_common.risk.writes import WriteTarget
    from anna_common.shell.grammar import SimpleCommand

_SHADOWS = frozenset({"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"})
_CHMOD_OPTS = frozenset({"-R", "-v", "-c", "-f", "-h", "-H", "-L", "-P", "--recursive",
                         "--verbose", "--changes", "--silent", "--quiet", "--no-dereference",
                         "--dereference", "--preserve-root", "--no-preserve-root"})
_CLAUSE = re.compile(r"^([ugoa]*)((?:[-+=][rwxXstugo]*)+)$")
_OWNERS = frozenset({"", "root", "0"})
_GROUPS = frozenset({"", "root", "0", "shadow", "42"})


def world_access(mode: str) -> bool:
    """True when a chmod mode gives others (or everyone) read or write."""
    if re.fullmatch(r"[0-7]{1,4}", mode):
        return bool(int(mode, 8) & 0o006)
    for clause in mode.split(","):
        match = _CLAUSE.match(clause)
        if match is None:
            return True  # not a mode chmod would accept as harmless: fail closed
        who = match.group(1)
        if who and "o" not in who and "a" not in who:
            continue
        for op, perms in re.findall(r"([-+=])([rwxXstugo]*)", match.group(2)):
            if op in "+=" and set(perms) & set("rwugo"):
                return True
    return False


def _chmod(cmd: SimpleCommand, out: Out) -> str | None:
    for word in cmd.args:
        text = word.text
        if text.startswith("--reference"):
            ref = text.partition("=")[2]
            return None if ref in _SHADOWS else "copies another file's mode onto"
        if word.literal and text in _CHMOD_OPTS:
            continue
        if not word.literal:
            return None  # a mode known only at run time: the location's HIGH stands
        return "makes world-readable or world-writable" if world_access(text) else None
    return None


def _setfacl(cmd: SimpleCommand) -> str | None:
    args = cmd.args
    for i, word in enumerate(args):
        spec = None
        if word.text in ("-m", "--modify", "-s", "--set") and i + 1 < len(args):
            spec = args[i + 1].text
        elif word.text.startswith(("--modify=", "--set=")):
            spec = word.text.split("=", 1)[1]
        elif word.text.startswith("-m") and len(word.text) > 2:
            spec = word.text[2:]
        for entry in (spec or "").split(","):
            parts = entry.strip().split(":")
            if parts[0] in ("o", "other") and set(parts[-1]) & set("rw"):
                return "grants every user access to"
    return None


def _chown(cmd: SimpleCommand) -> str | None:
    ops = [w.text for w in cmd.args if not w.text.startswith("-")]
    if not ops or any(w.text.startswith("--reference") for w in cmd.args):
        return None
    spec = ops[0]
    if cmd.program == "chgrp":
        return "hands to another group" if spec not in _GROUPS else None
    owner, _, group = spec.replace(".", ":").partition(":")
    if owner not in _OWNERS or group not in _GROUPS:
        return "hands to another user or group"
    return None


def shadow_exposed(cmd: SimpleCommand, target: WriteTarget, out: Out) -> str | None:
    """Why this change to a shadow file exposes it (a verb phrase), or None."""
    prog = cmd.program or ""
    if target.how == "chmod" and prog == "chmod":
        return _chmod(cmd, out)
    if target.how == "chmod" and prog == "setfacl":
        return _setfacl(cmd)
    if target.how == "chown" and prog in ("chown", "chgrp"):
        return _chown(cmd)
    return None
