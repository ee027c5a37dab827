"""Drive a real program on a pseudo-terminal: what a person at a terminal would see and type."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time

from tests.waiting import WAIT_S, wait_until

AT_A_TERMINAL = [sys.executable, "-c",
                 "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                 "os.execvp(sys.argv[1], sys.argv[1:])"]
"""Run a program as from a shell at a terminal: with Ctrl-C (SIGINT) in effect. A test run
started in the background (``nohup``, ``cmd &`` in a script, some CI runners) ignores SIGINT,
and an ignored signal stays ignored across exec: the program would never see the Ctrl-C."""
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][A-Z0-9]|\x1b[=>]")


class PtyProcess:
    """A subprocess whose stdin, stdout and stderr are one pseudo-terminal."""

    def __init__(self, argv: list[str], env: dict[str, str], *, rows: int = 40,
                 cols: int = 120) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.master = master
        self.raw = b""
        self.proc = subprocess.Popen([*AT_A_TERMINAL, *argv], stdin=slave, stdout=slave,
                                     stderr=slave, start_new_session=True,
                                     env={**env, "TERM": "xterm-256color", "COLUMNS": str(cols),
                                          "LINES": str(rows)})
        os.close(slave)

    @property
    def text(self) -> str:
        """Everything printed so far, escape sequences removed."""
        return ANSI.sub("", self.raw.decode("utf-8", errors="replace")).replace("\r", "")

    def _read(self, timeout: float) -> bool:
        """Read what is there (waiting up to ``timeout``); False when nothing more came."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # the child closed the terminal: all it wrote has been read
            time.sleep(timeout)  # (select keeps reporting EIO; pace the caller's poll)
            return False
        self.raw += chunk
        return bool(chunk)

    def expect(self, pattern: str, timeout: float = WAIT_S) -> str:
        """Wait until ``pattern`` (a regex) appears in the output; fail with what was seen."""
        regex = re.compile(pattern)

        def seen() -> str:
            if not regex.search(self.text):
                self._read(0.1)
            return self.text if regex.search(self.text) else ""

        return wait_until(seen, repr(pattern), timeout=timeout, interval=0,
                          saw=lambda: "\n" + self.text)

    def send(self, text: str) -> None:
        """Type ``text`` (add ``\\r`` for Enter)."""
        os.write(self.master, text.encode())

    def interrupt(self) -> None:
        """Ctrl-C: SIGINT to the process, as the terminal would send it."""
        self.proc.send_signal(signal.SIGINT)

    def wait(self, timeout: float = WAIT_S) -> int:
        """Wait for exit, reading output meanwhile; returns the exit status."""
        def ended() -> bool:
            self._read(0.1)
            return self.proc.poll() is not None

        try:
            wait_until(ended, "the program to exit", timeout=timeout, interval=0,
                       saw=lambda: "\n" + self.text)
        except AssertionError:
            self.proc.kill()
            raise
        for _ in range(1000):  # the rest of what it printed before it ended
            if not self._read(0.05):
                break
        os.close(self.master)
        return int(self.proc.returncode)
