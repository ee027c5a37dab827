"""Shared fixtures. Every test runs with HOME, XDG and Anna paths inside its own tmp_path,
so nothing reads or writes the developer's (or CI's) real configuration or state."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# real-pacman fixtures (scratch roots, a tiny package built with makepkg) for every test
pytest_plugins = ["tests.pacmanfix"]


def pytest_configure(config: pytest.Config) -> None:
    """Markers of this suite's own fixtures (the suite runs with --strict-markers)."""
    config.addinivalue_line("markers", "shared_daemon: user_daemon is the module's shared "
                                       "daemon (tests/daemonfix.py says when that is safe)")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point HOME, the XDG directories and every ANNA_/ANNAD_ variable at tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    for key in list(os.environ):
        if key.startswith(("ANNA_", "ANNAD_")):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    # never talk to a system daemon or a real model server from a test
    monkeypatch.setenv("ANNA_SYSTEM_SOCKET", str(tmp_path / "no-system-daemon.sock"))
    monkeypatch.setenv("ANNA_LLM_URL", "http://127.0.0.1:9")
    # scripted replies are written for the form the request's words choose; the choice
    # learned per model (issue 39.2) is tested where it is set (tests/planner/test_profile.py)
    monkeypatch.setenv("ANNA_LLM_FORMS", "small")
    return home
