"""File operations that never follow a symbolic link the daemon did not expect.

The system daemon snapshots and restores files as root, often inside a user's
home. A path there is under the user's control: between the snapshot and the
restore they could turn ``~/d`` into a symlink to ``/etc`` and have root write
"their" backup into ``/etc/passwd``. So every path is walked one component at a
time from ``/`` with ``O_NOFOLLOW`` directory descriptors, and every change is
made relative to the parent's descriptor (``*at`` calls): a symlink anywhere in
the path makes the operation fail instead of being followed. Snapshots record
the symlink-free path (the parent through ``realpath``) so legitimate symlinked
dotfiles are still backed up where their content really lives.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

CHUNK = 1024 * 1024
"""Bytes read or written at a time when a file is streamed (memory stays bounded)."""

_DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(OSError):
    """A path component is a symlink or not a directory: the operation is refused."""


def components(path: str) -> list[str]:
    """The names in an absolute, normalised path (``/a/b`` → ``["a", "b"]``)."""
    if not path.startswith("/"):
        raise ValueError(f"not an absolute path: {path!r}")
    return [c for c in path.split("/") if c]


def _open_child_dir(parent: int, name: str) -> int:
    try:
        info = os.lstat(name, dir_fd=parent)
    except FileNotFoundError:
        raise
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(errno.ELOOP, f"{name} is a symbolic link")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafePath(errno.ENOTDIR, f"{name} is not a directory")
    # O_NOFOLLOW|O_DIRECTORY also refuses a symlink swapped in after the lstat above
    return os.open(name, _DIR_FLAGS, dir_fd=parent)


@contextmanager
def parent_dir(path: str, *, create: tuple[int, int, int] | None = None) -> Iterator[int]:
    """A descriptor of ``path``'s parent, reached without following any symlink.

    ``create=(mode, uid, gid)`` creates missing directories with that mode and owner;
    otherwise a missing directory raises FileNotFoundError.
    """
    names = components(path)[:-1]
    fd = os.open("/", _DIR_FLAGS)
    try:
        for name in names:
            try:
                child = _open_child_dir(fd, name)
            except FileNotFoundError:
                if create is None:
                    raise
                mode, uid, gid = create
                os.mkdir(name, mode, dir_fd=fd)
                os.chown(name, uid, gid, dir_fd=fd, follow_symlinks=False)
                child = _open_child_dir(fd, name)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def basename(path: str) -> str:
    """The last component of an absolute path."""
    names = components(path)
    if not names:
        raise ValueError("the root directory has no name")
    return names[-1]


def lstat_at(parent: int, name: str) -> os.stat_result | None:
    """``lstat`` relative to a directory descriptor; None when absent."""
    try:
        return os.lstat(name, dir_fd=parent)
    except FileNotFoundError:
        return None


def remove_at(parent: int, name: str) -> bool:
    """Remove a file, symlink or whole directory tree without following links.

    Returns False when nothing was there. ``shutil.rmtree`` with ``dir_fd`` uses
    the descriptor-based implementation that is safe against symlink attacks.
    """
    info = lstat_at(parent, name)
    if info is None:
        return False
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(name, dir_fd=parent)
    else:
        os.unlink(name, dir_fd=parent)
    return True


def open_dir_at(parent: int, name: str) -> int:
    """A readable descriptor of the directory ``name`` (never through a symlink)."""
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                   dir_fd=parent)


def open_file_at(parent: int, name: str) -> int:
    """A read descriptor of the regular file ``name`` (never a symlink, FIFO or device)."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                 dir_fd=parent)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePath(errno.EINVAL, f"{name} is not a regular file")
    return fd


def fsync_dir(fd: int) -> None:
    """Flush a directory entry change; O_PATH descriptors cannot fsync, so reopen."""
    try:
        real = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
    except OSError:
        return
    try:
        os.fsync(real)
    except OSError:
        pass
    finally:
        os.close(real)


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until everything is written (a write may be short)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # no progress and no error: treat as a full disk
            raise OSError(errno.ENOSPC, "short write made no progress")
        view = view[written:]


def hash_copy(src: int, out: int | None = None) -> tuple[str, int]:
    """Read ``src`` to its end in bounded chunks: (sha256, size), copying into ``out`` if given."""
    digest = hashlib.sha256()
    size = 0
    while chunk := os.read(src, CHUNK):
        digest.update(chunk)
        size += len(chunk)
        if out is not None:
            write_all(out, chunk)
    return digest.hexdigest(), size
