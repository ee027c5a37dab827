"""The listening socket (never world-accessible), the single-instance lock, and sd_notify.

uvicorn would create a Unix socket itself and chmod it 0666. Instead the daemon
binds it here and hands the ready socket to uvicorn. Nothing is done by path after
the directory is checked: the directory is opened once (``O_NOFOLLOW``) and checked
on that descriptor — owned by the daemon's uid, writable by nobody else (a sticky
world-writable directory such as /tmp is refused too: anyone could take the socket's
name first), every parent writable only by root or the daemon unless sticky — and
its mode and group are set with ``fchmod``/``fchown``. The directory is setgid, so the
socket inherits its group; the socket's mode is set on the socket with ``fchmod`` and
by the ``umask`` before ``bind``, which happens through the directory's descriptor
(``/proc/self/fd/N/NAME``). No ``chmod``/``chown`` by path, no window in which others
could connect.
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
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _fail(message: str, hint: str | None = None) -> AnnaError:
    return AnnaError(message, code=ErrorCode.CONFIG_INVALID, hint=hint)


def _check_parents(directory: Path) -> None:
    """Refuse a parent that someone other than root or the daemon could rename things in."""
    me = os.geteuid()
    for parent in directory.parents:
        info = parent.stat()
        writable_by_others = info.st_mode & (stat.S_IWOTH | stat.S_IWGRP)
        if info.st_uid not in (0, me) or (writable_by_others and
                                           not info.st_mode & stat.S_ISVTX):
            raise _fail(f"{parent} (above the socket directory) may be changed by other "
                        f"users; refusing to put the socket under it")


def prepare_dir(directory: Path, *, mode: int, gid: int | None) -> int:
    """Open (creating it if needed) the socket's directory and return its descriptor.

    Refused unless it is a real directory owned by the daemon's uid and writable by nobody
    else (sticky or not). Its mode becomes ``mode`` (plus setgid when ``gid`` is given, so
    the socket inherits that group), set on the descriptor.
    """
    directory.parent.mkdir(parents=True, exist_ok=True)
    _check_parents(directory)
    with contextlib.suppress(FileExistsError):
        directory.mkdir(mode=0o700)  # private until checked and given its final mode
    try:
        fd = os.open(directory, _DIR_FLAGS)
    except OSError as exc:
        raise _fail(f"cannot open the socket directory {directory}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid():
            raise _fail(f"{directory} is owned by uid {info.st_uid}, not by the daemon's uid "
                        f"{os.geteuid()}; refusing to put the socket there")
        if info.st_mode & (stat.S_IWOTH | stat.S_IWGRP):
            # anyone who may write here could replace our socket with theirs (sticky or not:
            # they could also take its name before we bind)
            raise _fail(f"{directory} is writable by other users; refusing to put the socket "
                        "there", hint="use a directory only the daemon's user can write")
        if gid is not None:
            os.fchown(fd, -1, gid)
        os.fchmod(fd, mode | (stat.S_ISGID if gid is not None else 0))
    except BaseException:
        os.close(fd)
        raise
    return fd


def acquire_lock(socket_path: Path, dir_fd: int) -> int:
    """Hold ``<socket>.lock`` for the daemon's lifetime: one daemon per socket."""
    name = socket_path.name + ".lock"
    fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600,
                 dir_fd=dir_fd)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise AnnaError(f"another annad is already serving {socket_path}",
                        code=ErrorCode.CONFIG_INVALID) from None
    return fd


def bind(path: Path, *, mode: int, dir_fd: int) -> socket.socket:
    """A listening Unix socket named ``path.name`` in the directory ``dir_fd``, with ``mode``."""
    if len(os.fsencode(path)) > MAX_SUN_PATH:
        raise _fail(f"socket path too long for a Unix socket ({path})",
                    hint="use a shorter --socket path")
    name = path.name
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISSOCK(os.lstat(name, dir_fd=dir_fd).st_mode):
            raise _fail(f"{path} exists and is not a socket; refusing to replace it")
        os.unlink(name, dir_fd=dir_fd)  # stale: we hold the lock, so no live daemon owns it
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    # the file bind creates takes the socket's mode minus the umask: both say ``mode``
    os.fchmod(sock.fileno(), mode)
    old = os.umask(0o777 & ~mode)
    try:
        sock.bind(f"/proc/self/fd/{dir_fd}/{name}")
    except OSError as exc:
        sock.close()
        raise _fail(f"cannot bind {path}: {exc.strerror}") from None
    finally:
        os.umask(old)
    made = os.lstat(name, dir_fd=dir_fd)
    if stat.S_IMODE(made.st_mode) != mode:
        sock.close()
        os.unlink(name, dir_fd=dir_fd)
        raise _fail(f"{path} was created with mode {stat.S_IMODE(made.st_mode):o}, not "
                    f"{mode:o}; refusing to serve on it")
    sock.listen(128)
    sock.setblocking(False)
    return sock


def remove_socket(path: Path, sock_ino: int, dir_fd: int) -> None:
    """Unlink our socket file at exit (only if it is still ours)."""
    with contextlib.suppress(OSError):
        if os.lstat(path.name, dir_fd=dir_fd).st_ino == sock_ino:
            os.unlink(path.name, dir_fd=dir_fd)


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


def watchdog_interval() -> float | None:
    """How often to send ``WATCHDOG=1`` (half of ``WatchdogSec=``, as sd_watchdog_enabled(3)
    advises), or None when systemd watches no one here or watches another process
    (``WATCHDOG_PID``: a child inheriting the environment must not ping for its parent)."""
    usec = os.environ.get("WATCHDOG_USEC", "")
    pid = os.environ.get("WATCHDOG_PID", "")
    if not usec.isdigit() or int(usec) == 0 or (pid and pid != str(os.getpid())):
        return None
    return int(usec) / 2e6

