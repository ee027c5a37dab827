"""What a spawned process left: its result and the tail of its output (shared by the runner
and the confinement sessions)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass(slots=True)
class RunResult:
    """What a finished process left behind."""

    exit_code: int | None
    """Exit status; negative for a signal; None if it never started."""
    output: str
    """Combined stdout and stderr (the tail, decoded as UTF-8 with replacement)."""
    truncated: bool = False
    """Whether earlier output was dropped."""
    timed_out: bool = False
    """Killed for running past its timeout."""
    cancelled: bool = False
    """Killed because a cancel was requested."""
    duration_ms: float = 0.0
    """Wall time."""
    error: str | None = None
    """Why it could not be started."""
    refused: bool = False
    """The confinement could not be built (a kernel without a wall, no seccomp binding, a
    mount that failed): nothing ran, and the reason is ``error``. Callers that report a
    coded error can tell this apart from a command that failed."""
    over_memory: bool = False
    """Killed for holding more memory than its run's cap (a preview's cgroup)."""

    @property
    def ok(self) -> bool:
        """Exited 0 on its own."""
        return self.exit_code == 0 and not self.timed_out and not self.cancelled


@dataclass
class Tail:
    """The last ``limit`` bytes of a stream (the end of a failing command's output explains
    the failure)."""

    limit: int
    chunks: deque[bytes] = field(default_factory=deque)
    size: int = 0
    dropped: bool = False

    def add(self, data: bytes) -> None:
        """Append ``data``, dropping the oldest bytes beyond the limit."""
        self.chunks.append(data)
        self.size += len(data)
        while self.size > self.limit and self.chunks:
            head = self.chunks.popleft()
            excess = self.size - self.limit
            self.dropped = True
            if len(head) > excess:
                self.chunks.appendleft(head[excess:])
                self.size -= excess
            else:
                self.size -= len(head)

    def text(self) -> str:
        """What is kept, decoded as UTF-8 with replacement."""
        return b"".join(self.chunks).decode("utf-8", "replace")
