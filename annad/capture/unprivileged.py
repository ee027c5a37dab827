"""The capture of a per-user daemon, which is not root: overlays in a user namespace.

An unprivileged process may mount overlays in a user namespace of its own (Linux ≥ 5.11),
with the daemon's uid and gid mapped to themselves and nothing else mapped. Two limits of
that mode shape the mount plan (:func:`user_plan`):

- overlayfs refuses a lower layer that holds other mounts (they are locked to the namespace
  that made them): such a mount point is bound read-only and each of its directories that
  holds none is overlaid instead (a write under a directory holding a mount fails, EROFS),
  if an overlay there could capture anything at all (:func:`_writable`: every overlay costs
  its mount and its read-back);
- a directory is copied up with its owner, and an owner the namespace does not map (root,
  another user, a group that is not the daemon's own) cannot be given in the namespace, so a
  write below a directory of someone else's fails (EOVERFLOW) unless an overlay starts below
  it. The trees an owner's step writes to — the home, ``/tmp``, ``/var/tmp`` — each get an
  overlay of their own (:data:`WRITABLE`): their files and directories are the daemon's own.

Overlayfs keeps its markers there in ``user.overlay.*`` xattrs
(:func:`annad.capture.layers.markers`).
What the step changed is committed by the daemon itself, so with its own uid: the kernel
refuses on the real tree whatever that uid may not do there, whatever the capture showed.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

WRITABLE = ("/tmp", "/var/tmp")
"""Trees besides the home that an owner's step writes to: overlaid on their own."""
REUSE_S = 5.0
"""How long :func:`recent_user_plan` reuses a plan made for the same mounts and home."""
_RECENT: dict[str, tuple[float, str]] = {}


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _has_mounts_below(point: str, points: set[str]) -> bool:
    return any(p != point and _inside(p, point) for p in points)


def _children(point: str, device: int) -> list[str]:
    """Directories directly in ``point`` on its own file system (no symlink followed)."""
    try:
        entries = list(os.scandir(point))
    except OSError:
        return []
    out = []
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False) and \
                    entry.stat(follow_symlinks=False).st_dev == device:
                out.append(entry.path)
        except OSError:
            continue
    return sorted(out)


def _writable(directory: str) -> bool:
    """Whether an overlay at ``directory`` could capture anything: this uid may write in it,
    or owns something directly in it (deeper, a directory of someone else's could not be
    copied up anyway). Otherwise it stays read-only, and a write fails as it would live."""
    if os.access(directory, os.W_OK):
        return True
    uid, groups = os.getuid(), {os.getgid(), *os.getgroups()}
    try:
        with os.scandir(directory) as entries:
            return any(e.stat(follow_symlinks=False).st_uid == uid and
                       e.stat(follow_symlinks=False).st_gid in groups for e in entries)
    except OSError:
        return False


def _unreachable(point: str) -> bool:
    """Whether this uid cannot reach ``point`` (a directory on its path it may not search:
    a mount in another user's 0700 home, under root's 0700 scratch directory). The step,
    as this uid, cannot reach it either, so the capture leaves it out: mounting an overlay
    there fails (EACCES) and would stop every captured step."""
    try:
        os.stat(point)  # noqa: PTH116
    except PermissionError:
        return True
    except OSError:
        return False  # gone since the mount table was read: the helper copes
    return False


def user_plan(plan: list[list[object]], home: str
              ) -> tuple[list[list[object]], dict[int, str]]:
    """The plan of :func:`annad.capture.layers.mount_plan` made for a user namespace (see
    the module text), and its overlays by index."""
    points = {str(op[1]) for op in plan}
    overlays: list[str] = []

    def split(point: str) -> list[list[object]]:
        """An overlay at ``point``, or a read-only bind and its directories overlaid."""
        if not _has_mounts_below(point, points):
            overlays.append(point)
            return [["overlay", point]]
        try:
            device = os.stat(point).st_dev  # noqa: PTH116
        except OSError:
            return [["bind", point]]
        out: list[list[object]] = [["bind", point]]
        for child in _children(point, device):
            if child not in points and (_has_mounts_below(child, points) or _writable(child)):
                out += split(child)
        return out

    staged: list[list[object]] = []
    # the points of the writable local file systems (overlaid, or split below)
    local = {str(op[1]) for op in plan if op[0] == "overlay"}
    for op in plan:
        if op[0] != "dev" and op[1] != "/" and _unreachable(str(op[1])):
            continue
        staged += split(str(op[1])) if op[0] == "overlay" else [op]
    extra = [p for p in (home, *WRITABLE) if p.startswith("/") and Path(p).is_dir()]
    # at its real place (a home under a link, /home → /var/home): the commit walks real paths
    for path in sorted({os.path.realpath(p) for p in extra}, key=lambda p: p.count("/")):
        mount = max((p for p in points if _inside(path, p)), key=len, default="")
        if mount not in local or path in overlays or _has_mounts_below(path, points):
            continue  # read-only or virtual (/run: a write fails), an overlay already, locked
        overlays.append(path)
        staged.append(["overlay", path])
    # parents before children, as mount_plan orders them: an overlay on top of its parent's
    staged.sort(key=lambda op: 0 if op[1] == "/" and op[0] == "bind" else
                str(op[1]).rstrip("/").count("/") + 1)
    index = {point: i for i, point in enumerate(overlays)}
    out = [[op[0], op[1], index[str(op[1])]] if op[0] == "overlay" else op for op in staged]
    return out, dict(enumerate(overlays))


def recent_user_plan(plan: list[list[object]], home: str
                     ) -> tuple[list[list[object]], dict[int, str]]:
    """:func:`user_plan`, reused for :data:`REUSE_S` seconds while the mount plan and the
    home are the same (the steps of one plan follow each other; making it scans the
    top-level directories, milliseconds per step). A mount added or gone makes a new one at
    once. What a reused plan can miss is only a change of permissions in those seconds, and
    that cannot let a write through: a directory newly writable and not overlaid stays
    read-only (the write fails), one no longer writable but overlaid is committed by the
    daemon with its own uid, which the kernel refuses."""
    key = json.dumps([plan, home])
    now = time.monotonic()
    hit = _RECENT.get(key)
    if hit is None or now - hit[0] > REUSE_S:
        made, layers = user_plan(plan, home)
        hit = (now, json.dumps([made, {str(k): v for k, v in layers.items()}]))
        _RECENT.clear()
        _RECENT[key] = hit
    made, layers = json.loads(hit[1])
    return made, {int(k): str(v) for k, v in layers.items()}
