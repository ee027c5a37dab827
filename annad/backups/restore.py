"""Putting a snapshot back: byte-exact content, mode, owner and mtime; absent means deleted.

Restores never follow a symlink (:mod:`annad.backups.safefs`): they act relative to the
descriptor of a parent directory reached component by component. Content is
checked against its sha256, written under a temporary name, given its owner and
mode, flushed, and renamed over the path, so the file is either the old one or
the restored one, never a mix. For a saved directory tree, whatever is new in it
is removed first.

When the file system has no room for the temporary copy, :class:`NoRoom` is raised
and nothing was changed; the caller restores the step's other targets first (they
may free space) and then retries with ``in_place``: the existing file is truncated
and written from the blob (checked against its hash first), which needs only the
room its old content frees. If even that cannot fit, the file is left as it is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import stat
from typing import TYPE_CHECKING

from annad.backups import inplace, safefs, xattrs
from annad.backups.flush import syncfs
from annad.backups.leftovers import remove_whole, restore_tmp_name
from annad.backups.manifest import printable

if TYPE_CHECKING:
    from annad.backups.backup import BlobStore
    from annad.backups.manifest import Entry, TargetSnapshot
    from annad.backups.trash import Trash


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def outside_message(path: str) -> str:
    """Why a user-scope step's snapshot outside the caller's places is not restored."""
    return (f"{printable(path)} is outside the caller's home and temporary directories; a "
            "user-scope step cannot have changed it, so Anna does not restore it as root")


BATCH = 16
"""Entries from which a tree is restored in one batch (:func:`_restore_batch`): below it,
one file at a time, each flushed (a barrier of a whole file system costs more than a few)."""


class NoRoom(OSError):
    """No room for a file's temporary copy: nothing was changed (retry in place)."""


def restore_target(target: TargetSnapshot, blobs: BlobStore,
                   allowed: tuple[str, ...] | None = None, *, in_place: bool = False,
                   lost: list[str] | None = None, trash: Trash | None = None) -> str:
    """Restore one saved target; return ``restore`` or ``delete``. Raises OSError on failure.

    ``allowed``: when set, only paths below these roots are touched (a user-scope
    step's snapshot is restored by root only inside that user's home and temp dirs).
    ``in_place``: write saved files over the existing ones instead of through a copy.
    ``lost``: gets ``path: attribute`` for each saved extended attribute that could not be
    put back (:mod:`annad.backups.xattrs`; the rest of the restore still happens).
    ``trash``: where a tree that was not there before goes (:func:`remove_whole`).
    """
    lost = lost if lost is not None else []
    if not target.entries:
        raise OSError(f"nothing was saved for {printable(target.path)}")
    if allowed is not None and not _inside(target.path, allowed):
        raise safefs.UnsafePath(1, outside_message(target.path))
    top = target.entries[0]
    if top.kind == "absent":
        _delete(top.path, trash)
        return "delete"
    if target.tree and top.kind == "dir":
        _prune(top.path, {e.path for e in target.entries}, trash)
    if not in_place and len(target.entries) >= BATCH:
        _restore_batch(target.entries, blobs, lost)
    else:
        for entry in target.entries:
            _restore_entry(entry, blobs, in_place, lost)
    for entry in reversed(target.entries):
        if entry.kind == "dir":
            _dir_metadata(entry, lost)
    return "restore"


def _delete(path: str, trash: Trash | None) -> None:
    try:
        with safefs.parent_dir(path) as pfd:
            remove_whole(pfd, safefs.basename(path), trash)
    except FileNotFoundError:
        return  # its parent is gone too: nothing left to delete


def _prune(path: str, keep: set[str], trash: Trash | None) -> None:
    """Remove everything below the directory ``path`` that the snapshot did not have."""
    try:
        with safefs.parent_dir(path) as pfd:
            info = safefs.lstat_at(pfd, safefs.basename(path))
            if info is None or not stat.S_ISDIR(info.st_mode):
                return
            dfd = safefs.open_dir_at(pfd, safefs.basename(path))
    except FileNotFoundError:
        return
    try:
        _prune_at(dfd, path, keep, trash)
    finally:
        os.close(dfd)


def _prune_at(dfd: int, path: str, keep: set[str], trash: Trash | None) -> None:
    for name in os.listdir(dfd):
        child = posixpath.join(path, name)
        if child not in keep:
            remove_whole(dfd, name, trash)
            continue
        info = os.lstat(name, dir_fd=dfd)
        if stat.S_ISDIR(info.st_mode):
            cfd = safefs.open_dir_at(dfd, name)
            try:
                _prune_at(cfd, child, keep, trash)
            finally:
                os.close(cfd)


def _restore_batch(entries: list[Entry], blobs: BlobStore, lost: list[str]) -> None:
    """Restore a tree's entries together: directories made, every file and link written
    complete under its temporary name, one flush of their file system (``syncfs``), then
    each renamed over its name, and one flush of the renames. The order that makes a file
    either the old one or the restored one holds for all of them at once (content on disk
    before any rename), at two barriers instead of two per file. A failure before the renames
    removes the temporary copies (NoRoom: nothing was replaced)."""
    parents = _Parents()
    staged: list[tuple[int, str, str]] = []
    try:
        try:
            for entry in entries:
                pfd = parents.of(entry)
                name = safefs.basename(entry.path)
                if entry.kind == "file":
                    staged.append((pfd, name, _stage_file(pfd, name, entry, blobs, lost)))
                elif entry.kind == "symlink":
                    staged.append((pfd, name, _stage_link(pfd, name, entry)))
                else:
                    _restore_other(pfd, name, entry)
            parents.flush()
        except BaseException:
            for pfd, _, tmp in staged:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=pfd)
            raise
        for pfd, name, tmp in staged:
            _replace_at(pfd, name, tmp, flush=False)
        parents.flush()
    finally:
        parents.close()


class _Parents:
    """The parent directories of a tree's entries, each reached once without following a
    symlink (:func:`annad.backups.safefs.parent_dir`) and kept open for the batch."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    def of(self, entry: Entry) -> int:
        """The parent of ``entry`` (missing ones made with its owner, as one at a time)."""
        directory = posixpath.dirname(entry.path)
        if directory not in self._fds:
            with safefs.parent_dir(entry.path, create=(0o700, entry.uid, entry.gid)) as pfd:
                self._fds[directory] = os.dup(pfd)
        return self._fds[directory]

    def flush(self) -> None:
        """One ``syncfs`` per file system the parents are on."""
        devices: set[int] = set()
        for fd in self._fds.values():
            device = os.fstat(fd).st_dev
            if device not in devices:
                devices.add(device)
                real = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
                try:
                    syncfs(real, "a restored tree")
                finally:
                    os.close(real)

    def close(self) -> None:
        """Close every descriptor."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


def _tmp_name(name: str) -> str:
    return restore_tmp_name(name)  # recognisable: start-up recovery removes a dead one's


def _replace_at(pfd: int, name: str, tmp: str, *, flush: bool = True) -> None:
    """Rename ``tmp`` over ``name``; a directory in the way is removed first. ``flush``: the
    directory at once (else the caller flushes the file system)."""
    current = safefs.lstat_at(pfd, name)
    if current is not None and stat.S_ISDIR(current.st_mode):
        safefs.remove_at(pfd, name)
    os.rename(tmp, name, src_dir_fd=pfd, dst_dir_fd=pfd)
    if flush:
        safefs.fsync_dir(pfd)


def _restore_entry(entry: Entry, blobs: BlobStore, in_place: bool, lost: list[str]) -> None:
    create = (0o700, entry.uid, entry.gid)
    with safefs.parent_dir(entry.path, create=create) as pfd:
        name = safefs.basename(entry.path)
        current = safefs.lstat_at(pfd, name)
        if entry.kind == "file" and in_place and current is not None and \
                stat.S_ISREG(current.st_mode):
            _write_in_place(pfd, name, entry, blobs, lost)
        elif entry.kind == "file":
            _replace_at(pfd, name, _stage_file(pfd, name, entry, blobs, lost, flush=True))
        elif entry.kind == "symlink":
            _replace_at(pfd, name, _stage_link(pfd, name, entry))
        else:
            _restore_other(pfd, name, entry)


def _stage_link(pfd: int, name: str, entry: Entry) -> str:
    """The saved symlink under its temporary name (returned), owner and times set."""
    tmp = _tmp_name(name)
    safefs.remove_at(pfd, tmp)
    os.symlink(entry.link or "", tmp, dir_fd=pfd)
    os.chown(tmp, entry.uid, entry.gid, dir_fd=pfd, follow_symlinks=False)
    if entry.mtime_ns is not None:
        os.utime(tmp, ns=(entry.mtime_ns, entry.mtime_ns), dir_fd=pfd, follow_symlinks=False)
    return tmp


def _restore_other(pfd: int, name: str, entry: Entry) -> None:
    """A directory made where it is missing (its metadata comes last), or a special file
    checked to still be there (Anna cannot recreate one)."""
    if entry.kind == "dir":
        current = safefs.lstat_at(pfd, name)
        if current is not None and not stat.S_ISDIR(current.st_mode):
            safefs.remove_at(pfd, name)
            current = None
        if current is None:
            os.mkdir(name, 0o700, dir_fd=pfd)
    elif entry.kind == "special" and safefs.lstat_at(pfd, name) is None:
        raise OSError(f"{printable(entry.path)} was a device, socket or FIFO; Anna cannot "
                      "recreate it")


def _free(fd: int) -> int:
    info = os.fstatvfs(fd)
    # root may use the blocks reserved for it; others only what is available to them
    blocks = info.f_bfree if os.geteuid() == 0 else info.f_bavail
    return blocks * info.f_frsize


_FULL = (errno.ENOSPC, errno.EDQUOT)


def _stage_file(pfd: int, name: str, entry: Entry, blobs: BlobStore, lost: list[str], *,
                flush: bool = False) -> str:
    """The saved file, checked against its hash, complete under its temporary name
    (returned) with owner, mode, attributes and times; ``flush``: fsynced (else the caller
    flushes the file system before the rename)."""
    if _free(pfd) < entry.size:
        raise NoRoom(errno.ENOSPC, f"no room for a temporary copy of {printable(entry.path)} "
                     f"({entry.size} bytes)")
    tmp = _tmp_name(name)
    safefs.remove_at(pfd, tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                 dir_fd=pfd)
    try:
        # streamed in bounded chunks and checked against its hash before it replaces anything
        blobs.copy_out(entry.sha256 or "", fd)
        _finish(fd, entry, lost, flush=flush)
    except BaseException as exc:
        os.close(fd)
        os.unlink(tmp, dir_fd=pfd)
        if isinstance(exc, OSError) and exc.errno in _FULL:
            raise NoRoom(exc.errno, f"no room for a temporary copy of "
                         f"{printable(entry.path)} ({entry.size} bytes)") from None
        raise
    os.close(fd)
    return tmp


def _finish(fd: int, entry: Entry, lost: list[str], *, flush: bool = True) -> None:
    # owner before mode: chown clears setuid/setgid bits; attributes after both: chown
    # clears a file capability too
    os.fchown(fd, entry.uid, entry.gid)
    os.fchmod(fd, entry.mode)
    lost.extend(f"{printable(entry.path)}: {n}" for n in xattrs.put(fd, entry.xattrs))
    if entry.mtime_ns is not None:
        os.utime(fd, ns=(entry.mtime_ns, entry.mtime_ns))
    if flush:
        os.fsync(fd)


def _write_in_place(pfd: int, name: str, entry: Entry, blobs: BlobStore, lost: list[str]
                    ) -> None:
    """Truncate the existing regular file and write the saved content into it.

    Only after the blob is known good and the room its old content frees is enough:
    otherwise the file is left as it is (never half restored on purpose).
    """
    fd = os.open(name, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=pfd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"{printable(entry.path)} is not a regular file")
        blobs.verify(entry.sha256 or "")
        room = _free(fd) + info.st_blocks * 512
        if room < entry.size:
            raise NoRoom(errno.ENOSPC, f"not restored: it needs {entry.size} bytes and its file "
                         f"system has {room} (its current content included); it was left as "
                         "it is")
        try:  # a kill from here on leaves a marker: the next rollback finishes the file
            inplace.begin(blobs.dir, entry.path)
        except OSError as exc:
            raise NoRoom(errno.ENOSPC, "not restored in place: Anna cannot record the restore "
                         f"on its state disk ({printable(str(exc))}); it was left as it is"
                         ) from None
        os.ftruncate(fd, 0)
        blobs.copy_out(entry.sha256 or "", fd)
        _finish(fd, entry, lost)
        inplace.end(blobs.dir, entry.path)
    finally:
        os.close(fd)


def _dir_metadata(entry: Entry, lost: list[str]) -> None:
    """Owner, mode and mtime of a directory, set last (writing inside changes its mtime)."""
    with safefs.parent_dir(entry.path) as pfd:
        dfd = safefs.open_dir_at(pfd, safefs.basename(entry.path))
        try:
            os.fchown(dfd, entry.uid, entry.gid)
            os.fchmod(dfd, entry.mode)
            lost.extend(f"{printable(entry.path)}: {n}" for n in xattrs.put(dfd, entry.xattrs))
            if entry.mtime_ns is not None:
                os.utime(dfd, ns=(entry.mtime_ns, entry.mtime_ns))
        finally:
            os.close(dfd)
