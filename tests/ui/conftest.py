"""Shared fixtures for the user-interface tests.

Annotated plans for every tier (made by Anna's real validation), and ``anna``: the real
annactl wired to a real per-user daemon (tests/daemonfix.py) and the fake model server
(tests/fakellm.py), everything inside temporary directories.
"""

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

from anna_common.findings import AnnotatedPlan
from tests.daemonfix import RunningDaemon, running_daemon
from tests.fakellm import FakeLLM

from .plans import HOSTILE_NOTES, annotate_dict, plan_dict
from .tmuxrun import Tmux

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (Textual's Pilot) run on asyncio."""
    return "asyncio"


@pytest.fixture
def info_plan() -> AnnotatedPlan:
    """Read-only: runs without asking."""
    return annotate_dict(plan_dict([("look", "ls -la /tmp", "INFO")]))


@pytest.fixture
def low_plan() -> AnnotatedPlan:
    """One LOW step writing in /tmp."""
    return annotate_dict(plan_dict([("write", "echo hi > /tmp/anna-ui/note.txt", "LOW")]))


@pytest.fixture
def medium_plan() -> AnnotatedPlan:
    """Installs a package (MEDIUM, system scope)."""
    return annotate_dict(plan_dict([("install", "pacman -S --noconfirm htop", "MEDIUM")],
                                   goal="Install htop"))


@pytest.fixture
def high_plan() -> AnnotatedPlan:
    """Edits /etc/fstab: HIGH, the confirmation word is the file. (Only ever annotated.)"""
    return annotate_dict(plan_dict(
        [("backup", "cp /etc/fstab /tmp/fstab.bak", "LOW"),
         ("edit", "cp /tmp/fstab.new /etc/fstab", "HIGH")],
        rollback=[("restore", "cp /tmp/fstab.bak /etc/fstab")],
        rollback_ids={"edit": "restore"}, goal="Replace fstab"))


@pytest.fixture
def banned_plan() -> AnnotatedPlan:
    """Contains rm -rf /: never approvable. (Only ever annotated.)"""
    return annotate_dict(plan_dict([("wipe", "rm -rf /", "LOW")], goal="Clean up"))


@pytest.fixture
def hostile_plan() -> AnnotatedPlan:
    """Untrusted text everywhere a model can put it."""
    return annotate_dict(plan_dict(
        [("s1\x1b[2J", "echo '[red]x[/]' > /tmp/anna-ui/f", "LOW")],
        goal="Goal \x1b]0;title\x07[bold]G[/bold]", notes=HOSTILE_NOTES,
        analysis="[link=http://evil]click[/link] \x1b[5mblink"))


# ---------------------------------------------------------------------- real daemon, fake model


@dataclass
class Anna:
    """A real per-user daemon, a fake model server and the environment annactl runs in."""

    daemon: RunningDaemon
    llm: FakeLLM
    env: dict[str, str]
    work: Path
    """A directory inside the daemon's temporary base: the only place test plans touch."""

    @property
    def argv(self) -> list[str]:
        """How to start the real annactl."""
        return [sys.executable, "-m", "annactl.cli"]

    def run(self, *args: str, stdin: str | None = None, timeout: float = 90.0,
            extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run the real annactl (no terminal) and return what happened. Without ``stdin``
        its stdin is /dev/null: never the test runner's own (``ask`` reads a pipe)."""
        feed: dict[str, Any] = ({"input": stdin} if stdin is not None
                                else {"stdin": subprocess.DEVNULL})
        proc = subprocess.run([*self.argv, *args], **feed, capture_output=True, text=True,
                              timeout=timeout, check=False, env={**self.env, **(extra_env or {})})
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    def json(self, *args: str, **kwargs: Any) -> tuple[int, Any]:
        """Run with ``--json``; (exit status, parsed stdout)."""
        proc = self.run(*args, "--json", **kwargs)
        return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else None

    def plan_file(self, data: dict[str, Any], name: str = "plan.json") -> Path:
        """Write a plan JSON file into the work directory."""
        path = self.work / name
        path.write_text(json.dumps(data))
        return path


@pytest.fixture
def anna() -> Iterator[Anna]:
    """annactl wired to a real daemon (user mode) and the fake LLM, all in temporary places."""
    with running_daemon(user_mode=True) as daemon, FakeLLM(models=("test-model",)) as llm:
        work = daemon.base / "work"
        work.mkdir()
        env = {**os.environ, "ANNA_SOCKET": str(daemon.socket), "ANNA_AUTOSTART": "false",
               "ANNA_LLM_URL": llm.ollama_url, "ANNA_LLM_MODEL": "test-model",
               "ANNA_LLM_TIMEOUT": "20", "PYTHONPATH": str(REPO)}
        yield Anna(daemon=daemon, llm=llm, env=env, work=work)


@pytest.fixture
def tmux_runs() -> Iterator[list[Tmux]]:
    """Every tmux server a test starts is stopped afterwards (the tmux tests append each
    :class:`~tests.ui.tmuxrun.Tmux` they start)."""
    started: list[Tmux] = []
    yield started
    for run in started:
        run.close()
