"""Extended attributes in a backup: user.*, POSIX ACLs (``system.posix_acl_*``), file
capabilities (``security.capability``), SELinux labels — saved with a file or directory and
put back by its restore, so an undo that says "byte-exact" means it.

An undo once dropped a file capability and a user xattr that were there before and still
said "restored byte-exact". Now the snapshot records every attribute it can read (base64 in
the manifest), and the restore sets them after the owner and mode (``chown`` clears a
capability) and removes any the saved file did not have (an in-place restore keeps the
inode's). One that cannot be set (no privilege, a file system without them) is returned, and
the undo result says what was not restored instead of "byte-exact". The overlay's own
markers (``trusted.overlay.*``, ``user.overlay.*``) are never saved nor set.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import os

SKIPPED = ("trusted.overlay.", "user.overlay.")
"""Attributes that belong to the capture's overlays, not to the file."""
LAST = ("security.capability",)
"""Set after the others (an ACL or a label set after it would not clear it, but a
capability is the one that matters most to keep)."""
_UNSUPPORTED = (errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENODATA)


def _key(name: str) -> tuple[bool, str]:
    return name in LAST, name


def read(fd: int) -> dict[str, str]:
    """The attributes of the open file or directory ``fd`` (name → base64 value)."""
    out: dict[str, str] = {}
    try:
        names = os.listxattr(fd)
    except OSError:
        return out  # a file system without attributes has none to lose
    for name in sorted(names):
        if name.startswith(SKIPPED):
            continue
        with contextlib.suppress(OSError):
            out[name] = base64.b64encode(os.getxattr(fd, name)).decode()
    return out


def put(fd: int, saved: dict[str, str] | None) -> list[str]:
    """Make ``fd``'s attributes exactly ``saved`` (None: not recorded, left as they are);
    returns the names that could not be set or removed."""
    if saved is None:
        return []
    failed: list[str] = []
    try:
        now = [n for n in os.listxattr(fd) if not n.startswith(SKIPPED)]
    except OSError as exc:
        return [] if exc.errno in _UNSUPPORTED and not saved else sorted(saved)
    for name in now:
        if name not in saved:
            try:
                os.removexattr(fd, name)
            except OSError:
                failed.append(name)
    for name in sorted(saved, key=_key):
        try:
            value = base64.b64decode(saved[name])
            if name in now and os.getxattr(fd, name) == value:
                continue  # already so (a label the file system gives): nothing to set
            os.setxattr(fd, name, value)
        except (OSError, ValueError):
            failed.append(name)
    return failed


def differs(fd: int, saved: dict[str, str] | None) -> bool:
    """Whether ``fd``'s attributes are not ``saved`` (never, when none were recorded)."""
    return saved is not None and read(fd) != saved
