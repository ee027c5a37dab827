"""Temporary files a dead daemon leaves behind, and removing them at the next start.

Two kinds, both with recognisable names:

- a partial blob in the plan's store, ``backups/<plan>/blobs/.incoming-<pid>-<n>``
  (killed while saving a file), and a manifest being written, ``.manifest.json.tmp`` or
  ``.after.json.tmp``;
- a half-written restore copy beside the user's file, ``.<name>.anna-restore-<pid>``
  (killed while restoring it; the rename over the real name never happened).

Start-up recovery calls :func:`clean_leftovers` for every plan the dead daemon left
running or rolling back: the restore copies can only be beside a path the plan's
manifests name, so only those directories are looked at (never a search of the disk).
Nothing is followed through a symlink (:mod:`annad.backups.safefs`); only regular files and
symlinks with exactly such a name are removed.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import stat
from typing import TYPE_CHECKING

from annad.backups import manifest as manifests
from annad.backups import safefs

if TYPE_CHECKING:
    from pathlib import Path

RESTORE_MARK = ".anna-restore-"
"""What a restore's temporary copy has between the file's name and the daemon's pid."""
INCOMING = ".incoming-"
"""Prefix of a blob being written."""


def restore_tmp_name(name: str) -> str:
    """The temporary name a restore writes ``name``'s new content under."""
    return f".{name[:100]}{RESTORE_MARK}{os.getpid()}"


def is_restore_tmp(candidate: str, names: set[str]) -> bool:
    """Whether ``candidate`` is a restore copy of one of ``names`` (any daemon pid)."""
    if not candidate.startswith(".") or RESTORE_MARK not in candidate:
        return False
    stem, _, pid = candidate[1:].rpartition(RESTORE_MARK)
    return pid.isdigit() and any(stem == name[:100] for name in names)


def remove_empty(directory: Path, stop: Path) -> None:
    """Remove ``directory`` and then its parents while they are empty, up to ``stop``."""
    current = directory
    while current != stop and stop in current.parents:
        try:
            current.rmdir()
        except OSError:
            return
        current = current.parent


def clean_leftovers(plan_dir: Path) -> list[str]:
    """Remove a dead daemon's temporary files for one plan; return what was removed."""
    removed: list[str] = []
    for pattern in (f"blobs/{INCOMING}*", "*/.manifest.json.tmp", "*/.after.json.tmp"):
        for path in plan_dir.glob(pattern):
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(str(path))
    by_dir: dict[str, set[str]] = {}
    for manifest_file in sorted(plan_dir.glob(f"*/{manifests.MANIFEST}")):
        try:
            record = manifests.load(manifest_file.parent)
        except (OSError, ValueError):
            continue
        for target in record.targets if record is not None else []:
            for entry in target.entries:
                directory = posixpath.dirname(entry.path)
                by_dir.setdefault(directory, set()).add(posixpath.basename(entry.path))
    for directory, names in sorted(by_dir.items()):
        removed.extend(_clean_dir(directory, names))
    return removed


def _clean_dir(directory: str, names: set[str]) -> list[str]:
    if directory == "/" or not directory.startswith("/"):
        return []
    removed = []
    try:
        with safefs.parent_dir(directory) as pfd:
            dfd = safefs.open_dir_at(pfd, safefs.basename(directory))
    except (OSError, ValueError):
        return []  # gone, or no longer a plain directory: nothing of ours to find there
    try:
        for candidate in os.listdir(dfd):  # noqa: PTH208 - a descriptor, not a path
            if not is_restore_tmp(candidate, names):
                continue
            info = os.lstat(candidate, dir_fd=dfd)
            if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                os.unlink(candidate, dir_fd=dfd)
                removed.append(manifests.printable(posixpath.join(directory, candidate)))
    except OSError:
        pass
    finally:
        os.close(dfd)
    return removed
