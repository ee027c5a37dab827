"""The journal's own record of what a step's backups hold, and the check a rollback makes
against it before it touches anything.

A step's manifest and blobs live on the state disk beside the journal, and someone short of
room may remove them (``rm -rf /var/lib/anna/backups/<plan>``). Without a record of its own,
a rollback then found no manifest, took it for a step that never got as far as its backup,
and said ``rolled_back`` with the files still changed. So before any of a step's changes
land, the journal gets a ``step_backup`` event (durable, chained like every event): the
manifest's digest, and for each saved path its pre-state digest and the blobs it needs.

Before a rollback touches anything, each step's manifest is checked against that record
(:func:`problems`): a manifest missing or unreadable, a saved path missing from it or with
another pre-state, names each path as ``backup_missing`` or ``backup_damaged``; the
rollback then touches nothing of the plan and ends ``rollback_failed``, never
``rolled_back``.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from anna_common.protocol.models import UndoResult
from annad.backups.manifest import escape_path, printable, unescape_path

if TYPE_CHECKING:
    from annad.backups.manifest import StepManifest, TargetSnapshot
    from annad.journal.read import JournalReads

KIND = "step_backup"
"""The journal event kind of the record."""
MAX_TARGETS = 5000
"""Saved paths listed in one record (a bigger step's record says how many more it had)."""


def state_digest(target: TargetSnapshot) -> str:
    """The digest of what was saved for one path before the step (never changed after)."""
    saved = target.model_dump(mode="json", include={"path", "tree", "entries", "new_only",
                                                    "listing"})
    return hashlib.sha256(json.dumps(saved, sort_keys=True).encode()).hexdigest()


def body(manifest: StepManifest, manifest_bytes: bytes) -> dict[str, Any]:
    """The ``step_backup`` event's body for a step whose manifest is ``manifest_bytes``."""
    targets = [{"path": escape_path(t.path), "state": state_digest(t),
                "blobs": sorted({e.sha256 for e in t.entries if e.kind == "file" and e.sha256})}
               for t in manifest.targets[:MAX_TARGETS]]
    return {"index": manifest.index, "manifest_sha256": hashlib.sha256(manifest_bytes).hexdigest(),
            "targets": targets, "more": max(0, len(manifest.targets) - MAX_TARGETS)}


def recorded(journal: JournalReads, plan_id: str) -> dict[int, tuple[str, dict[str, Any]]]:
    """Step index → (step id, the newest record of its backups)."""
    out: dict[int, tuple[str, dict[str, Any]]] = {}
    for _plan, _kind, step_id, event in journal.events_of(plan_id, KIND):
        if isinstance(event.get("index"), int):
            out[event["index"]] = (step_id or f"#{event['index'] + 1}", event)
    return out


def _result(step_id: str, action: str, path: str, message: str) -> UndoResult:
    return UndoResult(step_id=step_id, action=action, target=printable(path)[:500], ok=False,
                      message=printable(message)[-2000:])


def problems(step_id: str, record: dict[str, Any], manifest: StepManifest | None,
             unreadable: str | None) -> list[UndoResult]:
    """What is wrong with a step's backups against the journal's ``record`` of them: one
    result per saved path (``backup_missing``: no manifest; ``backup_damaged``: one that
    does not parse, or does not hold that path as it was saved)."""
    paths = [(unescape_path(str(t.get("path", ""))), str(t.get("state", "")))
             for t in record.get("targets", []) if isinstance(t, dict)]
    more = f" (and {record['more']} more paths)" if record.get("more") else ""
    if manifest is None:
        action, why = ("backup_damaged", f"its undo record does not parse ({unreadable})") \
            if unreadable else ("backup_missing", "its undo record (manifest) is gone")
        return [_result(step_id, action, path, f"{printable(path)} is not restored: {why}"
                        f"{more}; the journal says it was saved before step {step_id} ran; "
                        "nothing of this plan was touched") for path, _ in paths]
    saved = {t.path: state_digest(t) for t in manifest.targets}
    out = []
    for path, state in paths:
        if saved.get(path) != state:
            why = "is not in its undo record" if path not in saved else \
                "has another saved state in its undo record than the journal recorded"
            out.append(_result(step_id, "backup_damaged", path,
                               f"{printable(path)} is not restored: it {why}; nothing of this "
                               "plan was touched"))
    return out
