"""A link or a directory where code is looked up: what it lets another user put there.

- a symlink at a governing path (``/etc/alternatives/editor``, a sudoers drop-in, a unit, a
  program in root's PATH) to a file another user can change: what root runs or obeys would
  be that user's to write — banned;
- a directory of root's PATH made writable by others, or given to another uid: any program
  root runs by name could be replaced — banned.
"""

from __future__ import annotations

import posixpath

from anna_common.risk.content.base import Finding, Reader
from anna_common.risk.content.kinds import PATH_DIRS, RUNS_OR_GRANTS, kind_of


def governs(path: str) -> bool:
    """A path whose file governs access or runs code (its kind, or a program in root's
    PATH)."""
    return kind_of(path) in RUNS_OR_GRANTS or posixpath.dirname(path) in PATH_DIRS


def link_findings(path: str, target: str, reader: Reader) -> list[Finding]:
    """A symlink at ``path`` to ``target`` (relative to the link's directory)."""
    if kind_of(path) == "anna":
        return [Finding("anna.own-config", "BAN_ANNA_CONFIG", True,
                        "it is Anna's own configuration: only the administrator or annactl "
                        "changes it, never a plan")]
    if not governs(path):
        return []
    real = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if reader.other_writable(real):
        return [Finding("link.untrusted", "BAN_UNTRUSTED_CODE", True,
                        f"links it to {real}, which another user can change")]
    return []


def directory_findings(path: str, mode: int, uid: int) -> list[Finding]:
    """A directory of root's PATH left writable by others or owned by another uid."""
    if path.rstrip("/") not in PATH_DIRS:
        return []
    if mode & 0o022 or uid not in (0, -1):
        return [Finding("pathdir.writable", "BAN_SYSTEM_PERMISSIONS", True,
                        "lets another user replace programs root runs by name (a directory "
                        "of root's PATH)")]
    return []


__all__ = ["directory_findings", "governs", "link_findings"]
