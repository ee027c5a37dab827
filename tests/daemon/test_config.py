"""DaemonSettings: arguments over ANNAD_* over the TOML file; derived paths; bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from anna_common.errors import AnnaError, ErrorCode
from annactl.core.config import runtime_dir
from annad.config import load_settings
from tests.daemonfix import REPO


def test_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toml = tmp_path / "annad.toml"
    toml.write_text('step_timeout_s = 900\nmax_output = 4096\ndistro = "arch"\n')
    monkeypatch.setenv("ANNAD_CONFIG", str(toml))
    settings = load_settings()
    assert (settings.step_timeout_s, settings.max_output, settings.distro) == (900, 4096, "arch")
    monkeypatch.setenv("ANNAD_STEP_TIMEOUT_S", "60")
    assert load_settings().step_timeout_s == 60
    assert load_settings(idle_exit_s=5, step_timeout_s=None).idle_exit_s == 5


def test_user_mode_paths_match_the_client(monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    monkeypatch.setenv("ANNAD_CONFIG", str(tmp_path / "none.toml"))
    settings = load_settings(user_mode=True)
    assert settings.mode == "user" and settings.socket_mode == 0o600
    assert settings.socket_path == runtime_dir() / "annad.sock"
    assert settings.state_path.is_relative_to(Path.home())
    system = load_settings(user_mode=False)
    assert str(system.socket_path) == "/run/anna/annad.sock"
    assert system.socket_mode == 0o660 and str(system.state_path) == "/var/lib/anna"


def test_bad_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANNAD_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("ANNAD_STEP_TIMEOUT_S", "-1")
    with pytest.raises(AnnaError) as caught:
        load_settings()
    assert caught.value.code is ErrorCode.CONFIG_INVALID
    bad = tmp_path / "bad.toml"
    bad.write_text("this is = = not toml")
    monkeypatch.setenv("ANNAD_CONFIG", str(bad))
    monkeypatch.delenv("ANNAD_STEP_TIMEOUT_S")
    with pytest.raises(AnnaError):
        load_settings()


def test_annad_exits_2_with_one_line_on_bad_config(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path),
           "ANNAD_CONFIG": str(tmp_path / "none.toml"), "ANNAD_MAX_OUTPUT": "tiny"}
    proc = subprocess.run([sys.executable, "-m", "annad.main", "--socket",
                           str(tmp_path / "s.sock")], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("annad: invalid config")
    assert not (tmp_path / "s.sock").exists()
