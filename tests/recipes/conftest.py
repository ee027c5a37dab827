"""Fixtures for recipe tests: a real per-user annad whose recipes directory, notify
command and session bus address are the test's own (tests/daemonfix.py points
``ANNAD_RECIPES_DIR`` and ``ANNAD_NOTIFY_COMMAND`` into the daemon's temporary base)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.daemonfix import REPO, RunningDaemon, running_daemon

FAKE_NOTIFY = """#!/bin/sh
# records what the daemon asked the desktop to show (a stand-in for notify-send)
out="$(dirname "$0")/notified.txt"
printf 'uid=%s bus=%s\\n' "$(id -u)" "$DBUS_SESSION_BUS_ADDRESS" >> "$out"
for arg in "$@"; do printf 'arg=%s\\n' "$arg" >> "$out"; done
"""
BUS = "unix:path=/nonexistent/anna-test-bus"
"""The session bus address the per-user daemon sees (the fake never connects to it)."""


@dataclass
class RecipeSite:
    """A daemon, its recipes directory and a scratch directory plans may touch."""

    daemon: RunningDaemon
    recipes: Path
    work: Path
    env: dict[str, str]

    def recipe(self, name: str, text: str) -> None:
        """Write ``recipes.d/NAME.toml``."""
        (self.recipes / f"{name}.toml").write_text(text)

    def annactl(self, *args: str, env: dict[str, str] | None = None,
                argv0: list[str] | None = None) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([*(argv0 or [sys.executable, "-m", "annactl.cli"]), *args],
                              env={**self.env, **(env or {})}, capture_output=True, text=True,
                              timeout=120, check=False)
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    def json(self, *args: str) -> tuple[int, Any]:
        proc = self.annactl(*args, "--json")
        return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else None

    @property
    def notified(self) -> str:
        path = self.daemon.base / "notified.txt"
        return path.read_text() if path.exists() else ""


@pytest.fixture
def site() -> Iterator[RecipeSite]:
    with running_daemon(user_mode=True, env={"DBUS_SESSION_BUS_ADDRESS": BUS}) as daemon:
        recipes = daemon.base / "recipes.d"
        recipes.mkdir()
        work = daemon.base / "work"
        work.mkdir()
        fake = daemon.base / "no-notify-send"  # the path daemonfix names ANNAD_NOTIFY_COMMAND
        fake.write_text(FAKE_NOTIFY)
        fake.chmod(0o755)
        env = {**os.environ, "ANNA_SOCKET": str(daemon.socket), "ANNA_AUTOSTART": "false",
               "PYTHONPATH": str(REPO)}
        yield RecipeSite(daemon, recipes, work, env)


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (Textual's Pilot) run on asyncio."""
    return "asyncio"
