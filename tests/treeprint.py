"""What a rollback must put back, as one comparable value: the tests' tree fingerprint."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any


def fingerprint(top: Path) -> dict[str, tuple[Any, ...]]:
    """Everything a rollback must put back: type, mode, owner, content, link, mtime."""
    out: dict[str, tuple[Any, ...]] = {}
    for here, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(here) / name
            info = path.lstat()
            rel = str(path.relative_to(top))
            if stat.S_ISLNK(info.st_mode):
                out[rel] = ("l", str(path.readlink()), info.st_uid)
            elif stat.S_ISREG(info.st_mode):
                out[rel] = ("f", info.st_mode, info.st_uid, info.st_gid, info.st_mtime_ns,
                            hashlib.sha256(path.read_bytes()).hexdigest())
            elif stat.S_ISDIR(info.st_mode):
                out[rel] = ("d", info.st_mode, info.st_uid, info.st_gid)
            else:
                out[rel] = ("x", info.st_mode)
    return out
