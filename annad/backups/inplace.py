"""A journal of in-place restores, so a restore killed half way is finished, never left torn.

A file whose temporary copy does not fit (a full target disk) is restored in place: truncated
and written from its backup (:mod:`annad.backups.restore`). A kill -9 in between leaves it
torn — neither what the plan left nor what was saved — and the next rollback then took it for
someone's change and left it so. Now, before the truncation, a marker naming the path is
written and flushed in the plan's backup dir (``restoring/<sha256 of the path>``); it goes
once the restored content is flushed. A path with a marker is Anna's own half-done restore:
the next rollback restores it again, whatever it holds now. No marker can be written (the
state disk full too): the file is not touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from typing import TYPE_CHECKING

from annad.backups import manifest as manifests

if TYPE_CHECKING:
    from pathlib import Path

DIRECTORY = "restoring"
"""In the plan's backup dir (beside ``blobs``): one marker per in-place restore under way."""


def _marker(blobs_dir: Path, path: str) -> Path:
    return blobs_dir.parent / DIRECTORY / hashlib.sha256(os.fsencode(path)).hexdigest()


def _sync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def begin(blobs_dir: Path, path: str) -> None:
    """Record, durably, that ``path`` is about to be rewritten in place (OSError: not)."""
    marker = _marker(blobs_dir, path)
    if not marker.parent.is_dir():
        marker.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _sync_dir(marker.parent.parent)
    manifests.write_atomic(marker, os.fsencode(path))


def end(blobs_dir: Path, path: str) -> None:
    """``path`` is restored whole and flushed: its marker goes."""
    marker = _marker(blobs_dir, path)
    marker.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        _sync_dir(marker.parent)
        marker.parent.rmdir()


def pending(blobs_dir: Path, paths: list[str]) -> bool:
    """Whether an in-place restore of one of ``paths`` was under way when a daemon died."""
    return any(_marker(blobs_dir, p).exists() for p in paths)
