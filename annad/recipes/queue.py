"""The approval queue: plans a recipe could not run unattended, waiting for a person.

One small JSON file per entry in ``STATE/queue/`` (0600, written to a temporary file and
renamed), beside the journal that stores the plan itself: the queue only says *why* a
stored plan waits. An entry is shown while its plan is still ``submitted``; once the plan
ran (approved by ``annactl queue approve``, ``apply`` or the TUI) or was dismissed, it
is no longer listed. Plan ids come from URLs: only the daemon's own id shape is accepted,
so an id can never name a path.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

from anna_common.errors import ErrorCode, PlanError
from anna_common.protocol.queue import QueueEntry

PLAN_ID = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{6}")
"""The shape of the ids :meth:`annad.service.PlanService.submit` makes."""
MAX_ENTRY = 256 * 1024
"""Largest entry file read."""


class Queue:
    """Entries under ``directory`` (created 0700 on first write)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock = threading.Lock()

    def _path(self, plan_id: str) -> Path:
        if not PLAN_ID.fullmatch(plan_id):
            raise PlanError(f"no plan {plan_id[:80]!r}", code=ErrorCode.PLAN_NOT_FOUND)
        return self.directory / f"{plan_id}.json"

    def put(self, entry: QueueEntry) -> None:
        """Add or replace an entry."""
        path = self._path(entry.plan_id)
        with self._lock:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(entry.model_dump_json())
                handle.flush()
                os.fsync(handle.fileno())
            tmp.replace(path)

    def get(self, plan_id: str) -> QueueEntry | None:
        """The entry of ``plan_id``, or None."""
        path = self._path(plan_id)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(MAX_ENTRY + 1)
        try:
            return QueueEntry.model_validate_json(raw) if len(raw) <= MAX_ENTRY else None
        except ValueError:
            return None

    def entries(self) -> list[QueueEntry]:
        """Every readable entry, oldest first."""
        try:
            names = sorted(p.stem for p in self.directory.glob("*.json"))
        except OSError:
            return []
        found = [e for e in (self.get(n) for n in names if PLAN_ID.fullmatch(n)) if e]
        return sorted(found, key=lambda e: e.queued_at)

    def dismiss(self, plan_id: str) -> QueueEntry:
        """Mark an entry dismissed (PLAN_NOT_FOUND when there is none)."""
        entry = self.get(plan_id)
        if entry is None:
            raise PlanError(f"plan {plan_id!r} is not in the queue",
                            code=ErrorCode.PLAN_NOT_FOUND)
        dismissed = entry.model_copy(update={"state": "dismissed"})
        self.put(dismissed)
        return dismissed


def as_json(entry: QueueEntry) -> str:
    """One entry as compact JSON (for the journal)."""
    return json.dumps(entry.model_dump(mode="json"), sort_keys=True)
