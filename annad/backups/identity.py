"""What a step left at its targets, and whether it is still there at rollback.

A rollback must undo the plan, not whatever the person or another program did
after it: restoring a file someone edited since, or deleting a file the plan
created and someone then filled, would destroy their work. So when a step
succeeds the daemon records the identity of everything it wrote (inode, change
time, size, mode, owner, and the sha256 of files within the snapshot limits).
Before undoing, the current state is compared with that record; a difference
is a conflict and the target is left as it is.

Every walk here goes through :mod:`annad.backups.safefs` (no symlink followed).
"""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from annad.backups import safefs
from annad.backups.manifest import Ident, escape_path

if TYPE_CHECKING:
    from collections.abc import Callable

    from annad.backups.manifest import Entry, TargetSnapshot



class TooBig(Exception):
    """More entries than the limit: the identity is not recorded."""


@dataclass
class HashBudget:
    """How many more bytes may be hashed, and entries listed, for one step."""

    bytes_left: int
    files_left: int


Kind = Literal["file", "dir", "symlink", "special"]


def kind_of(mode: int) -> Kind:
    """What a stat mode is, in manifest terms."""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "special"


def file_sha256(parent: int, name: str) -> str:
    """sha256 of a regular file, streamed in bounded chunks (never through a symlink)."""
    fd = safefs.open_file_at(parent, name)
    try:
        return safefs.hash_copy(fd)[0]
    finally:
        os.close(fd)


def _ident(parent: int, name: str, path: str, info: os.stat_result,
           hash_if: Callable[[str, os.stat_result], bool]) -> Ident:
    kind = kind_of(info.st_mode)
    sha = file_sha256(parent, name) if kind == "file" and hash_if(path, info) else None
    link = os.readlink(name, dir_fd=parent) if kind == "symlink" else None
    return Ident(path=path, kind=kind, ino=info.st_ino, ctime_ns=info.st_ctime_ns,
                 mtime_ns=info.st_mtime_ns, size=info.st_size if kind == "file" else 0,
                 mode=stat.S_IMODE(info.st_mode), uid=info.st_uid, gid=info.st_gid, sha256=sha,
                 link=link)


def scan(path: str, *, tree: bool, limit: int,
         hash_if: Callable[[str, os.stat_result], bool]) -> list[Ident]:
    """Identities at ``path`` (and below it when ``tree`` and it is a directory).

    A missing path, or one whose directories are no longer plain directories, is
    ``absent``. Raises :class:`TooBig` past ``limit`` entries.
    """
    try:
        with safefs.parent_dir(path) as pfd:
            name = safefs.basename(path)
            info = safefs.lstat_at(pfd, name)
            if info is None:
                return [Ident(path=path, kind="absent")]
            out = [_ident(pfd, name, path, info, hash_if)]
            if tree and stat.S_ISDIR(info.st_mode):
                dfd = safefs.open_dir_at(pfd, name)
                try:
                    _below(dfd, path, out, limit, hash_if)
                finally:
                    os.close(dfd)
            return out
    except (FileNotFoundError, NotADirectoryError, safefs.UnsafePath):
        return [Ident(path=path, kind="absent")]


def _below(dfd: int, path: str, out: list[Ident], limit: int,
           hash_if: Callable[[str, os.stat_result], bool]) -> None:
    for name in sorted(os.listdir(dfd)):
        if len(out) >= limit:
            raise TooBig(path)
        child = posixpath.join(path, name)
        info = os.lstat(name, dir_fd=dfd)
        out.append(_ident(dfd, name, child, info, hash_if))
        if stat.S_ISDIR(info.st_mode):
            cfd = safefs.open_dir_at(dfd, name)
            try:
                _below(cfd, child, out, limit, hash_if)
            finally:
                os.close(cfd)


def record(path: str, *, tree: bool, budget: HashBudget) -> list[Ident] | None:
    """What is at ``path`` now, hashing files while the budget lasts; None when too big."""
    def hash_if(_: str, info: os.stat_result) -> bool:
        if info.st_size > budget.bytes_left:
            return False
        budget.bytes_left -= info.st_size
        return True

    try:
        found = scan(path, tree=tree, limit=max(budget.files_left, 1), hash_if=hash_if)
    except (TooBig, OSError):
        return None
    budget.files_left -= len(found)
    return found


def inside(path: str, roots: set[str] | list[str] | tuple[str, ...]) -> bool:
    """Whether ``path`` is one of ``roots`` or below one."""
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _same(old: Ident, new: Ident) -> bool:
    if old.kind != new.kind:
        return False
    if old.kind == "absent":
        return True
    if (old.ino, old.mode, old.uid, old.gid) != (new.ino, new.mode, new.uid, new.gid):
        return False
    if old.kind == "file":
        return (old.ctime_ns, old.mtime_ns, old.size) == (new.ctime_ns, new.mtime_ns, new.size)
    if old.kind == "symlink":
        return old.link == new.link
    return True  # a directory's times change with its entries, which are compared one by one


def _same_content(old: Ident, new: Ident) -> bool:
    """A file replaced by one with the very bytes and metadata the step left (an undo of a
    later step restores it that way, in this rollback or an interrupted earlier one): what
    the plan left is still there, only under a new inode."""
    return old.kind == new.kind == "file" and old.sha256 is not None and \
        old.sha256 == new.sha256 and (old.size, old.mode, old.uid, old.gid) == (
            new.size, new.mode, new.uid, new.gid)


def changed(recorded: list[Ident], *, tree: bool, trusted: Callable[[str], bool]) -> str | None:
    """Why what is there now differs from ``recorded`` (None: it is what the step left).

    Entries for which ``trusted`` holds (Anna itself restored them during this undo)
    are not compared.
    """
    top = recorded[0]
    hashed = {i.path: i.sha256 for i in recorded if i.sha256}

    def hash_if(path: str, _: os.stat_result) -> bool:
        return path in hashed

    try:
        now = scan(top.path, tree=tree, limit=len(recorded) + 1, hash_if=hash_if)
    except TooBig:
        return f"{_show(top.path)} holds more than the plan left there"
    old = {i.path: i for i in recorded if not trusted(i.path)}
    new = {i.path: i for i in now if not trusted(i.path)}
    for path in sorted(set(old) | set(new)):
        before, after = old.get(path), new.get(path)
        if before is None:
            return f"{_show(path)} was added since the plan ran"
        if after is None:
            return f"{_show(path)} was removed since the plan ran"
        if _same_content(before, after):
            continue
        if not _same(before, after) or (before.sha256 and before.sha256 != after.sha256):
            return f"{_show(path)} was changed since the plan ran"
    return None


def matches_snapshot(target: TargetSnapshot) -> bool:
    """Whether the target already is as it was saved (restored by an earlier undo)."""
    entries = target.entries
    if not entries:
        return False
    hashed = {e.path for e in entries if e.kind == "file"}

    def hash_if(path: str, _: os.stat_result) -> bool:
        return path in hashed

    try:
        now = scan(entries[0].path, tree=target.tree, limit=len(entries) + 1, hash_if=hash_if)
    except (TooBig, OSError):
        return False
    if entries[0].kind == "absent":
        return now[0].kind == "absent"
    current = {i.path: i for i in now}
    if target.tree and set(current) != {e.path for e in entries}:
        return False
    return all(_as_saved(e, current.get(e.path)) for e in entries)


def partly_restored(target: TargetSnapshot) -> bool:
    """Whether what is at a tree target now is a part of what was saved (an undo killed half
    way): every entry there is a saved one, files byte-exact — Anna's own restore, to be
    finished, not a stranger's change to be left alone."""
    entries = {e.path: e for e in target.entries}
    if not target.tree or not entries:
        return False
    hashed = {e.path for e in target.entries if e.kind == "file"}

    def hash_if(path: str, _: os.stat_result) -> bool:
        return path in hashed

    try:
        now = scan(target.entries[0].path, tree=True, limit=len(entries) + 1, hash_if=hash_if)
    except (TooBig, OSError):
        return False
    for ident in now:
        saved = entries.get(ident.path)
        if ident.kind == "absent":
            continue
        if saved is None:
            return False
        if saved.kind == "dir" and ident.kind == "dir":
            continue  # a directory gets its mode last: made, not yet finished
        if not _as_saved(saved, ident):
            return False
    return True


def half_undone(target: TargetSnapshot) -> bool:
    """Whether each thing at ``target`` now is as the step left it or as it was saved: an
    undo stopped between two of its atomic actions (a removal, a rename), never a stranger's
    change, which matches neither. Needs what the step left (``after``)."""
    after = {i.path: i for i in target.after or []}
    saved = {e.path: e for e in target.entries}
    if not after:
        return False
    hashed = {p for p, i in after.items() if i.sha256} | {
        e.path for e in target.entries if e.kind == "file"}

    def hash_if(path: str, _: os.stat_result) -> bool:
        return path in hashed

    try:
        now = scan(target.path, tree=True, limit=len(after) + len(saved) + 1, hash_if=hash_if)
    except (TooBig, OSError):
        return False
    for ident in now:
        left, was = after.get(ident.path), saved.get(ident.path)
        if ident.kind == "absent":
            continue
        if left is not None and (_same_content(left, ident) or (
                _same(left, ident) and not (left.sha256 and left.sha256 != ident.sha256))):
            continue
        if was is not None and (_as_saved(was, ident) or was.kind == ident.kind == "dir"):
            continue
        return False
    return True


def _as_saved(entry: Entry, now: Ident | None) -> bool:
    if now is None or now.kind != entry.kind:
        return False
    if entry.kind in ("file", "dir") and (entry.mode, entry.uid, entry.gid) != (
            now.mode, now.uid, now.gid):
        return False
    if entry.kind == "file":
        return (entry.size, entry.sha256) == (now.size, now.sha256)
    if entry.kind == "symlink":
        return entry.link == now.link
    return True


def _show(path: str) -> str:
    return escape_path(path)
