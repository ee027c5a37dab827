"""Drive a real program inside tmux: keys in, the visible screen out, the exit status after."""

from __future__ import annotations

import re
import shlex
import subprocess
import time
import uuid
from pathlib import Path


class Tmux:
    """One tmux server (its own socket) running one command in a window of a fixed size."""

    def __init__(self, argv: list[str], env: dict[str, str], workdir: Path, *,
                 size: tuple[int, int] = (100, 34)) -> None:
        self.socket = f"anna-ui-{uuid.uuid4().hex[:10]}"
        self.status_file = workdir / f"{self.socket}.status"
        script = workdir / f"{self.socket}.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items()
                          if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k))
        script.write_text(f"{exports}export TERM=tmux-256color\n{shlex.join(argv)}\n"
                          f"echo $? > {shlex.quote(str(self.status_file))}\n")
        self._tmux("new-session", "-d", "-s", "t", "-x", str(size[0]), "-y", str(size[1]),
                   f"bash {shlex.quote(str(script))}")

    def _tmux(self, *args: str) -> str:
        proc = subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args],
                              capture_output=True, text=True, check=False, timeout=20)
        return proc.stdout

    def screen(self) -> str:
        """The visible pane, as text."""
        return self._tmux("capture-pane", "-p", "-t", "t")

    def title(self) -> str:
        """The pane title (an OSC 0/2 sequence from the program would change it)."""
        return self._tmux("display-message", "-p", "-t", "t", "#{pane_title}").strip()

    def wait_for(self, pattern: str, timeout: float = 30.0) -> str:
        """Wait until ``pattern`` (a regex) is visible; fail showing the screen."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if regex.search(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"did not see {pattern!r} within {timeout} s; screen:\n{screen}")

    def keys(self, *keys: str) -> None:
        """tmux key names (``Enter``, ``C-r``, ``Escape``) or ``-l`` literal text."""
        self._tmux("send-keys", "-t", "t", *keys)

    def type(self, text: str) -> None:
        """Type literal text."""
        self._tmux("send-keys", "-t", "t", "-l", text)

    def exit_status(self, timeout: float = 30.0) -> int:
        """Wait for the program to end; its exit status."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.status_file.exists() and self.status_file.read_text().strip():
                return int(self.status_file.read_text())
            time.sleep(0.1)
        raise AssertionError(f"still running after {timeout} s; screen:\n{self.screen()}")

    def close(self) -> None:
        """Stop this tmux server (only ours: it has its own socket)."""
        self._tmux("kill-server")
