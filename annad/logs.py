"""annad's logging, set up once in :func:`annad.main.main`: journald's priorities and
``PLAN_ID`` under systemd, plain lines on stderr otherwise.

Under the unit, stderr is a journald stream and every line arrived at priority 6 (info):
``journalctl -u annad -p warning`` showed none of Anna's warnings, and nothing tied a line
to the plan it was about. So when stderr *is* journald's stream (``$JOURNAL_STREAM`` names
its device and inode, as systemd.exec(5) says to check), records go to journald over its
native protocol instead (the transport of the ``logging-journald`` package: the socket,
field encoding, large messages through a sealed memfd), each with ``PRIORITY`` from its
level, ``SYSLOG_IDENTIFIER=annad``, the logger, the code location and — when it is about a
plan — ``PLAN_ID``, so ``journalctl -u annad PLAN_ID=…`` is a plan's whole story. Should
journald be unreachable, the record is written to stderr as before, never lost.

The plan a record is about comes from ``extra={"plan_id": …}`` or, for everything logged
while a plan runs or rolls back, from :data:`PLAN_ID`, which the run's thread carries
(:func:`in_plan`). A per-user daemon, whose stderr is a log file, keeps plain lines.
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

PLAN_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("plan_id", default=None)
"""The plan the current thread works on (set for a run's thread by :func:`in_plan`)."""
FORMAT = "%(levelname)s %(name)s: %(message)s"
"""A plain stderr line (the per-user daemon's log file)."""
PRIORITIES = {logging.CRITICAL: 2, logging.ERROR: 3, logging.WARNING: 4, logging.INFO: 6,
              logging.DEBUG: 7}
"""syslog priorities of the logging levels (journald's ``PRIORITY`` field)."""


def in_plan(plan_id: str, target: Callable[..., Any]) -> Callable[..., Any]:
    """``target``, run in a context where :data:`PLAN_ID` is ``plan_id`` (a thread's target:
    threads start with an empty context)."""
    context = contextvars.copy_context()
    context.run(PLAN_ID.set, plan_id)
    return lambda *args, **kwargs: context.run(target, *args, **kwargs)


def plan_of(record: logging.LogRecord) -> str | None:
    """The plan ``record`` is about: its ``plan_id`` extra, else the thread's plan."""
    given = getattr(record, "plan_id", None)
    return str(given) if given else PLAN_ID.get()


def priority(levelno: int) -> int:
    """The syslog priority of a logging level (levels between two take the graver one)."""
    for level in sorted(PRIORITIES, reverse=True):
        if levelno >= level:
            return PRIORITIES[level]
    return 7


class JournaldHandler(logging.Handler):
    """Records to journald over its native protocol, with ``PRIORITY`` and ``PLAN_ID``."""

    def __init__(self, socket_path: Path | None = None) -> None:
        super().__init__()
        from logging_journald import JournaldTransport

        # addressed per send, as sd_journal_sendv() does: survives journald being restarted
        # (its socket replaced) and a socket not there yet
        self.transport = JournaldTransport(socket_path=socket_path, connected=False)
        self.fallback = logging.StreamHandler(sys.stderr)
        self.fallback.setFormatter(logging.Formatter(FORMAT))

    def fields(self, record: logging.LogRecord) -> list[tuple[str, Any]]:
        """The journal fields of ``record``."""
        pairs: list[tuple[str, Any]] = [
            ("MESSAGE", self.format(record)), ("PRIORITY", priority(record.levelno)),
            ("SYSLOG_IDENTIFIER", "annad"), ("LOGGER", record.name),
            ("CODE_FILE", record.pathname), ("CODE_LINE", record.lineno),
            ("CODE_FUNC", record.funcName)]
        plan = plan_of(record)
        if plan:
            pairs.append(("PLAN_ID", plan))
        return pairs

    def emit(self, record: logging.LogRecord) -> None:
        """Send ``record``; to stderr instead when journald cannot take it."""
        try:
            self.transport.send(self.fields(record))
        except Exception:  # journald gone or refusing: the line must still be somewhere
            self.fallback.handle(record)


def journald_stream(stream: Any = None) -> bool:
    """Whether ``stream`` (stderr) is journald's stream for this process (``JOURNAL_STREAM``
    is ``DEVICE:INODE`` of it; a child that inherited the variable but not the stream is not)."""
    value = os.environ.get("JOURNAL_STREAM", "")
    device, _, inode = value.partition(":")
    if not (device.isdigit() and inode.isdigit()):
        return False
    try:
        info = os.fstat((stream or sys.stderr).fileno())
    except (OSError, ValueError):
        return False
    return (info.st_dev, info.st_ino) == (int(device), int(inode))


def setup(level: str) -> None:
    """Logging for the whole daemon, once: journald's native protocol when stderr is its
    stream, plain lines on stderr otherwise."""
    handler = JournaldHandler() if journald_stream() else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s" if isinstance(handler, JournaldHandler)
                                           else FORMAT))
    logging.basicConfig(level=level.upper(), handlers=[handler])
