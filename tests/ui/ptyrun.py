"""Drive a real program on a pseudo-terminal: what a person at a terminal would see and type."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import time

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][A-Z0-9]|\x1b[=>]")


class PtyProcess:
    """A subprocess whose stdin, stdout and stderr are one pseudo-terminal."""

    def __init__(self, argv: list[str], env: dict[str, str], *, rows: int = 40,
                 cols: int = 120) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.master = master
        self.raw = b""
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave,
                                     env={**env, "TERM": "xterm-256color", "COLUMNS": str(cols),
                                          "LINES": str(rows)},
                                     start_new_session=True)
        os.close(slave)

    @property
    def text(self) -> str:
        """Everything printed so far, escape sequences removed."""
        return ANSI.sub("", self.raw.decode("utf-8", errors="replace")).replace("\r", "")

    def _read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            try:
                self.raw += os.read(self.master, 65536)
            except OSError:  # the child closed the terminal
                time.sleep(timeout)

    def expect(self, pattern: str, timeout: float = 30.0) -> str:
        """Wait until ``pattern`` (a regex) appears in the output; fail with what was seen."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while time.monotonic() < deadline:
            if regex.search(self.text):
                return self.text
            self._read(0.1)
        raise AssertionError(f"did not see {pattern!r} within {timeout} s; saw:\n{self.text}")

    def send(self, text: str) -> None:
        """Type ``text`` (add ``\\r`` for Enter)."""
        os.write(self.master, text.encode())

    def interrupt(self) -> None:
        """Ctrl-C: SIGINT to the process, as the terminal would send it."""
        self.proc.send_signal(signal.SIGINT)

    def wait(self, timeout: float = 60.0) -> int:
        """Wait for exit, reading output meanwhile; returns the exit status."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        if self.proc.poll() is None:
            self.proc.kill()
            raise AssertionError(f"still running after {timeout} s; saw:\n{self.text}")
        for _ in range(5):
            self._read(0.05)
        os.close(self.master)
        return int(self.proc.returncode)
