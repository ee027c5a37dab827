"""File snapshots before a step, and byte-exact restores after it.

A snapshot of a path saves what is there (content, mode, owner, mtime; a
directory's whole tree when the step may change anything below it) or records
that nothing is there. Contents go into a per-plan blob store named by sha256;
a restore checks the hash before writing, writes to a temporary name and
renames over the path, then sets owner and mode, so a reader never sees half a
file. A path that was absent is deleted again. Every path is walked without
following symlinks (:mod:`annad.backups.safefs`).

A snapshot that would exceed the size or file limit raises
:class:`BackupRefused`: the step is refused rather than run without a backup.
"""

from __future__ import annotations

import logging
import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path

from annad.backups import safefs, statefs, xattrs
from annad.backups.identity import kind_of
from annad.backups.leftovers import INCOMING
from annad.backups.manifest import Entry, Ident, TargetSnapshot, printable

NAME_MAX = 255
"""Longest file name the kernel accepts, in bytes."""
PATH_MAX = 4096
"""Longest path the kernel accepts, in bytes (terminating NUL included)."""


class BackupRefused(Exception):
    """The target cannot be backed up (too big, unknowable, unsafe): do not run the step."""


@dataclass
class Budget:
    """What a step's snapshot may still take."""

    bytes_left: int
    files_left: int

    def take(self, size: int, path: str) -> None:
        """Account for one more object; raise :class:`BackupRefused` when over the limit."""
        self.files_left -= 1
        self.bytes_left -= size
        if self.files_left < 0:
            raise BackupRefused(f"cannot back up {printable(path)}: too many files (raise "
                                "ANNAD_BACKUP_MAX_FILES to allow it)")
        if self.bytes_left < 0:
            raise BackupRefused(f"cannot back up {printable(path)}: more data than the backup "
                                "limit (ANNAD_BACKUP_MAX_BYTES)")


class BlobStore:
    """Content-addressed copies of files: ``<dir>/<sha256>``."""

    def __init__(self, directory: Path, *, flushed: bool = True) -> None:
        self.dir = directory
        self.dirty = False
        self.flushed = flushed
        """False: blobs are not flushed one by one; the caller flushes their file system
        once, with the rest of a step's record (:func:`annad.capture.commit.apply`)."""

    def put(self, src_fd: int) -> tuple[str, int]:
        """Copy an open file into the store in bounded chunks; return (sha256, size).

        A partial copy (a full disk, a read error) is removed before the error is raised.
        """
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        _check_room(self.dir, os.fstat(src_fd).st_size)
        tmp = self.dir / f"{INCOMING}{os.getpid()}-{id(self)}"  # recovery removes a dead one
        try:
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            try:
                name, size = safefs.hash_copy(src_fd, out)
                if self.flushed:
                    os.fdatasync(out)
            finally:
                os.close(out)
        except BaseException as exc:
            _discard(tmp)  # a partial blob must never stay behind to fill the disk
            if isinstance(exc, OSError) and statefs.is_full(exc):
                raise BackupRefused(f"cannot back up: the state disk is full ({exc.strerror}); "
                                    "the partial copy was removed") from None
            raise
        tmp.replace(self.dir / name)
        self.dirty = True
        return name, size

    def flush(self) -> None:
        """Make the new blobs' directory entries durable (once per step, not per blob)."""
        if not self.dirty or not self.flushed:
            return
        fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        self.dirty = False

    def open(self, sha256: str) -> int:
        """A read descriptor of a blob (its content is checked while it is copied out)."""
        if len(sha256) != 64 or not all(c in "0123456789abcdef" for c in sha256):
            raise OSError(f"backup blob name {sha256[:16]!r} is not a sha256")
        return os.open(self.dir / sha256, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)

    def verify(self, sha256: str) -> None:
        """Raise OSError unless the blob's content matches its name (read in chunks)."""
        self.copy_out(sha256, None)

    def copy_out(self, sha256: str, out: int | None) -> None:
        """Write a blob into the open file ``out`` (None: nowhere) in bounded chunks; raise
        OSError when its content does not match its name (the caller discards what was
        written)."""
        src = self.open(sha256)
        try:
            found, _ = safefs.hash_copy(src, out)
        finally:
            os.close(src)
        if found != sha256:
            raise OSError(f"backup blob {sha256[:12]} is corrupt")


def _check_room(directory: Path, size: int) -> None:
    """Refuse a blob the state disk cannot hold with the journal's floor left over."""
    problem = statefs.room_problem(directory, size)
    if problem is not None:
        raise BackupRefused(f"cannot back up: {problem}")


def _discard(path: Path) -> None:
    """Remove a temporary file, whatever state it is in."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:  # reported, never raised over the real error
        logging.getLogger(__name__).warning("cannot remove partial backup %s: %s", path, exc)


# --------------------------------------------------------------------------- snapshot


def _entry(path: str, info: os.stat_result, kind: str, **extra: object) -> Entry:
    return Entry(path=path, kind=kind, mode=stat.S_IMODE(info.st_mode),
                 uid=info.st_uid, gid=info.st_gid, mtime_ns=info.st_mtime_ns, **extra)


def _save_object(parent: int, name: str, path: str, info: os.stat_result, blobs: BlobStore,
                 budget: Budget, out: list[Entry], tree: bool) -> None:
    """Append the entry (and, for a tree, everything below) for an existing object."""
    mode = info.st_mode
    if stat.S_ISREG(mode):
        budget.take(info.st_size, path)
        fd = safefs.open_file_at(parent, name)
        try:
            sha, size = blobs.put(fd)
            saved = xattrs.read(fd)
        finally:
            os.close(fd)
        out.append(_entry(path, info, "file", size=size, sha256=sha, xattrs=saved))
    elif stat.S_ISLNK(mode):
        budget.take(0, path)
        out.append(_entry(path, info, "symlink", link=os.readlink(name, dir_fd=parent)))
    elif stat.S_ISDIR(mode):
        budget.take(0, path)
        dfd = safefs.open_dir_at(parent, name)
        try:
            out.append(_entry(path, info, "dir", xattrs=xattrs.read(dfd)))
        finally:
            os.close(dfd)
        if tree:
            dfd = safefs.open_dir_at(parent, name)
            try:
                for child in sorted(os.listdir(dfd)):  # noqa: PTH208 - a descriptor, not a path
                    child_info = os.lstat(child, dir_fd=dfd)
                    _save_object(dfd, child, posixpath.join(path, child), child_info, blobs,
                                 budget, out, tree=True)
            finally:
                os.close(dfd)
    else:
        budget.take(0, path)
        out.append(_entry(path, info, "special"))


def _absent_root(path: str) -> str:
    """The topmost missing component of ``path``, symlink-free: what creating it creates."""
    current = "/"
    for name in safefs.components(path):
        candidate = posixpath.join(os.path.realpath(current), name)
        if not os.path.lexists(candidate):
            return candidate
        if not Path(candidate).is_dir():
            raise BackupRefused(f"cannot back up {printable(path)}: {printable(candidate)} is "
                                "not a directory")
        current = candidate
    raise BackupRefused(f"cannot back up {printable(path)}: it appeared while it was being "
                        "saved")


def check_path(path: str) -> None:
    """Refuse a path the kernel would refuse (a name over NAME_MAX, a path over PATH_MAX)."""
    raw = os.fsencode(path)
    if len(raw) >= PATH_MAX:
        raise BackupRefused(f"cannot back up {printable(path)[:200]}...: the path is "
                            f"{len(raw)} bytes long, more than the system allows ({PATH_MAX - 1})")
    for name in raw.split(b"/"):
        if len(name) > NAME_MAX:
            shown = printable(os.fsdecode(name))[:80]
            raise BackupRefused(f"cannot back up {shown}...: the name is {len(name)} bytes "
                                f"long, more than the system allows ({NAME_MAX})")


def kernel_path(raw: str) -> str:
    """Where the kernel lands for the absolute path ``raw``, ``..`` included.

    The kernel resolves a path component by component: ``~/link/../x`` with
    ``link → /tmp/elsewhere`` is ``/tmp/x``, not ``~/x`` as lexical normalisation
    says. ``realpath`` walks the same way; the last component is kept as it is (a
    symlink there is saved as a link by :func:`snapshot`) unless it is ``.``/``..``.
    """
    check_path(raw)
    names = [n for n in raw.split("/") if n]
    if not names:
        return "/"
    if names[-1] in (".", ".."):
        return os.path.realpath(raw)
    return posixpath.join(os.path.realpath("/" + "/".join(names[:-1])), names[-1])


def snapshot_listing(requested: str, budget: Budget) -> TargetSnapshot:
    """Save a directory's listing (names and identity, not contents) before a step that only
    creates entries in it under names known at run time."""
    check_path(requested)
    path = os.path.realpath(requested)
    try:
        with safefs.parent_dir(path) as pfd:
            name = safefs.basename(path)
            info = safefs.lstat_at(pfd, name)
            if info is None or not stat.S_ISDIR(info.st_mode):
                raise BackupRefused(f"cannot back up {printable(requested)}: it is not an "
                                    "existing directory")
            dfd = safefs.open_dir_at(pfd, name)
            try:
                listing = [_listed(dfd, child, posixpath.join(path, child), budget)
                           for child in sorted(os.listdir(dfd))]  # noqa: PTH208 - descriptor
            finally:
                os.close(dfd)
    except (safefs.UnsafePath, FileNotFoundError, ValueError) as exc:
        raise BackupRefused(f"cannot back up {printable(requested)}: {printable(str(exc))}"
                            ) from None
    return TargetSnapshot(requested=requested, path=path, new_only=True, listing=listing,
                          entries=[_entry(path, info, "dir")])


def _listed(dfd: int, name: str, path: str, budget: Budget) -> Ident:
    budget.take(0, path)
    info = os.lstat(name, dir_fd=dfd)
    return Ident(path=path, kind=kind_of(info.st_mode), ino=info.st_ino,
                 ctime_ns=info.st_ctime_ns, mtime_ns=info.st_mtime_ns)


def snapshot(requested: str, blobs: BlobStore, budget: Budget, *, tree: bool,
             follow: bool = True) -> list[TargetSnapshot]:
    """Save ``requested`` (absolute, normalised); returns one or two target snapshots.

    The parent is resolved through ``realpath`` (symlinked dotfile directories are
    saved where they really are). A symlink at the path itself is saved as a link
    and, with ``follow``, the file it points to is saved as well, since writing
    through the link changes that file.
    """
    if requested == "/":
        raise BackupRefused("cannot back up the whole file system")
    check_path(requested)
    parent = posixpath.dirname(requested) or "/"
    real_parent = os.path.realpath(parent)
    if not Path(real_parent).is_dir():
        missing = _absent_root(requested)
        return [TargetSnapshot(requested=requested, path=missing,
                               entries=[Entry(path=missing, kind="absent")])]
    path = posixpath.join(real_parent, posixpath.basename(requested))
    try:
        with safefs.parent_dir(path) as pfd:
            name = safefs.basename(path)
            info = safefs.lstat_at(pfd, name)
            if info is None:
                return [TargetSnapshot(requested=requested, path=path,
                                       entries=[Entry(path=path, kind="absent")])]
            entries: list[Entry] = []
            _save_object(pfd, name, path, info, blobs, budget, entries, tree)
    except (safefs.UnsafePath, FileNotFoundError) as exc:
        raise BackupRefused(f"cannot back up {printable(requested)}: the path changed while "
                            f"it was saved ({printable(str(exc))})") from None
    except OSError as exc:
        raise BackupRefused(f"cannot back up {printable(requested)}: {exc.strerror}") from None
    result = [TargetSnapshot(requested=requested, path=path, tree=tree, entries=entries)]
    if follow and entries[0].kind == "symlink":
        target = os.path.realpath(path)
        if target != path and Path(target).is_file():
            result.extend(snapshot(target, blobs, budget, tree=False, follow=False))
    return result
