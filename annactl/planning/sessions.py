"""Conversations kept between commands (issue 36.3): ``annactl ask --continue`` and
``--session NAME`` carry earlier turns to the model, as the REPL does within one session.

Each conversation is one JSON file, ``state_dir/sessions/NAME.json`` (the directory 0700, the
file 0600, written whole to a temporary file and renamed): its turns, each the request and a
summary of what Anna answered (the plan's goal and notes). Every plain ``ask`` starts the
conversation ``last`` afresh; ``--continue`` adds to the conversation written most recently,
``--session NAME`` to that one.

Bounds (seed 001's hard context budgets): at most :data:`MAX_TURNS` turns are kept, each cut
(:data:`MAX_REQUEST_CHARS`, :data:`MAX_SUMMARY_CHARS`); the packet's ``conversation``
document sends the last four, cut again to 200 and 300 characters
(:func:`annactl.planning.packet.conversation_document`), inside the prompt budget. The turns
are untrusted text (the summaries are the model's words): in the packet they are a document
marked as such, never part of the system prompt. A file that is not what Anna wrote (bad
JSON, wrong shapes, a symlink) is ignored, not trusted.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from anna_common.errors import UsageError

DIR_NAME = "sessions"
"""Under the state dir."""
LAST = "last"
"""The conversation every plain ``ask`` starts."""
MAX_TURNS = 8
"""Turns kept per conversation (the model sees the last four)."""
MAX_REQUEST_CHARS = 1000
"""Longest request kept."""
MAX_SUMMARY_CHARS = 400
"""Longest summary kept."""
MAX_FILE_BYTES = 64 * 1024
"""A conversation file larger than this was not written by Anna: ignored."""
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_name(name: str) -> str:
    """A conversation name that is also a safe file name, or a usage error."""
    if not _NAME.fullmatch(name) or name.endswith(".tmp"):
        raise UsageError(f"{name!r} is not a conversation name",
                         hint="use letters, digits, . _ - (up to 64, starting with a letter "
                         "or digit)")
    return name


@dataclass
class Conversation:
    """One stored conversation."""

    name: str
    """Its name (``last`` for the plain one)."""
    turns: list[tuple[str, str]] = field(default_factory=list)
    """(request, summary) pairs, oldest first."""
    updated: float = 0.0
    """When a turn was last added (seconds since the epoch)."""


class Sessions:
    """The conversations under ``state_dir/sessions``."""

    def __init__(self, state_dir: Path) -> None:
        self.root = state_dir / DIR_NAME
        """The directory."""

    def path(self, name: str) -> Path:
        """The file of conversation ``name``."""
        return self.root / f"{check_name(name)}.json"

    def load(self, name: str) -> Conversation:
        """Conversation ``name`` (empty when there is none, or its file is not Anna's)."""
        path = self.path(name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            return Conversation(name)
        if len(raw) > MAX_FILE_BYTES:
            return Conversation(name)
        try:
            data = json.loads(raw)
        except ValueError:
            return Conversation(name)
        turns = data.get("turns") if isinstance(data, dict) else None
        kept = [(str(t[0])[:MAX_REQUEST_CHARS], str(t[1])[:MAX_SUMMARY_CHARS])
                for t in (turns if isinstance(turns, list) else [])
                if isinstance(t, list) and len(t) == 2 and all(isinstance(x, str) for x in t)]
        updated = data.get("updated") if isinstance(data, dict) else None
        return Conversation(name, kept[-MAX_TURNS:],
                            float(updated) if isinstance(updated, int | float) else 0.0)

    def latest(self) -> Conversation | None:
        """The conversation a turn was added to most recently (None: there is none)."""
        found = [c for c in (self.load(n) for n in self.names()) if c.turns]
        return max(found, key=lambda c: c.updated) if found else None

    def names(self) -> list[str]:
        """Every stored conversation's name, sorted."""
        try:
            entries = list(self.root.iterdir())
        except OSError:
            return []
        return sorted(p.stem for p in entries
                      if p.suffix == ".json" and _NAME.fullmatch(p.stem) and not p.is_symlink())

    def add(self, conversation: Conversation, request: str, summary: str) -> Conversation:
        """Add a turn and write the conversation (0600); returns it."""
        turns = [*conversation.turns, (request[:MAX_REQUEST_CHARS],
                                       summary[:MAX_SUMMARY_CHARS])][-MAX_TURNS:]
        done = Conversation(conversation.name, turns, time.time())
        self._write(done)
        return done

    def forget(self, name: str) -> bool:
        """Delete conversation ``name``; True when there was one."""
        try:
            self.path(name).unlink()
        except FileNotFoundError:
            return False
        return True

    def _write(self, conversation: Conversation) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.root.chmod(0o700)  # an older or hand-made directory is made private too
        path = self.path(conversation.name)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"name": conversation.name, "updated": conversation.updated,
                       "turns": [list(t) for t in conversation.turns]}, handle, indent=1)
        tmp.replace(path)
