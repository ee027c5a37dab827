"""Class 10: the socket's directory is checked on its descriptor, modes are set before bind.

Real directories, real sockets; ``nobody`` (65534) plays the other user.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from anna_common.errors import AnnaError
from annad.api import listen

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not Path("/usr/bin/python3").exists(),
                                reason="chowns to another uid; connects as one")
NOBODY = 65534


@pytest.fixture
def base() -> Iterator[Path]:
    """A short private directory (socket paths are limited to 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="anna-l-", dir="/tmp"))
    try:
        yield path
    finally:
        subprocess.run(["rm", "-rf", str(path)], check=False)


def _refused(directory: Path, words: str) -> None:
    with pytest.raises(AnnaError) as caught:
        fd = listen.prepare_dir(directory, mode=0o700, gid=None)
        os.close(fd)
    assert words in caught.value.message


def test_directory_owned_by_someone_else_is_refused(base: Path) -> None:
    theirs = base / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, NOBODY, NOBODY)
    _refused(theirs, "owned by uid 65534")


@pytest.mark.parametrize("mode", [0o1777, 0o777, 0o770, 0o1770, 0o730])
def test_directory_others_may_write_is_refused_sticky_included(base: Path, mode: int) -> None:
    shared = base / "shared"
    shared.mkdir()
    shared.chmod(mode)
    _refused(shared, "writable by other users")


def test_tmp_itself_is_refused() -> None:
    _refused(Path("/tmp"), "writable by other users")


def test_symlinked_directory_is_refused(base: Path) -> None:
    real = base / "real"
    real.mkdir(mode=0o700)
    (base / "link").symlink_to(real)
    _refused(base / "link", "cannot open the socket directory")


@pytest.mark.parametrize("mode", [0o777, 0o775])
def test_parent_others_may_rename_in_is_refused(base: Path, mode: int) -> None:
    parent = base / "open"
    parent.mkdir()
    parent.chmod(mode)
    _refused(parent / "run", "may be changed by other users")
    assert not (parent / "run").exists()


def test_parent_owned_by_someone_else_is_refused(base: Path) -> None:
    parent = base / "theirs"
    parent.mkdir(mode=0o755)
    os.chown(parent, NOBODY, NOBODY)
    _refused(parent / "run", "may be changed by other users")


def test_socket_gets_mode_and_group_without_a_path_chmod(base: Path) -> None:
    directory = base / "run"
    path = directory / "annad.sock"
    old = os.umask(0)  # even with an open umask the socket is never wider than asked
    try:
        fd = listen.prepare_dir(directory, mode=0o750, gid=NOBODY)
        sock = listen.bind(path, mode=0o660, dir_fd=fd)
    finally:
        os.umask(old)
    try:
        info, dir_info = path.lstat(), directory.lstat()
        assert stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o660
        assert info.st_gid == NOBODY  # inherited from the setgid directory
        assert stat.S_IMODE(dir_info.st_mode) == 0o2750 and dir_info.st_gid == NOBODY
        client = socket.socket(socket.AF_UNIX)
        client.connect(str(path))
        client.close()
        base.chmod(0o711)

        def connect_as(uid: int, gid: int) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                ["setpriv", "--reuid", str(uid), "--regid", str(gid), "--clear-groups",
                 "/usr/bin/python3", "-I", "-c",
                 f"import socket; socket.socket(socket.AF_UNIX).connect({str(path)!r})"],
                check=False, capture_output=True, text=True)

        member = connect_as(NOBODY, NOBODY)  # group nogroup: may connect
        assert member.returncode == 0, member.stderr
        outsider = connect_as(1, 1)  # not in the group: cannot even reach it
        assert outsider.returncode != 0 and "PermissionError" in outsider.stderr
    finally:
        sock.close()
        os.close(fd)


def test_existing_file_is_not_replaced_stale_socket_is(base: Path) -> None:
    directory = base / "run"
    fd = listen.prepare_dir(directory, mode=0o700, gid=None)
    try:
        path = directory / "annad.sock"
        path.write_text("not a socket")
        with pytest.raises(AnnaError, match="not a socket"):
            listen.bind(path, mode=0o600, dir_fd=fd)
        path.unlink()
        stale = socket.socket(socket.AF_UNIX)
        stale.bind(str(path))
        stale.close()
        sock = listen.bind(path, mode=0o600, dir_fd=fd)
        assert stat.S_IMODE(path.lstat().st_mode) == 0o600
        sock.close()
        lock = listen.acquire_lock(path, fd)
        with pytest.raises(AnnaError, match="already serving"):
            listen.acquire_lock(path, fd)
        os.close(lock)
    finally:
        os.close(fd)


def test_daemon_refuses_a_socket_in_tmp(base: Path) -> None:
    """The real daemon: ``--socket /tmp/NAME`` (sticky, world-writable) is refused at start."""
    name = f"/tmp/{base.name}.sock"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANNA_", "ANNAD_"))}
    env.update(ANNAD_CONFIG=str(base / "none.toml"), PYTHONPATH=str(Path(__file__).parents[2]))
    done = subprocess.run([sys.executable, "-m", "annad.main", "--socket", name, "--state-dir",
                           str(base / "state"), "--user-mode"], env=env, check=False,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "writable by other users" in done.stderr
    assert not Path(name).exists()
