"""An observed change against the preview the person saw: only that effect may land.

When a step had a complete file preview (journalled with the plan at submit, hash-chained:
:func:`annad.preview.engine.previewed_files`), every change its capture observes
(:mod:`annad.capture.layers`) must be one the preview showed, exactly:

- **the path**: a change at a path the preview did not show is refused, whatever made it;
- **what is there after**: the same kind (file, directory, symlink, other); a file's whole
  content (SHA-256), mode and owner; a link's target; a directory's mode and owner; a
  deletion shown as a deletion. A directory the step replaced whole (``rm -r d; mkdir d``)
  is matched through what it lost: each real entry gone from it must be shown deleted.

Less than the preview showed may land (a path already as the step leaves it is no change
at execution). Content is pinned byte for byte unless the preview marked it ``varying``:
the preview runs a step that changed files twice, and a file whose content differed
between the two runs depends on the time or on chance (``date +%N > f``, ``$RANDOM``, a
database's stat cache) — the person is shown that, and for such a file only its path,
kind, mode and owner are pinned. A dependence the two runs did not reveal (``date +%F``
across midnight) is refused at execution: a refusal lands nothing, and a new plan
previews again. A new entry whose *name* was chosen at run time (``f.bak-$(date +%s)``)
stands for the one created entry of its kind, named alike but for its digits, the preview
showed in the same directory and the run did not make, and is held to that entry's
content, mode, owner and link. Extended attributes and timestamps are not compared.
A refusal names the path and what differs (kind, mode, owner, link target, sizes), never the
content: the step may have copied a secret there, and the refusal reaches the caller, the
journal and the model.
With no complete preview (none made, a step that failed in it, more changes than it read
back) the observed change is judged by the rules alone (:mod:`annad.capture.judge`).
"""

from __future__ import annotations

import grp
import hashlib
import os
import pwd
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from annad.backups.manifest import escape_path

if TYPE_CHECKING:
    from collections.abc import Mapping

    from anna_common.protocol.preview import FileChange
    from annad.capture.layers import Change

_KIND = {"file": "file", "dir": "dir", "symlink": "symlink", "fifo": "other",
         "device": "other", "socket": "other"}


def key(path: str) -> str:
    """The exact text form of a real path, as the preview records it."""
    return escape_path(path)


def shown_by_key(changes: list[FileChange]) -> dict[str, FileChange]:
    """A step's previewed changes by exact path."""
    return {change.key or change.path: change for change in changes}


def _digest(path: str) -> str | None:
    try:
        with Path(path).open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None


def observed(change: Change) -> str:
    """What a refusal says of an observed file: its size, never its content (the step may
    have copied a secret there, and the refusal reaches the caller, the journal and the
    model)."""
    return f" (observed {change.size} bytes; the content is not shown)" \
        if change.kind == "file" else ""


def _lost(change: Change, shown: Mapping[str, FileChange]) -> str | None:
    """A directory replaced whole: each real entry it lost must be shown deleted."""
    try:
        real = set(os.listdir(change.path))  # noqa: PTH208
        kept = set(os.listdir(change.source))  # noqa: PTH208
    except OSError:
        return None
    for name in sorted(real - kept):
        child = os.path.join(change.path, name)  # noqa: PTH118
        seen = shown.get(key(child))
        if seen is None or seen.change != "deleted":
            return f"it deletes {key(child)}, which the preview did not show deleted"
    return None


def _same_dir(change: Change) -> bool:
    try:
        info = os.lstat(change.path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and \
        (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid) == \
        (change.mode, change.uid, change.gid)


def _named_at_run_time(change: Change, shown: Mapping[str, FileChange],
                       names: NamePairing) -> FileChange | None:
    """The one created entry the preview showed that ``change`` is, under a name chosen at
    run time (``cp f f.bak-$(date +%s)``: the preview and the run fall in different
    seconds): ``change`` made a new entry in the same directory, of the same kind, named
    alike but for its digits, where the preview showed one the run did not make. Each shown
    entry stands for one observed entry only; the rest of the comparison (content, mode,
    owner, link) is then as for its own path."""
    if change.kind in ("delete", "dir") or os.path.lexists(change.path):
        return None
    observed = Path(change.path)
    for name, seen in shown.items():
        if name in names.observed or name in names.claimed or seen.change != "created" \
                or seen.kind_after != _KIND[change.kind]:
            continue
        if Path(seen.path).parent == observed.parent and \
                _digits_out(Path(seen.path).name) == _digits_out(observed.name):
            names.claimed.add(name)
            return seen
    return None


def _digits_out(name: str) -> str:
    """A name with each run of digits as ``#``: time stamps, PIDs and ``$RANDOM`` numbers
    are what a run-time name varies in; two names alike but for them are the same name."""
    return re.sub(r"[0-9]+", "#", name)


class NamePairing:
    """Per step: the exact paths it changed, and the shown entries already paired with an
    observed one under another name (:func:`_named_at_run_time`)."""

    def __init__(self, observed: set[str]) -> None:
        self.observed = observed
        self.claimed: set[str] = set()


def refusal(change: Change, shown: Mapping[str, FileChange], *, owner: int | None,
            names: NamePairing | None = None) -> str | None:
    """Why ``change`` is not what the preview showed (None: it is)."""
    if change.kind == "dir" and change.opaque:
        lost = _lost(change, shown)
        if lost is not None or _same_dir(change):
            return lost  # the directory itself stays as it was: only its entries changed
    seen = shown.get(key(change.path))
    if seen is None and names is not None:
        seen = _named_at_run_time(change, shown, names)
    if seen is None:
        return "the preview did not show a change there" + observed(change)
    if change.kind == "delete":
        return None if seen.change == "deleted" else \
            f"the preview showed it {seen.change}, the step deleted it"
    if seen.change == "deleted" or seen.kind_after != _KIND[change.kind]:
        return f"the preview showed {seen.kind_after or 'nothing'} there, the step made a " \
            f"{_KIND[change.kind]}"
    if change.kind != "symlink" and seen.mode_after != f"{change.mode:04o}":
        return f"the preview showed mode {seen.mode_after}, the step left {change.mode:04o}"
    if seen.owner_after != owner_name(change.uid, change.gid):
        return f"the preview showed owner {seen.owner_after}, the step left " \
            f"{owner_name(change.uid, change.gid)}"
    if change.kind == "symlink" and seen.link_after != key(change.link or ""):
        return f"the preview showed a link to {seen.link_after}, the step linked to " \
            f"{key(change.link or '')}"
    if change.kind == "file" and not seen.varying and seen.sha256 != _digest(change.source):
        return f"the content is not what the preview showed ({seen.size_after} bytes shown, " \
            f"{change.size} written; the content is not shown)"
    return None

def owner_name(uid: int, gid: int) -> str:
    """``user:group`` as a preview shows an owner (numbers where no name is known), and so
    the words an observed change's owner is compared in (:mod:`annad.preview.diff`)."""
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = str(gid)
    return f"{user}:{group}"
