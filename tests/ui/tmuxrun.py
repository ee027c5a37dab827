"""Drive a real program inside tmux: keys in, the visible screen out, the exit status after."""

from __future__ import annotations

import re
import shlex
import subprocess
import uuid
from pathlib import Path

from tests.waiting import WAIT_S, wait_until

FOCUS_STYLE = r"\x1b\[(?:[0-9;]*;)?7(?:;[0-9;]*)?m(?:\x1b\[[0-9;]*m)*"
"""The SGR run before a label drawn in reverse video: Textual's focused button."""


class Tmux:
    """One tmux server (its own socket) running one command in a window of a fixed size."""

    def __init__(self, argv: list[str], env: dict[str, str], workdir: Path, *,
                 size: tuple[int, int] = (100, 34)) -> None:
        self.socket = f"anna-ui-{uuid.uuid4().hex[:10]}"
        self.status_file = workdir / f"{self.socket}.status"
        script = workdir / f"{self.socket}.sh"
        # the pane stays on screen after the program ends: a program that prints its last
        # line and exits at once would otherwise close the window between two looks
        self.conf = workdir / f"{self.socket}.conf"
        self.conf.write_text("set -g remain-on-exit on\n")
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items()
                          if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k))
        script.write_text(f"{exports}export TERM=tmux-256color\n{shlex.join(argv)}\n"
                          f"echo $? > {shlex.quote(str(self.status_file))}\n")
        self._tmux("new-session", "-d", "-s", "t", "-x", str(size[0]), "-y", str(size[1]),
                   f"bash {shlex.quote(str(script))}")

    def _tmux(self, *args: str) -> str:
        proc = subprocess.run(["tmux", "-L", self.socket, "-f", str(self.conf), *args],
                              capture_output=True, text=True, check=False, timeout=20)
        return proc.stdout

    def history(self) -> str:
        """Everything the pane has shown, its scrollback included (lines the terminal
        wrapped joined again)."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "t")

    def screen(self, *, styled: bool = False) -> str:
        """The visible pane, as text (``styled``: with its SGR colour and style codes)."""
        return self._tmux("capture-pane", *(["-e"] if styled else []), "-p", "-t", "t")

    def title(self) -> str:
        """The pane title (an OSC 0/2 sequence from the program would change it)."""
        return self._tmux("display-message", "-p", "-t", "t", "#{pane_title}").strip()

    def wait_for(self, pattern: str, timeout: float = WAIT_S, *, absent: str | None = None,
                 styled: bool = False) -> str:
        """Wait until ``pattern`` (a regex) is visible (and ``absent``, if given, is not);
        return the screen; fail showing it."""
        regex = re.compile(pattern)
        gone = re.compile(absent) if absent is not None else None

        def seen() -> str:
            screen = self.screen(styled=styled)
            ok = regex.search(screen) and not (gone is not None and gone.search(screen))
            return screen if ok else ""

        what = repr(pattern) + (f" without {absent!r}" if absent else "")
        return wait_until(seen, what, timeout=timeout, interval=0.1,
                          saw=lambda: "screen:\n" + self.screen())

    def wait_focused(self, label: str, timeout: float = WAIT_S) -> str:
        """Wait until the button ``label`` is drawn focused (reverse video): keys such as
        Enter go to the focused widget, and focus is applied after the screen appears."""
        return self.wait_for(FOCUS_STYLE + r"\s*" + re.escape(label), timeout, styled=True)

    def keys(self, *keys: str) -> None:
        """tmux key names (``Enter``, ``C-r``, ``Escape``) or ``-l`` literal text."""
        self._tmux("send-keys", "-t", "t", *keys)

    def type(self, text: str) -> None:
        """Type literal text."""
        self._tmux("send-keys", "-t", "t", "-l", text)

    def exit_status(self, timeout: float = WAIT_S) -> int:
        """Wait for the program to end; its exit status."""
        def status() -> str:
            return self.status_file.read_text().strip() if self.status_file.exists() else ""

        return int(wait_until(status, "the program to exit", timeout=timeout, interval=0.1,
                              saw=lambda: "screen:\n" + self.screen()))

    def close(self) -> None:
        """Stop this tmux server (only ours: it has its own socket)."""
        self._tmux("kill-server")
