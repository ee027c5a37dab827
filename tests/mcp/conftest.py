"""Fixtures for ``annactl mcp``: a real per-user annad in a temporary directory, the MCP
server started by the SDK's own stdio client (a real subprocess: ``annactl mcp``), and the
command line a person uses beside it (``annactl apply``, ``annactl queue``)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.daemonfix import RunningDaemon
from tests.recipes.conftest import RecipeSite, site  # noqa: F401 - the fixture agent_site uses

AGENT = "test-agent"
"""The name the tests' MCP client gives (its clientInfo)."""


@dataclass
class AgentSite:
    """A daemon, a scratch directory plans may touch, and how to reach both."""

    daemon: RunningDaemon
    work: Path
    env: dict[str, str]

    def server(self) -> StdioServerParameters:
        """``annactl mcp`` as an MCP client launches it (from its mcpServers entry)."""
        return StdioServerParameters(command=sys.executable, args=["-m", "annactl.cli", "mcp"],
                                     env=self.env, cwd=str(self.work))

    @contextlib.asynccontextmanager
    async def session(self, name: str = AGENT) -> AsyncIterator[ClientSession]:
        """An initialised MCP session with the real server, as agent ``name``."""
        with self.daemon.log.open("a") as errlog:
            async with stdio_client(self.server(), errlog=errlog) as (read, write), \
                    ClientSession(read, write, client_info=types.Implementation(
                        name=name, version="1.0")) as session:
                await session.initialize()
                yield session

    def annactl(self, *args: str, columns: int = 200) -> subprocess.CompletedProcess[str]:
        """The person's annactl (no terminal; tables ``columns`` wide)."""
        proc = subprocess.run([sys.executable, "-m", "annactl.cli", *args],
                              env={**self.env, "COLUMNS": str(columns)},
                              capture_output=True, text=True, timeout=300, check=False)
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    def json(self, *args: str) -> tuple[int, Any]:
        """``annactl ARGS --json``: (exit status, the document)."""
        proc = self.annactl(*args, "--json")
        return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else None

    def events(self, kind: str) -> list[dict[str, Any]]:
        """The journal's events of ``kind`` (their bodies), oldest first (read-only)."""
        db = sqlite3.connect(f"file:{self.daemon.state / 'journal.sqlite3'}?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT plan_id, body FROM events WHERE kind=? ORDER BY id",
                              (kind,)).fetchall()
        finally:
            db.close()
        return [{"plan_id": plan_id, **json.loads(body)} for plan_id, body in rows]

    def policy(self, text: str) -> None:
        """Write the administrator's policy file (the daemon reads it on every call)."""
        (self.daemon.base / "policy.toml").write_text(text)

    @property
    def notified(self) -> str:
        path = self.daemon.base / "notified.txt"
        return path.read_text() if path.exists() else ""


@pytest.fixture
def agent_site(site: RecipeSite) -> AgentSite:  # noqa: F811 - the imported fixture
    """The recipe tests' site (a per-user daemon with a recording notify-send, annactl
    pointed at its socket), seen as an agent's."""
    return AgentSite(site.daemon, site.work, site.env)


@pytest.fixture
def anyio_backend() -> str:
    """The MCP client runs on asyncio."""
    return "asyncio"
