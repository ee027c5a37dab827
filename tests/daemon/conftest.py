"""Fixtures for the daemon tests: a real annad subprocess, real pacman on a scratch root."""

from __future__ import annotations

from tests.daemonfix import (  # noqa: F401 - fixtures by name
    shared_user_daemon,
    system_daemon,
    user_daemon,
)
from tests.pacmanfix import (  # noqa: F401 - fixtures by name
    package_builder,
    pacman_root,
)
