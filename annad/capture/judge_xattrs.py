"""Extended attributes that grant power, spelled as the commands the rules know.

A captured step's change set carries each file's xattrs (:class:`annad.capture.layers.
Change`). Two of them hand out what a mode does not show: ``security.capability`` (a file
capability: ``cp /bin/bash /tmp/b; setcap cap_setuid+ep /tmp/b`` is a root shell for
everyone, whatever program wrote the xattr) and the POSIX ACLs (``system.posix_acl_access``,
``…_default``: a named user or group given rights). The judge
(:mod:`annad.capture.judge`) assesses them as ``setcap`` and ``setfacl`` — but only where
the step set or changed them: a file that already had them keeps its judgement.
"""

from __future__ import annotations

import os
import shlex
import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from annad.capture.layers import Change

CAPABILITY = "security.capability"
ACLS = ("system.posix_acl_access", "system.posix_acl_default")
JUDGED = frozenset((CAPABILITY, *ACLS))
"""The xattrs spelled as commands here."""
_ACL_USER, _ACL_GROUP = 2, 8
"""Tags of the named entries in the kernel's ACL format (version 2, 8 bytes an entry)."""
_ENTRY = struct.Struct("<HHI")


def _original(path: str, name: str) -> bytes | None:
    try:
        return os.getxattr(path, name, follow_symlinks=False)
    except OSError:
        return None


def set_by_step(change: Change) -> list[str]:
    """The judged xattrs ``change`` carries that the real path has not (yet) got."""
    return [name for name in sorted(JUDGED & change.xattrs.keys())
            if _original(change.path, name) != change.xattrs[name]]


def named_entries(value: bytes) -> list[tuple[str, int, int]]:
    """An ACL's named entries as (``u``/``g``, id, permission bits); a malformed value is
    one entry for uid 0, so it is judged, not skipped."""
    body = value[4:]
    if len(value) < 4 or len(body) % _ENTRY.size:
        return [("u", 0, 7)]
    out = []
    for offset in range(0, len(body), _ENTRY.size):
        tag, perm, ident = _ENTRY.unpack_from(body, offset)
        if tag in (_ACL_USER, _ACL_GROUP):
            out.append(("u" if tag == _ACL_USER else "g", ident, perm & 7))
    return out


def commands(change: Change, sudo: str) -> list[str]:
    """``setcap``/``setfacl`` commands making the judged xattrs the step set."""
    path = shlex.quote(change.path)
    out = []
    for name in set_by_step(change):
        if name == CAPABILITY:
            out.append(f"{sudo}setcap cap_observed+ep {path}")
            continue
        default = "-d " if name.endswith("_default") else ""
        for kind, ident, perm in named_entries(change.xattrs[name]) or [("u", 0, 0)]:
            rights = "".join(c if perm & bit else "-" for c, bit in (("r", 4), ("w", 2),
                                                                      ("x", 1)))
            out.append(f"{sudo}setfacl {default}-m {kind}:{ident}:{rights} {path}")
    return out
