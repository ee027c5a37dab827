"""The listening socket (never world-accessible), the single-instance lock, and sd_notify.

uvicorn would create a Unix socket itself and chmod it 0666. Instead the daemon
binds it here, under a ``umask`` that makes it 0600 from the first moment, in a
directory that only root (and group ``anna``) or the owner can enter, then sets
its group and the final mode (0660 system, 0600 user) before it listens, and
hands the ready socket to uvicorn.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import socket
import stat
from pathlib import Path

from anna_common.errors import AnnaError, ErrorCode

log = logging.getLogger(__name__)

MAX_SUN_PATH = 107
"""Longest Unix socket path the kernel accepts (bytes, without the NUL)."""


def _fail(message: str, hint: str | None = None) -> AnnaError:
    return AnnaError(message, code=ErrorCode.CONFIG_INVALID, hint=hint)


def prepare_dir(directory: Path, *, mode: int, gid: int | None) -> None:
    """Create the socket's directory with ``mode``; refuse one anybody may write to."""
    if not directory.exists():
        directory.mkdir(parents=True, mode=mode)
        directory.chmod(mode)  # mkdir's mode is filtered by the umask
        if gid is not None:
            os.chown(directory, -1, gid)
        return
    info = directory.stat()
    if info.st_mode & stat.S_IWOTH and not info.st_mode & stat.S_ISVTX:
        # anyone could replace our socket with theirs
        raise _fail(f"{directory} is writable by everyone; refusing to put the socket there")


def acquire_lock(socket_path: Path) -> int:
    """Hold ``<socket>.lock`` for the daemon's lifetime: one daemon per socket."""
    lock = socket_path.with_name(socket_path.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise AnnaError(f"another annad is already serving {socket_path}",
                        code=ErrorCode.CONFIG_INVALID) from None
    return fd


def bind(path: Path, *, mode: int, gid: int | None) -> socket.socket:
    """A listening Unix socket at ``path`` with ``mode`` (and group ``gid``)."""
    if len(os.fsencode(path)) > MAX_SUN_PATH:
        raise _fail(f"socket path too long for a Unix socket ({path})",
                    hint="use a shorter --socket path")
    if path.is_symlink() or path.exists():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise _fail(f"{path} exists and is not a socket; refusing to replace it")
        path.unlink()  # stale: we hold the lock, so no live daemon owns it
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # created 0600: never a moment when others could connect
    try:
        sock.bind(os.fsencode(path))
    finally:
        os.umask(old)
    if gid is not None:
        os.chown(path, -1, gid, follow_symlinks=False)
    path.chmod(mode)
    sock.listen(128)
    sock.setblocking(False)
    return sock


def remove_socket(path: Path, sock_ino: int) -> None:
    """Unlink our socket file at exit (only if it is still ours)."""
    with contextlib.suppress(OSError):
        if path.lstat().st_ino == sock_ino:
            path.unlink()


def sd_notify(state: str) -> bool:
    """Tell systemd about our state (``READY=1``, ``STOPPING=1``) via ``$NOTIFY_SOCKET``."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]  # abstract namespace
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as out:
            out.connect(address)
            out.sendall(state.encode("utf-8"))
    except OSError as exc:
        log.warning("sd_notify failed: %s", exc)
        return False
    return True
