"""Turn the overlay's upper-layer entries into file changes with unified diffs.

Each step's entries are compared with the state before that step: the previous step's
result where an earlier step already touched the path, the real file otherwise (read by
the daemon, never written). Text gets a unified diff, capped per file and per plan with
the number of lines left out; binary or oversized files get sizes only; metadata changes
(mode, owner) are reported on their own.
"""

from __future__ import annotations

import difflib
import grp
import os
import posixpath
import pwd
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anna_common.preview import FileChange
from annad.manifest import printable
from annad.preview.overlay import content

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


def real_state(path: str, *, content: bool = True) -> State:
    """The real tree's state of ``path`` (lstat; content read with O_NOFOLLOW, capped;
    not at all without ``content``)."""
    try:
        info = os.lstat(path)
    except OSError:
        return State()
    meta = (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid, info.st_size)
    if stat.S_ISLNK(info.st_mode):
        return State("l", *meta, link=str(Path(path).readlink()))
    if stat.S_ISDIR(info.st_mode):
        return State("d", *meta)
    if not stat.S_ISREG(info.st_mode):
        return State("x", *meta)
    data = None
    if content and info.st_size <= READ_CAP:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                data = os.read(fd, READ_CAP + 1)[:READ_CAP]
            finally:
                os.close(fd)
        except OSError:
            data = None
    return State("f", *meta, data=data)


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
        return State("f", *meta, data=None if entry.get("truncated") else content(entry))
    if kind == "l":
        return State("l", *meta, link=str(entry.get("link", "")))
    return State(kind if kind in ("d", "x") else "x", *meta)


def _owner(uid: int, gid: int) -> str:
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = str(gid)
    return f"{user}:{group}"


def _text(data: bytes | None) -> list[str] | None:
    if data is None or b"\0" in data:
        return None
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None


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


def change(path: str, before: State, after: State, budget: DiffBudget) -> FileChange | None:
    """The change from ``before`` to ``after``, or None when nothing visible changed.
    Names that are not UTF-8 are shown with ``\\xHH`` escapes (the journal and JSON hold text)."""
    if before == after or (before.kind == after.kind == "d" and
                           (before.mode, before.uid, before.gid) ==
                           (after.mode, after.uid, after.gid)):
        return None
    what = "created" if before.kind == "absent" else "deleted" if after.kind == "absent" \
        else "modified"
    path = printable(path)
    diff, more = _diff(path, before, after, budget)
    present = [s if s.kind != "absent" else None for s in (before, after)]
    return FileChange(
        path=path, change=what, diff=diff, more_lines=more,
        size_before=present[0].size if present[0] and present[0].kind == "f" else None,
        size_after=present[1].size if present[1] and present[1].kind == "f" else None,
        mode_before=f"{before.mode:04o}" if present[0] else None,
        mode_after=f"{after.mode:04o}" if present[1] else None,
        owner_before=_owner(before.uid, before.gid) if present[0] else None,
        owner_after=_owner(after.uid, after.gid) if present[1] else None)


class Tracker:
    """The state of every touched path across the steps of one preview."""

    def __init__(self, overlays: list[str]) -> None:
        self.overlays = overlays
        self.states: dict[str, State] = {}
        self.budget = DiffBudget()

    def path_of(self, entry: dict[str, Any]) -> str:
        """The real path an entry stands for."""
        return posixpath.normpath(posixpath.join(self.overlays[int(entry["overlay"])],
                                                 str(entry["rel"])))

    def before(self, path: str) -> State:
        """The state before the current step."""
        if path not in self.states:
            # once the plan's diff lines are spent, sizes and modes are all that is shown:
            # a step deleting thousands of files does not make the daemon read them all
            self.states[path] = real_state(path, content=self.budget.left > 0)
        return self.states[path]

    def step(self, entries: list[dict[str, Any]]) -> list[FileChange]:
        """The changes of one step, in path order; the states move on."""
        changes: list[FileChange] = []
        for entry in sorted(entries, key=self.path_of):
            path = self.path_of(entry)
            before = self.before(path)
            # gone from the upper layer: the path shows the real tree again
            after = real_state(path, content=self.budget.left > 0) \
                if entry.get("type") == "gone" else entry_state(entry, State())
            self.states[path] = after
            found = change(path, before, after, self.budget)
            if found is not None:
                changes.append(found)
            if entry.get("opaque") and before.kind == "d":
                changes += self._emptied(path, entries)
        return changes

    def _emptied(self, path: str, entries: list[dict[str, Any]]) -> list[FileChange]:
        """An opaque directory replaced a real one: its real entries are gone."""
        kept = {self.path_of(e) for e in entries}
        try:
            names = sorted(child.name for child in Path(path).iterdir())
        except OSError:
            return []
        out = []
        for name in names:
            child = posixpath.join(path, name)
            if child not in kept and self.before(child).kind != "absent":
                found = change(child, self.before(child), State(), self.budget)
                self.states[child] = State()
                if found is not None:
                    out.append(found)
        return out
