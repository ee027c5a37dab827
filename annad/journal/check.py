"""Checking a journal file the daemon is not using (``annad --check-journal FILE``).

A damaged journal is moved aside and the daemon starts a fresh one; this verifies the copy
read-only (SQLite's ``mode=ro``), with the same chain check as ``GET /v1/audit/verify``.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import TYPE_CHECKING

from anna_common.protocol.models import AuditReport
from annad.journal.read import JournalReads

if TYPE_CHECKING:
    from pathlib import Path


def check_copy(path: Path) -> AuditReport:
    """Verify a journal file without changing it (``annad --check-journal``): a copy moved
    aside, or the live file of a stopped daemon. A file that is not a journal is reported,
    never raised."""
    reads = JournalReads()
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        reads._db = sqlite3.connect(uri, uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        return AuditReport(ok=False, rows=0, message=f"{path} cannot be opened ({exc})")
    reads._lock = threading.RLock()
    try:
        return reads.verify()
    except (sqlite3.Error, ValueError, KeyError) as exc:  # not SQLite, not our schema
        return AuditReport(ok=False, rows=0, message=f"{path} is not a readable journal "
                           f"({type(exc).__name__}: {exc})")
    finally:
        reads._db.close()
