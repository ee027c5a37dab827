"""What an observed change means: the content rules on the file a step really left.

The judge (:mod:`annad.capture.judge`) spells each change as a plain command and assesses
it by where it lands; this module reads *what* landed, for every change to a file that
governs access or runs code (:mod:`anna_common.risk.content.kinds`): the new file in the
upper layer is read (at most :data:`~anna_common.risk.content.meaning.MAX_CONTENT` bytes,
through a descriptor opened without following links) and judged by the same content rules
the command classifier uses, then by the system's own validator where one exists
(:mod:`annad.capture.validate_content`). A link put at such a path is judged by what it
points to, a directory of root's PATH by its new mode and owner. The questions the rules
ask about other users (can another uid change this program, this directory?) are answered
from the real tree and the change set itself, not guessed.

A refusal names the path, the line and the rule, never the content: the file may hold a
secret the step copied there.
"""

from __future__ import annotations

import os
import posixpath
import stat
from typing import TYPE_CHECKING

from anna_common.levels import RiskLevel
from anna_common.risk.content.kinds import kind_of
from anna_common.risk.content.links import directory_findings, link_findings
from anna_common.risk.content.meaning import MAX_CONTENT, Finding, Reader, judge_text

if TYPE_CHECKING:
    from collections.abc import Mapping

    from anna_common.risk.rules.base import AssessContext
    from annad.capture.layers import Change
    from annad.capture.validate_content import ContentValidators


def other_writable(path: str, owner: int, changed: Mapping[str, Change]) -> bool:
    """Whether a uid other than root and ``owner`` can change ``path``: the path itself or
    any directory above it is owned by another uid, or writable by others (a world-writable
    sticky directory protects only an entry that exists and is trusted). The state the step
    leaves (``changed``) counts before the real tree's."""
    if not path.startswith("/"):
        return True
    trusted = {0, owner}
    current = posixpath.normpath(os.path.realpath(path))
    entry_trusted = False
    while True:
        info = _state(current, changed)
        if info is not None:
            mode, uid, gid = info
            if uid not in trusted:
                return True
            others = bool(mode & stat.S_IWOTH) and not (mode & stat.S_ISVTX and entry_trusted)
            group = bool(mode & stat.S_IWGRP) and gid != 0 and not (
                stat.S_ISDIR(mode) and mode & stat.S_ISVTX and entry_trusted)
            if others or group:
                return True
            entry_trusted = True
        else:
            entry_trusted = False  # nothing there yet: whoever writes the parent makes it
        if current == "/":
            return False
        current = posixpath.dirname(current)


def _state(path: str, changed: Mapping[str, Change]) -> tuple[int, int, int] | None:
    change = changed.get(path)
    if change is not None:
        if change.kind == "delete":
            return None
        kind = stat.S_IFDIR if change.kind == "dir" else stat.S_IFREG
        return kind | change.mode, change.uid, change.gid
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_mode, info.st_uid, info.st_gid


def _read(source: str) -> bytes | None:
    """The new file from the upper layer, bounded (None: larger than the rules read)."""
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        chunks: list[bytes] = []
        total = 0
        while total <= MAX_CONTENT:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    finally:
        os.close(fd)
    return None if total > MAX_CONTENT else b"".join(chunks)


def findings(change: Change, reader: Reader) -> list[Finding]:
    """What the change grants or runs, by the content rules."""
    kind = kind_of(change.path)
    if change.kind == "symlink":
        return link_findings(change.path, change.link or "", reader)
    if change.kind == "dir":
        found = directory_findings(change.path, change.mode, change.uid)
        return found or (judge_text("anna", change.path, "", reader) if kind == "anna" else [])
    if kind is None:
        return []
    if change.kind != "file":
        return judge_text(kind, change.path, "", reader) if kind == "anna" else []
    try:
        data = _read(change.source)
    except OSError:
        return [Finding("content.unreadable", "OPAQUE", True, "the file the step left cannot "
                        "be read back, so what it grants or runs cannot be judged")]
    if data is None:
        return judge_text(kind, change.path, "x" * (MAX_CONTENT + 1), reader)
    return judge_text(kind, change.path, data.decode("utf-8", "replace"), reader)


def refusal(change: Change, *, tier: RiskLevel, ctx: AssessContext, owner: int,
            changed: Mapping[str, Change], validators: ContentValidators | None
            ) -> tuple[RiskLevel, str | None]:
    """The tier the content asks for and why ``change`` is refused (None: it is not)."""
    reader = Reader(ctx=ctx, other_writable=lambda p: other_writable(p, owner, changed))
    found = findings(change, reader)
    ban = next((f for f in found if f.banned), None)
    if ban is not None:
        return RiskLevel.HIGH, f"refused by the content rules: {ban.sentence()}"
    kind = kind_of(change.path)
    if validators is not None and change.kind == "file" and kind in ("sudoers", "sshd"):
        try:
            data = _read(change.source)
        except OSError:
            data = None
        why = validators.refusal(kind, change.path, data) if data else None
        if why is not None:
            return RiskLevel.HIGH, f"refused by the content rules: {why}"
    if found and tier < RiskLevel.HIGH:
        return RiskLevel.HIGH, f"HIGH (approved: {tier}): {found[0].sentence()}"
    return (RiskLevel.HIGH if found else RiskLevel.INFO), None


__all__ = ["findings", "other_writable", "refusal"]
