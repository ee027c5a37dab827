"""``annactl mcp``: run the MCP server on stdio until the client closes it.

Logging goes to stderr (stdout is the protocol's). The daemon is found on the first call
(:func:`annactl.core.daemon_client.connect`, autostarting a per-user daemon as any
command does), so a client can list the tools before any daemon answers; a daemon that
cannot be reached is then each call's ``DAEMON_UNAVAILABLE``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from annactl.core.exit_codes import ExitStatus

if TYPE_CHECKING:
    from pathlib import Path


def _socket() -> Path:
    from annactl.core.config import load_settings
    from annactl.core.daemon_client import connect

    return connect(load_settings()).socket_path


def run() -> int:
    """Serve until stdin closes; the exit status (0 after a clean end)."""
    import anyio

    from annactl.mcp.server import AnnaMcp

    logging.basicConfig(level=logging.WARNING, format="annactl mcp: %(levelname)s %(message)s")
    anyio.run(AnnaMcp(_socket).serve_stdio)
    return ExitStatus.SUCCESS
