"""Starting a per-user annad when no daemon answers.

The daemon is started detached (its own session, no terminal, output to
``annad.log`` in the client's state dir) as ``annad --user-mode --socket PATH``,
using the ``annad`` script next to the running Python, else ``python -m
annad.main``. It exits by itself when idle. The client then waits, bounded, for
it to answer; two clients racing to start one are fine, because a second
daemon finds the socket's lock taken and exits.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from anna_common.errors import DaemonError, ErrorCode

if TYPE_CHECKING:
    from collections.abc import Callable

START_TIMEOUT_S = 20.0
"""How long to wait for a freshly started daemon to answer."""


def daemon_command(socket_path: Path) -> list[str]:
    """The command line that starts a per-user daemon on ``socket_path``."""
    script = Path(sys.executable).with_name("annad")
    head = [str(script)] if os.access(script, os.X_OK) else [sys.executable, "-m", "annad.main"]
    return [*head, "--user-mode", "--socket", str(socket_path)]


def start_user_daemon(socket_path: Path, *, log_dir: Path, probe: Callable[[], bool],
                      timeout: float = START_TIMEOUT_S) -> None:
    """Start a detached per-user daemon and wait until ``probe()`` says it answers."""
    for place in (socket_path.parent, log_dir):
        try:
            place.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:  # e.g. XDG_RUNTIME_DIR names a /run/user/UID nobody made
            raise DaemonError(f"cannot start a per-user annad: cannot create {place}: "
                              f"{exc.strerror}", code=ErrorCode.DAEMON_UNAVAILABLE,
                              hint="point XDG_RUNTIME_DIR at a directory of yours (or unset "
                              "it), or use the system daemon (annactl setup)") from None
    with (log_dir / "annad.log").open("ab") as log:
        try:
            proc = subprocess.Popen(
                daemon_command(socket_path), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True, close_fds=True, cwd="/")
        except OSError as exc:
            raise DaemonError(f"cannot start annad: {exc}",
                              code=ErrorCode.DAEMON_UNAVAILABLE) from None
    # reap it whenever it exits (idle exit), so a long-lived client leaves no zombie
    threading.Thread(target=proc.wait, name="annad-reaper", daemon=True).start()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if probe():
            return
        if proc.poll() not in (None, 0):
            break
        time.sleep(0.05)
    if probe():  # another client's daemon won the race and ours exited
        return
    raise DaemonError(f"started annad but it did not answer on {socket_path}",
                      code=ErrorCode.DAEMON_UNAVAILABLE,
                      hint=f"see {log_dir / 'annad.log'}")
