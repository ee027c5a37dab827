"""Landing an observed change set: exact backups first, then per-file atomic, resumable.

Order, for one captured step whose change set was judged acceptable:

1. the originals of exactly the observed paths are saved (:func:`backup_targets`, the
   blob store of :mod:`annad.backups.backup`) and the step's manifest written;
2. the **commit record** (``commit.json``, every change in order) is written, then the
   journal's record of the backups (unflushed), and one ``syncfs`` of the state disk makes
   the backups, the upper layers, the record and the journal's record durable together
   (:func:`prepare`: a barrier per file system, not an fsync per file);
3. each change lands on its own: a file goes to a temporary name in its real directory
   (renamed out of the upper layer when both are on one file system, else copied, with
   mode, owner, xattrs and mtime set, and fsynced) and is renamed over the real name; a
   deletion removes; a directory is made or has its metadata set. Real directories are
   walked without following a symlink (:mod:`annad.backups.safefs`): a directory swapped
   for a link since the run is refused, never followed;
4. the target file systems other than the state disk are flushed, then the record removed
   (the caller throws the upper layers away: :func:`annad.capture.step.discard`).

Every action is idempotent, so a daemon killed at any moment finishes the commit at its next
start (:func:`recover`, from the record): each real path is either as before (its original
is in the backups) or as the step left it, never torn, and the plan is then ``interrupted``
with its rollback offered.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import posixpath
import stat
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from annad.backups import manifest as manifests
from annad.backups import safefs
from annad.backups.backup import snapshot
from annad.backups.flush import flush_filesystems
from annad.capture.layers import Change, markers

if TYPE_CHECKING:
    from collections.abc import Callable

    from annad.backups.backup import BlobStore, Budget
    from annad.backups.manifest import TargetSnapshot

RECORD = "commit.json"
"""In a step's backup dir: the change set being committed (present only while it lands)."""
COMMIT_MARK = ".anna-commit"
"""Suffix of the temporary name a change lands under before its rename."""


def _covers_below(change: Change) -> bool:
    return change.kind == "delete" or (change.kind == "dir" and change.opaque)


def top_changes(changes: list[Change]) -> list[Change]:
    """The changes whose originals must be saved: one per path not inside another change
    that replaces a whole tree (a deletion, a directory replaced whole, a new directory)."""
    out: list[Change] = []
    whole: list[str] = []
    for change in changes:
        if any(change.path.startswith(w.rstrip("/") + "/") for w in whole):
            continue
        out.append(change)
        if _covers_below(change) or (change.kind == "dir" and not os.path.lexists(change.path)):
            whole.append(change.path)
    return out


def backup_targets(changes: list[Change], blobs: BlobStore, budget: Budget
                   ) -> list[TargetSnapshot]:
    """Save what is at each observed path now (raises BackupRefused)."""
    targets: list[TargetSnapshot] = []
    for change in top_changes(changes):
        real = _lstat(change.path)
        tree = real is not None and stat.S_ISDIR(real.st_mode) and (
            _covers_below(change) or change.kind != "dir")
        targets.extend(snapshot(change.path, blobs, budget, tree=tree, follow=False))
    blobs.flush()
    return targets


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _encode(change: Change) -> dict[str, object]:
    raw = asdict(change)
    raw["xattrs"] = {k: base64.b64encode(v).decode() for k, v in change.xattrs.items()}
    raw["path"] = manifests.escape_path(change.path)
    raw["source"] = manifests.escape_path(change.source)
    return raw


def _decode(raw: dict[str, object]) -> Change:
    xattrs = {str(k): base64.b64decode(str(v)) for k, v in dict(raw["xattrs"]).items()}  # type: ignore[call-overload]
    fields = {**raw, "xattrs": xattrs, "path": manifests.unescape_path(str(raw["path"])),
              "source": manifests.unescape_path(str(raw["source"]))}
    return Change(**fields)  # type: ignore[arg-type]


def prepare(directory: Path, changes: list[Change], *, blobs: Path,
            recorded: Callable[[], None] | None = None, also: tuple[Path, ...] = ()) -> None:
    """Write the commit record of ``changes``, call ``recorded`` (the journal's record of the
    backups, written unflushed), then flush: the step's backups (``blobs`` and its manifest
    in ``directory``, written unflushed), its upper layers, the record and whatever is in
    ``also`` (the journal's file) are durable together before anything lands — one
    ``syncfs`` per file system, not an fsync each (OSError: not; nothing landed)."""
    manifests.write_atomic(directory / RECORD,
                           json.dumps([_encode(c) for c in changes]).encode(), flush=False)
    if recorded is not None:
        recorded()
    flush_filesystems([str(directory), str(blobs), *map(str, also)])


def apply(directory: Path, changes: list[Change]) -> None:
    """Land ``changes`` (after :func:`prepare`); see the module text."""
    _land(directory, changes)


def recover(directory: Path) -> bool:
    """Finish a commit a dead daemon left half done; True if there was one (the caller
    then discards the layers)."""
    try:
        raw = json.loads((directory / RECORD).read_text())
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        raw = None
    if raw is None:  # torn before its flush: nothing landed yet (written first, flushed)
        (directory / RECORD).unlink(missing_ok=True)
        return True
    _land(directory, [_decode(c) for c in raw])
    return True


def abandon(directory: Path) -> None:
    """A commit that could not finish (a full target disk): its record goes, so no restart
    rolls it forward; the step's undo puts back what landed of it."""
    (directory / RECORD).unlink(missing_ok=True)


def _land(directory: Path, changes: list[Change]) -> None:
    tops: set[str] = set()
    keep: dict[str, set[str]] = {}
    for change in changes:
        keep.setdefault(posixpath.dirname(change.path), set()).add(
            posixpath.basename(change.path))
    for change in changes:
        _apply(change, keep.get(change.path, set()))
        tops.add(posixpath.dirname(change.path) or "/")
    # what landed is on disk before the record that would land it again goes: on another
    # file system by a flush; on the state disk itself its journal already orders the
    # renames before the record's removal (ext4, XFS, btrfs), so no second barrier there
    with contextlib.suppress(OSError):
        flush_filesystems([top for top in sorted(tops) if os.path.isdir(top)],  # noqa: PTH112
                          besides=str(directory))
    (directory / RECORD).unlink(missing_ok=True)


def _tmp(name: str) -> str:
    return f".{name[:100]}{COMMIT_MARK}"


def _apply(change: Change, keep: set[str]) -> None:
    with safefs.parent_dir(change.path) as pfd:
        name = safefs.basename(change.path)
        if change.kind == "delete":
            safefs.remove_at(pfd, name)
            return
        if change.kind == "dir":
            _apply_dir(pfd, name, change, keep)
            return
        if change.kind in ("socket", "device"):
            return  # never committed (the judge refuses devices; a socket means nothing)
        tmp = _tmp(name)
        if not _stage(pfd, tmp, change):
            return  # landed before (a resumed commit)
        here = safefs.lstat_at(pfd, name)
        if here is not None and stat.S_ISDIR(here.st_mode):
            safefs.remove_at(pfd, name)
        os.rename(tmp, name, src_dir_fd=pfd, dst_dir_fd=pfd)


def _stage(pfd: int, tmp: str, change: Change) -> bool:
    """The change under its temporary name, complete; False when it landed already."""
    source = _lstat(change.source)
    staged = safefs.lstat_at(pfd, tmp)
    if source is None:
        # moved out of the upper layer earlier: staged (finish it) or landed (nothing to do)
        return staged is not None and (staged.st_uid, staged.st_gid, stat.S_IMODE(
            staged.st_mode)) == (change.uid, change.gid, change.mode) and (
            change.kind != "file" or staged.st_size == change.size)
    if staged is not None:
        safefs.remove_at(pfd, tmp)
    if change.kind == "symlink":
        os.symlink(change.link or "", tmp, dir_fd=pfd)
        os.chown(tmp, change.uid, change.gid, dir_fd=pfd, follow_symlinks=False)
        return True
    if change.kind == "fifo":
        os.mkfifo(tmp, 0o600, dir_fd=pfd)
        _metadata(pfd, tmp, change)
        return True
    try:
        os.rename(change.source, tmp, dst_dir_fd=pfd)
        _strip_overlay_xattrs(pfd, tmp)
        return True
    except OSError as exc:
        if exc.errno != 18:  # EXDEV: another file system, copied below
            raise
    _copy(pfd, tmp, change)
    Path(change.source).unlink()
    return True


def _strip_overlay_xattrs(pfd: int, name: str) -> None:
    path = f"/proc/self/fd/{pfd}/{name}"
    with contextlib.suppress(OSError):
        for attr in os.listxattr(path, follow_symlinks=False):
            if attr.startswith(markers()):
                os.removexattr(path, attr, follow_symlinks=False)


def _copy(pfd: int, tmp: str, change: Change) -> None:
    src = os.open(change.source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      0o600, dir_fd=pfd)
        try:
            _fill(out, src, change)
        except BaseException:
            os.close(out)
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=pfd)  # a full disk leaves no half copy behind
            raise
        os.close(out)
    finally:
        os.close(src)


def _fill(out: int, src: int, change: Change) -> None:
    """The copy's content and metadata, flushed (the rename comes after)."""
    safefs.hash_copy(src, out)
    os.fchown(out, change.uid, change.gid)
    os.fchmod(out, change.mode)
    for key, value in change.xattrs.items():
        with contextlib.suppress(OSError):
            os.setxattr(out, key, value)
    os.utime(out, ns=(change.mtime_ns, change.mtime_ns))
    os.fsync(out)


def _metadata(pfd: int, name: str, change: Change) -> None:
    os.chown(name, change.uid, change.gid, dir_fd=pfd, follow_symlinks=False)
    os.chmod(name, change.mode, dir_fd=pfd)  # after chown, which clears setuid bits
    path = f"/proc/self/fd/{pfd}/{name}"
    for key, value in change.xattrs.items():
        with contextlib.suppress(OSError):
            os.setxattr(path, key, value)


def _apply_dir(pfd: int, name: str, change: Change, keep: set[str]) -> None:
    here = safefs.lstat_at(pfd, name)
    if here is not None and (not stat.S_ISDIR(here.st_mode) or change.opaque):
        if change.opaque and stat.S_ISDIR(here.st_mode):
            _empty(pfd, name, keep)
        else:
            safefs.remove_at(pfd, name)
            here = None
    if here is None:
        os.mkdir(name, 0o700, dir_fd=pfd)
    _metadata(pfd, name, change)


def _empty(pfd: int, name: str, keep: set[str]) -> None:
    """A directory replaced whole keeps its inode; what it held goes, but for the names the
    change set puts there (changes of their own, landed after it, or before a resume)."""
    dfd = safefs.open_dir_at(pfd, name)
    try:
        for child in os.listdir(dfd):  # noqa: PTH208 - descriptor
            if child not in keep:
                safefs.remove_at(dfd, child)
    finally:
        os.close(dfd)
