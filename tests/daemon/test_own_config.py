"""Anna's own configuration is Anna's state (issue 34 item 3).

A root daemon reads its TOML file, the administrator's policy and ``confine_python`` only when
root alone can change them: a file (or a directory above it) owned by another uid, or
writable by its group or others, is refused with ``CONFIG_INVALID``/``POLICY_INVALID``
naming the file — at start, and for the policy at every read. The config paths are
temporary (``ANNAD_CONFIG``, ``ANNAD_POLICY_FILE``), never the machine's /etc/anna.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.policy.decide import PolicyError
from annad.config import load_settings, untrusted
from annad.policy_load import PolicyStore
from tests.daemonfix import IS_ROOT, new_daemon, stop_and_remove

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="the ownership rules are a root daemon's")
NOBODY = 65534


@pytest.fixture
def private(tmp_path: Path) -> Path:
    """A directory only root can write (pytest's own tree is root's, 0700)."""
    top = tmp_path / "etc-anna"
    top.mkdir(mode=0o755)
    return top


@pytest.mark.parametrize(("mode", "uid", "why"), [
    (0o666, 0, "writable by others"),
    (0o664, 0, "writable by its group"),
    (0o644, NOBODY, f"owned by uid {NOBODY}"),
])
def test_a_config_file_another_user_can_change_is_refused(
        private: Path, monkeypatch: pytest.MonkeyPatch, mode: int, uid: int, why: str) -> None:
    toml = private / "annad.toml"
    toml.write_text('confine_python = "/tmp/p"\n')
    toml.chmod(mode)
    os.chown(toml, uid, 0)
    monkeypatch.setenv("ANNAD_CONFIG", str(toml))
    with pytest.raises(AnnaError) as caught:
        load_settings(user_mode=False)
    assert caught.value.code == ErrorCode.CONFIG_INVALID
    assert str(toml) in caught.value.message and why in caught.value.message


def test_a_directory_above_the_config_given_away_is_refused(
        private: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``install -d -o USER /etc/anna``: the file is root's, its directory is not."""
    toml = private / "annad.toml"
    toml.write_text("max_output = 4096\n")
    os.chown(private, NOBODY, 0)
    monkeypatch.setenv("ANNAD_CONFIG", str(toml))
    with pytest.raises(AnnaError) as caught:
        load_settings(user_mode=False)
    assert caught.value.code == ErrorCode.CONFIG_INVALID
    assert f"{private} is owned by uid {NOBODY}" in caught.value.message


def test_a_root_owned_config_is_read(private: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toml = private / "annad.toml"
    toml.write_text("max_output = 4096\n")
    toml.chmod(0o644)
    monkeypatch.setenv("ANNAD_CONFIG", str(toml))
    assert load_settings(user_mode=False).max_output == 4096
    assert untrusted(private / "absent.toml") is None  # no file: nothing is read


def test_confine_python_another_user_can_change_is_refused(
        private: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The interpreter of every check's confinement, run as root: a copy nobody owns."""
    python = private / "python3"
    shutil.copy2(Path(os.path.realpath("/usr/bin/python3")), python)
    os.chown(python, NOBODY, 0)
    monkeypatch.setenv("ANNAD_CONFIG", str(private / "none.toml"))
    monkeypatch.setenv("ANNAD_CONFINE_PYTHON", str(python))
    with pytest.raises(AnnaError) as caught:
        load_settings(user_mode=False)
    assert caught.value.code == ErrorCode.CONFIG_INVALID
    assert "confine_python" in caught.value.message and str(python) in caught.value.message
    os.chown(python, 0, 0)
    assert load_settings(user_mode=False).confine_python == str(python)


def test_a_policy_another_user_can_change_is_refused_at_every_read(private: Path) -> None:
    policy = private / "policy.toml"
    policy.write_text('[[rule]]\naction = "allow"\npath = "/**"\n')
    store = PolicyStore(policy)
    assert store.admin().rules  # root's own file: read
    policy.chmod(0o646)
    with pytest.raises(PolicyError) as caught:
        store.admin()
    assert caught.value.code == ErrorCode.POLICY_INVALID
    assert f"{policy}:1: refused" in caught.value.message


def test_the_real_daemon_will_not_start_on_a_policy_others_can_write() -> None:
    daemon = new_daemon(user_mode=False)
    policy = daemon.base / "policy.toml"
    policy.write_text('[[rule]]\naction = "allow"\npath = "/**"\n')
    policy.chmod(0o666)
    try:
        with pytest.raises(RuntimeError, match="annad exited"):
            daemon.start()
        assert daemon.proc is not None and daemon.proc.returncode == 1
        assert f"{policy}:1: refused" in daemon.output()
        assert not daemon.socket.exists()
    finally:
        stop_and_remove(daemon)
