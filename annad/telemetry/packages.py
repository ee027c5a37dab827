"""Installed packages, read straight from the pacman local database.

pacman keeps one directory per installed package, ``DBPATH/local/NAME-VER-REL/``,
whose ``desc`` file holds ``%KEY%`` blocks. Reading those files directly is
much faster than spawning ``pacman -Q`` twice (all, then explicit) and needs no
lock. ``%REASON%`` absent or ``0`` means explicitly installed; ``1`` means
installed as a dependency. Names and versions are untrusted strings: they are
kept as they are (trimmed), never interpreted.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from anna_common.telemetry import PackageInfo, PackagesInfo

log = logging.getLogger(__name__)

MAX_FIELD = 128
"""Longest name or version kept (real ones are far shorter)."""
MAX_DESC_BYTES = 256 * 1024
"""A desc file larger than this is not a real one; it is skipped, not read into memory."""
REUSE_MARGIN_S = 2.0
"""A database changed this close before the previous snapshot is re-read: file times come
from a coarse kernel clock that can lag ``time.time()`` by a tick."""


def desc_field(text: str, key: str) -> str | None:
    """The first value line of block ``%KEY%`` in a desc file, or None when absent or empty.

    A header counts only at the start of a block (the file's first line, or after a
    blank line), as pacman reads it, so a value line that happens to say ``%REASON%``
    inside another block is data, not a header. Searching for the three headers Anna
    needs is several times faster than splitting every file into lines.
    """
    header = f"%{key}%\n"
    start = text.find(header)
    while start != -1:
        if start == 0 or (text[start - 1] == "\n" and (start == 1 or text[start - 2] == "\n")):
            begin = start + len(header)
            end = text.find("\n", begin)
            value = text[begin:] if end == -1 else text[begin:end]
            return value or None
        start = text.find(header, start + 1)
    return None


def _read_small(path: str) -> bytes | None:
    """A desc file's bytes, or None when unreadable or larger than :data:`MAX_DESC_BYTES`.

    Reads in 16 KiB chunks: asking for the whole limit at once makes Python allocate a
    256 KiB buffer per file, which alone tripled the time for 1,500 packages.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 16384):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_DESC_BYTES:
                return None
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_entry(entry: str) -> PackageInfo | None:
    """One package from ``local/NAME-VER-REL``; None when its desc is missing or malformed."""
    raw = _read_small(f"{entry}/desc")
    if raw is None:
        return None
    text = raw.decode("utf-8", "replace")
    name, version = desc_field(text, "NAME"), desc_field(text, "VERSION")
    if name is None or version is None:
        return None
    reason = desc_field(text, "REASON")
    explicit = reason is None or reason.strip() == "0"
    return PackageInfo(name=name[:MAX_FIELD], version=version[:MAX_FIELD], explicit=explicit)


def _unchanged_since(local: Path, since: float) -> bool:
    """Whether nothing in ``local`` (entries or desc files) changed before ``since``.

    Installing, removing or upgrading renames entries (the directory's time changes);
    ``pacman -D --asdeps/--asexplicit`` rewrites a desc in place (its time changes).
    """
    limit_ns = int((since - REUSE_MARGIN_S) * 1e9)
    try:
        if local.stat().st_mtime_ns >= limit_ns:
            return False
        with os.scandir(local) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    # plain strings and os.stat: a Path per entry costs more than the stat
                    desc = os.stat(f"{entry.path}/desc")  # noqa: PTH116
                    if desc.st_mtime_ns >= limit_ns:
                        return False
    except OSError:
        return False
    return True


def _reusable(previous: PackagesInfo | None, local: Path, dbpath: Path, since: float | None
              ) -> bool:
    return (previous is not None and since is not None and previous.available
            and previous.dbpath == str(dbpath) and _unchanged_since(local, since))


def collect_packages(dbpath: Path, *, previous: PackagesInfo | None = None,
                     previous_at: float | None = None) -> PackagesInfo:
    """Read ``dbpath/local``; say "not pacman" clearly when there is no such database.

    With ``previous`` (and the time it was collected), an unchanged database is not
    re-read: its package list is reused after checking every entry's modification time.
    """
    local = dbpath / "local"
    if not local.is_dir():
        return PackagesInfo(manager="none", available=False, dbpath=str(dbpath),
                            reason=f"not pacman: no database at {local}")
    if previous is not None and _reusable(previous, local, dbpath, previous_at):
        return previous.model_copy()
    packages: list[PackageInfo] = []
    try:
        with os.scandir(local) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    info = _read_entry(entry.path)
                    if info is not None:
                        packages.append(info)
    except OSError as exc:
        return PackagesInfo(manager="pacman", available=False, dbpath=str(dbpath),
                            reason=f"cannot read {local}: {exc.strerror or exc}")
    packages.sort(key=lambda p: p.name)
    return PackagesInfo(manager="pacman", available=True, dbpath=str(dbpath),
                        count=len(packages), explicit_count=sum(p.explicit for p in packages),
                        packages=packages)
