"""Turn the overlay's upper-layer entries into file changes with unified diffs.

Each step's entries are compared with the state before that step: the previous step's
result where an earlier step already touched the path, the real file otherwise (read by
the daemon, never written). Text gets a unified diff, capped per file and per plan with
the number of lines left out; binary or oversized files get sizes only; metadata changes
(mode, owner) are reported on their own.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import posixpath
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from anna_common.protocol.preview import FileChange
from annad.backups.manifest import escape_path, printable
from annad.capture.versus_preview import owner_name
from annad.preview.overlay import content

if TYPE_CHECKING:
    from collections.abc import Callable

FILE_LINES = 120
"""Diff lines shown per file."""
PLAN_LINES = 600
"""Diff lines shown per plan."""
READ_CAP = 256 * 1024
"""Bytes of a real file read for its "before" side."""


@dataclass(frozen=True, slots=True)
class State:
    """A path's state at one point of the preview."""

    kind: str = "absent"
    """``f`` file, ``d`` directory, ``l`` link, ``x`` other, ``absent``."""
    mode: int = 0
    uid: int = 0
    gid: int = 0
    size: int = 0
    data: bytes | None = None
    """Content (files; None when unreadable or over the cap)."""
    link: str = ""
    mtime: int = 0
    """Modification time (files: ``touch -d`` is a change the capture sees)."""
    digest: str | None = None
    """SHA-256 of the whole content (files in the upper layer; None for the real tree)."""


@dataclass(frozen=True, slots=True)
class Reader:
    """Whose rights the daemon's "before" reads of the real tree follow."""

    uid: int | None = None
    """The step's owner (None: a root step, which may read anything it would change)."""
    groups: tuple[int, ...] = ()
    """The owner's groups."""

    def may(self, info: os.stat_result, bit: int) -> bool:
        """Whether the owner's permission bits allow ``bit`` (4 read, 1 search)."""
        if self.uid is None:
            return True
        if info.st_uid == self.uid:
            return bool(info.st_mode & (bit << 6))
        if info.st_gid in self.groups:
            return bool(info.st_mode & (bit << 3))
        return bool(info.st_mode & bit)


def _walk_to(base: str, rel: str, reader: Reader) -> tuple[int, str]:
    """A descriptor of the directory holding ``rel`` below ``base`` and the last name.

    Every directory below ``base`` is opened with O_NOFOLLOW: a step that put a symlink
    where a directory was (``~/a -> /etc``) cannot make the root daemon read through it.
    """
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            if not reader.may(os.fstat(fd), 1):
                raise PermissionError(part)
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                          dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1] if parts else "."


def real_state(base: str, rel: str, reader: Reader, *, content: bool = True) -> State:
    """The real tree's state of ``base/rel``: lstat, and the content (capped; not at all
    without ``content``, or when the step's owner may not read it)."""
    try:
        dir_fd, name = _walk_to(base, rel, reader)
    except OSError:
        return State()
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        meta = (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid, info.st_size)
        if stat.S_ISLNK(info.st_mode):
            return State("l", *meta, link=os.readlink(name, dir_fd=dir_fd))
        if stat.S_ISDIR(info.st_mode):
            return State("d", *meta)
        if not stat.S_ISREG(info.st_mode):
            return State("x", *meta)
        data = None
        if content and info.st_size <= READ_CAP and reader.may(info, 4) and \
                reader.may(os.fstat(dir_fd), 1):
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=dir_fd)
            try:
                data = os.read(fd, READ_CAP + 1)[:READ_CAP]
            finally:
                os.close(fd)
        return State("f", *meta, data=data, mtime=info.st_mtime_ns)
    except OSError:
        return State()
    finally:
        os.close(dir_fd)


def real_digest(base: str, rel: str, reader: Reader) -> str | None:
    """SHA-256 of the real file ``base/rel`` (None: not a readable regular file)."""
    try:
        dir_fd, name = _walk_to(base, rel, reader)
    except OSError:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or not reader.may(info, 4):
                return None
            digest = hashlib.sha256()
            while chunk := os.read(fd, 1 << 20):
                digest.update(chunk)
            return digest.hexdigest()
        finally:
            os.close(fd)
    except OSError:
        return None
    finally:
        os.close(dir_fd)


def real_names(base: str, rel: str, reader: Reader) -> list[str]:
    """The names in the real directory ``base/rel`` (nothing when it cannot be listed)."""
    try:
        dir_fd, name = _walk_to(base, posixpath.join(rel, "-"), reader)  # the dir itself
    except OSError:
        return []
    try:
        del name
        if not reader.may(os.fstat(dir_fd), 4):
            return []
        return sorted(os.listdir(dir_fd))  # noqa: PTH208 - listing a descriptor
    except OSError:
        return []
    finally:
        os.close(dir_fd)


def entry_state(entry: dict[str, Any], real: State) -> State:
    """The state an upper-layer entry means (``gone``: back to the real tree)."""
    kind = str(entry.get("type"))
    if kind == "gone":
        return real
    if kind == "w":
        return State()
    meta = (int(entry.get("mode", 0)), int(entry.get("uid", 0)), int(entry.get("gid", 0)),
            int(entry.get("size", 0)))
    if kind == "f":
        digest = entry.get("sha256")
        return State("f", *meta, data=None if entry.get("truncated") else content(entry),
                     mtime=int(entry.get("mtime", 0)),
                     digest=digest if isinstance(digest, str) else None)
    if kind == "l":
        return State("l", *meta, link=str(entry.get("link", "")))
    return State(kind if kind in ("d", "x") else "x", *meta)


def _text(data: bytes | None) -> list[str] | None:
    if data is None or b"\0" in data:
        return None
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None


_KINDS: dict[str, Literal["file", "dir", "symlink", "other"]] = {
    "f": "file", "d": "dir", "l": "symlink", "x": "other"}


class DiffBudget:
    """Diff lines left for the plan."""

    def __init__(self, lines: int = PLAN_LINES) -> None:
        self.left = lines
        self.dropped = 0

    def cut(self, lines: list[str]) -> tuple[str, int]:
        """The shown part of a diff and how many lines were left out."""
        shown = lines[:max(0, min(FILE_LINES, self.left))]
        self.left -= len(shown)
        more = len(lines) - len(shown)
        self.dropped += more
        return "\n".join(shown), more


def _diff(path: str, before: State, after: State, budget: DiffBudget) -> tuple[str | None, int]:
    if after.kind == "l" or before.kind == "l":
        old = f"symlink -> {printable(before.link)}" if before.kind == "l" else None
        new = f"symlink -> {printable(after.link)}" if after.kind == "l" else None
        lines = [f"- {old}"] * (old is not None) + [f"+ {new}"] * (new is not None)
        return budget.cut(lines)
    old_text = [] if before.kind == "absent" else _text(before.data)
    new_text = [] if after.kind == "absent" else _text(after.data)
    if after.kind not in ("f", "absent") or before.kind not in ("f", "absent") or \
            old_text is None or new_text is None:
        return None, 0
    lines = list(difflib.unified_diff(old_text, new_text, fromfile=path, tofile=path,
                                      lineterm="", n=3))
    if not lines:
        return None, 0
    return budget.cut(lines)


def _same(before: State, after: State, before_digest: Callable[[], str | None]) -> bool:
    """Nothing changed, as the capture judges it: a directory's mode and owner, a link's
    target and owner, a file's metadata, mtime and whole content."""
    if before.kind != after.kind or (before.mode, before.uid, before.gid) != \
            (after.mode, after.uid, after.gid):
        return False
    if before.kind == "l":
        return before.link == after.link
    if before.kind != "f":
        return True
    if (before.size, before.mtime) != (after.size, after.mtime):
        return False
    if after.digest is not None:
        # an earlier step's result carries its digest; the real file is read for it
        return (before.digest or before_digest()) == after.digest
    return before.data is not None and before.data == after.data


def change(path: str, before: State, after: State, budget: DiffBudget,
           before_digest: Callable[[], str | None] = lambda: None) -> FileChange | None:
    """The change from ``before`` to ``after``, or None when nothing changed.
    Names that are not UTF-8 are shown with ``\\xHH`` escapes (the journal and JSON hold
    text); ``key`` then holds the exact name."""
    if _same(before, after, before_digest):
        return None
    what = "created" if before.kind == "absent" else "deleted" if after.kind == "absent" \
        else "modified"
    key = escape_path(path)
    path = printable(path)
    diff, more = _diff(path, before, after, budget)
    present = [s if s.kind != "absent" else None for s in (before, after)]
    # a symlink's own mode is always 0777 on Linux and means nothing (access is decided by
    # its target): showing "mode 0777" made a link look like a world-writable file
    moded = [s if s is not None and s.kind != "l" else None for s in present]
    return FileChange(
        path=path, change=what, diff=diff, more_lines=more,
        size_before=present[0].size if present[0] and present[0].kind == "f" else None,
        size_after=present[1].size if present[1] and present[1].kind == "f" else None,
        mode_before=f"{before.mode:04o}" if moded[0] else None,
        mode_after=f"{after.mode:04o}" if moded[1] else None,
        owner_before=owner_name(before.uid, before.gid) if present[0] else None,
        owner_after=owner_name(after.uid, after.gid) if present[1] else None,
        kind_after=_KINDS.get(after.kind), sha256=after.digest if after.kind == "f" else None,
        link_after=escape_path(after.link) if after.kind == "l" else None,
        key=key if key != path else None)


class Tracker:
    """The state of every touched path across the steps of one preview."""

    def __init__(self, overlays: list[str]) -> None:
        self.overlays = overlays
        self.states: dict[str, State] = {}
        self.budget = DiffBudget()
        self.reader = Reader()

    def path_of(self, entry: dict[str, Any]) -> str:
        """The real path an entry stands for."""
        return posixpath.normpath(posixpath.join(self.overlays[int(entry["overlay"])],
                                                 str(entry["rel"])))

    def _real(self, index: int, rel: str) -> State:
        # once the plan's diff lines are spent, sizes and modes are all that is shown:
        # a step deleting thousands of files does not make the daemon read them all
        return real_state(self.overlays[index], rel, self.reader,
                          content=self.budget.left > 0)

    def _digest_of(self, index: int, rel: str) -> Callable[[], str | None]:
        """The real file's digest, read only when a comparison needs it."""
        def digest() -> str | None:
            return real_digest(self.overlays[index], rel, self.reader)
        return digest

    def before(self, index: int, rel: str) -> State:
        """The state before the current step."""
        path = posixpath.normpath(posixpath.join(self.overlays[index], rel))
        if path not in self.states:
            self.states[path] = self._real(index, rel)
        return self.states[path]

    def step(self, entries: list[dict[str, Any]], reader: Reader | None = None
             ) -> list[FileChange]:
        """The changes of one step, in path order (the real tree read with ``reader``'s
        rights); the states move on."""
        self.reader = reader or Reader()
        changes: list[FileChange] = []
        for entry in sorted(entries, key=self.path_of):
            path = self.path_of(entry)
            index, rel = int(entry["overlay"]), str(entry["rel"])
            before = self.before(index, rel)
            # gone from the upper layer: the path shows the real tree again
            after = self._real(index, rel) if entry.get("type") == "gone" else \
                entry_state(entry, State())
            self.states[path] = after
            found = change(path, before, after, self.budget, self._digest_of(index, rel))
            if found is not None and found.sha256 is not None:
                found.varying = bool(entry.get("varying"))
            if found is not None:
                changes.append(found)
            if entry.get("opaque") and before.kind == "d":
                changes += self._emptied(index, rel, entries)
        return changes

    def _emptied(self, index: int, rel: str, entries: list[dict[str, Any]]
                 ) -> list[FileChange]:
        """An opaque directory replaced a real one: its real entries are gone."""
        kept = {self.path_of(e) for e in entries}
        out = []
        for name in real_names(self.overlays[index], rel, self.reader):
            child_rel = posixpath.join(rel, name)
            child = posixpath.normpath(posixpath.join(self.overlays[index], child_rel))
            before = self.before(index, child_rel)
            if child not in kept and before.kind != "absent":
                found = change(child, before, State(), self.budget)
                self.states[child] = State()
                if found is not None:
                    out.append(found)
        return out
