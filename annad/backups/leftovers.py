"""Temporary files a dead daemon leaves behind, and removing them at the next start.

Two kinds, both with recognisable names:

- a partial blob in the plan's store, ``backups/<plan>/blobs/.incoming-<pid>-<n>``
  (killed while saving a file), and a manifest being written, ``.manifest.json.tmp`` or
  ``.after.json.tmp``;
- a half-written restore copy beside the user's file, ``.<name>.anna-restore-<pid>``
  (killed while restoring it; the rename over the real name never happened), and a tree
  being removed, ``.<name>.anna-remove-<pid>`` (renamed away in one step, then removed:
  :func:`remove_whole`).

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

    from annad.backups.trash import Trash

RESTORE_MARK = ".anna-restore-"
"""What a restore's temporary copy has between the file's name and the daemon's pid."""
INCOMING = ".incoming-"
"""Prefix of a blob being written."""
REMOVE_MARK = ".anna-remove-"
"""What a tree being removed is renamed to have between its name and the daemon's pid."""


def restore_tmp_name(name: str) -> str:
    """The temporary name a restore writes ``name``'s new content under."""
    return f".{name[:100]}{RESTORE_MARK}{os.getpid()}"


def remove_whole(parent: int, name: str, trash: Trash | None = None) -> bool:
    """Remove ``name`` below the directory ``parent`` at once: a directory tree is renamed
    into ``trash`` when it is on the state disk's file system (one atomic step, flushed; the
    trash's thread removes it — thousands of unlinks, seconds on a busy disk, off the undo's
    path), else to ``.<name>.anna-remove-<pid>`` first (one atomic step, flushed), then
    removed. A kill during the removal leaves the path already gone and a hidden leftover
    that start-up recovery removes (:func:`clean_leftovers`; the trash empties itself at its
    next use), never a half-removed tree at the path. Returns False when nothing was there."""
    info = safefs.lstat_at(parent, name)
    if info is None:
        return False
    if not stat.S_ISDIR(info.st_mode):
        return safefs.remove_at(parent, name)
    if trash is not None and trash.take(parent, name):
        safefs.fsync_dir(parent)
        return True
    doomed = f".{name[:100]}{REMOVE_MARK}{os.getpid()}"
    safefs.remove_at(parent, doomed)  # one this daemon left in an earlier rollback
    os.rename(name, doomed, src_dir_fd=parent, dst_dir_fd=parent)
    safefs.fsync_dir(parent)
    safefs.remove_at(parent, doomed)
    return True


def _is_remove_tmp(candidate: str) -> bool:
    stem, mark, pid = candidate.rpartition(REMOVE_MARK)
    return candidate.startswith(".") and bool(mark) and len(stem) > 1 and pid.isdigit()


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
            if _is_remove_tmp(candidate):  # a tree a killed rollback was removing
                safefs.remove_at(dfd, candidate)
                removed.append(manifests.printable(posixpath.join(directory, candidate)))
                continue
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
