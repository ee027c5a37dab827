"""Run an approved step with its file writes captured, and read back what it really changed.

Anna does not predict what a step writes: it runs the step over overlays of every real,
writable file system (:mod:`annad.capture.helper`), with upper layers on the state
disk, and reads those upper layers back as a change set (:class:`Change`): created,
modified and deleted paths, directories replaced whole, symlinks, modes, owners, xattrs and
special files — whichever program made them (``f=open; f(...)``, ``patch``, ``split``,
``xz``, a nameref, ``~+``, a symlink planted under /tmp: the kernel resolved them, the
upper layer holds the result at its real path). Nothing of it is on the real tree yet:
:mod:`annad.capture.judge` decides, :mod:`annad.capture.commit` applies.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from annad.capture.bounds import Tally
from annad.capture.unprivileged import recent_user_plan
from annad.confine import capture_filter, capture_walls
from annad.confine.capture_run import run_capture
from annad.confine.stepenv import step_environment, sudo_shims
from annad.stepspec import Bounds

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Iterator

    from annad.confine.runner import RunResult
    from annad.stepspec import StepSpec, Who

LIVE_TREES = capture_walls.LIVE_TREES
"""Kernel, device and runtime trees: the real ones (read-only), never overlaid."""
VIRTUAL = frozenset({
    "proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "securityfs", "debugfs",
    "tracefs", "pstore", "bpf", "mqueue", "hugetlbfs", "configfs", "fusectl", "autofs",
    "binfmt_misc", "efivarfs", "nsfs", "rpc_pipefs", "squashfs", "iso9660",
    "nfs", "nfs4", "cifs", "smb3", "9p", "fuse"})
"""File systems that are not a local disk one can overlay and commit to (kernel views,
read-only images, network shares, FUSE): bound read-only instead, so a write fails. An
overlayfs (a container booted on an image) is a lower layer like any disk: overlayfs stacks
on it; only an *upper* layer cannot be on one (:data:`UPPER_UNFIT`)."""
_UNSAFE = frozenset(",:\\\n\0=")
"""Characters an overlay option cannot carry."""
LAYERS = "layers"
"""In a step's backup dir: the upper layers (``N/u``) and work dirs (``N/w``)."""
ROOT = "root"
"""In a step's layers dir: the empty directory the capture's root is assembled on (inside
the layers, so one rename throws the whole capture away)."""
PLAN_FILE = "capture.json"
"""In a step's backup dir: which overlay index is which mount point."""

Kind = Literal["file", "dir", "symlink", "delete", "fifo", "device", "socket"]


@dataclass(frozen=True, slots=True)
class Change:
    """One observed change at a real path."""

    path: str
    """The real, absolute path (mount point + path in the upper layer)."""
    kind: Kind
    """What the step left there; ``delete``: nothing (a whiteout)."""
    source: str = ""
    """The entry in the upper layer holding it (empty for ``delete``)."""
    opaque: bool = False
    """A directory that replaced what was there whole (lower contents gone)."""
    mode: int = 0
    uid: int = -1
    gid: int = -1
    size: int = 0
    link: str | None = None
    """A symlink's target."""
    xattrs: dict[str, bytes] = field(default_factory=dict)
    """Extended attributes (overlay's own removed)."""
    mtime_ns: int = 0


@dataclass(slots=True)
class Capture:
    """A captured run: its result and where its upper layers are."""

    result: RunResult
    layers: dict[int, str]
    """Overlay index → real mount point."""
    directory: Path


def _unescape(raw: str) -> str:
    data = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]),
                  raw.encode("utf-8", "surrogateescape"))
    return os.fsdecode(data)


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def mount_plan(mountinfo: str, avoid: str) -> tuple[list[list[object]], dict[int, str]]:
    """The helper's mount plan for this machine's mounts, and its overlays by index.

    ``avoid``: the capture directory (a mount below it is never reproduced)."""
    mounts: dict[str, tuple[str, bool]] = {}
    for line in mountinfo.splitlines():
        fields = line.split(" ")
        if "-" not in fields[6:]:
            continue
        sep = fields.index("-", 6)
        point = _unescape(fields[4])
        mounts.pop(point, None)  # a later mount at the same point is the one seen
        mounts[point] = (fields[sep + 1], "ro" in fields[5].split(","))
    plan: list[list[object]] = []
    layers: dict[int, str] = {}
    covered: list[str] = []
    for point in sorted(mounts, key=lambda p: (p.count("/") if p != "/" else 0, p)):
        fstype, read_only = mounts[point]
        if any(_inside(point, c) for c in covered) or _inside(point, avoid):
            continue
        live = next((t for t in LIVE_TREES if _inside(point, t)), None)
        if live is not None:
            covered.append(live)
            plan.append(["dev", live] if live == "/dev" else ["bind", live])
            continue
        base = fstype.split(".", 1)[0]
        if read_only or base in VIRTUAL or set(point) & _UNSAFE:
            plan.append(["bind", point])
            if base in VIRTUAL or set(point) & _UNSAFE:
                # a read-only disk is bound read-only, but a writable disk mounted below it
                # (a read-only / with a writable /home) is still overlaid (issue 36.9)
                covered.append(point)
            continue
        layers[len(layers)] = point
        plan.append(["overlay", point, len(layers) - 1])
    if not plan or plan[0][:2] != ["overlay", "/"]:
        plan.insert(0, ["bind", "/"])
    if not any(op[0] == "dev" for op in plan):
        plan.append(["dev", "/dev"])
    return plan, layers


UPPER_UNFIT = frozenset({"overlay", "fuse", "nfs", "nfs4", "cifs", "smb3", "9p", "squashfs",
                         "iso9660", "proc", "sysfs"})
"""File systems an overlay's upper layer cannot be on (overlayfs cannot stack its upper on
another overlay; network and FUSE file systems lack the xattrs and whiteouts it needs)."""


def upper_problem(directory: Path, mountinfo: str) -> str | None:
    """Why the upper layers cannot be in ``directory`` (the step's backup dir), or None."""
    real, best, fstype = os.path.realpath(directory), "", ""
    for line in mountinfo.splitlines():
        fields = line.split(" ")
        if "-" not in fields[6:]:
            continue
        point = _unescape(fields[4])
        if _inside(real, point) and len(point) >= len(best):
            best, fstype = point, fields[fields.index("-", 6) + 1]
    if fstype.split(".", 1)[0] in UPPER_UNFIT:
        return (f"Anna's state directory is on {fstype} ({best}), which cannot hold the "
                "layers that capture a step's writes; put the state directory on a local "
                "disk (ANNAD_STATE_DIR, or a volume mounted there)")
    return None


def run_step(step: StepSpec, who: Who, directory: Path, *, timeout: float, max_output: int,
             on_output: Callable[[str], None] | None, cancel: threading.Event | None,
             on_spawn: Callable[[int], None] | None, python: str | None) -> Capture:
    """Run ``step`` captured; its upper layers end up in ``directory``. Raises
    :class:`annad.confine.filters.FilterUnavailable` when the capture's seccomp filter cannot
    be built (the step must then not run)."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    (directory / LAYERS / ROOT).mkdir(mode=0o700, parents=True, exist_ok=True)
    plan, layers = mount_plan(Path("/proc/self/mountinfo").read_text(), str(directory))
    userns = os.geteuid() != 0
    if userns:  # a per-user daemon: overlays in a user namespace of its own
        plan, layers = recent_user_plan(plan, who.home)
    (directory / PLAN_FILE).write_text(json.dumps({str(k): v for k, v in layers.items()}))
    user = step.scope == "user"
    if user:
        env = step_environment(who.identity(), who.session)
    else:
        env = step_environment(None, who.session, home=who.home)
        env.update(sudo_shims())
    cwd = who.home if user else "/"
    spec = {"root": str(directory / LAYERS / ROOT), "layers": str(directory / LAYERS), "plan": plan,
            "uid": who.uid if user else 0, "gid": who.gid if user else 0,
            "groups": list(who.groups) if user else [], "env": env,
            "cwd": cwd if Path(cwd).is_dir() else "/", "command": step.command,
            "userns": userns, "seccomp": capture_filter.program().hex()}
    result = run_capture(json.dumps(spec), timeout=timeout, max_output=max_output,
                         on_output=on_output, cancel=cancel, on_spawn=on_spawn, python=python)
    return Capture(result=result, layers=layers, directory=directory)


def layers_of(directory: Path) -> dict[int, str]:
    """The overlays a captured step used (from its plan file), for recovery."""
    try:
        raw = json.loads((directory / PLAN_FILE).read_text())
        return {int(k): str(v) for k, v in raw.items()}
    except (OSError, ValueError, AttributeError):
        return {}


def markers() -> str:
    """The prefix of overlayfs's own xattrs in this daemon's upper layers: ``user.overlay.``
    in the user namespace of a per-user daemon (``userxattr``), ``trusted.overlay.`` for
    root (which keeps a file's own ``user.overlay.*`` as the file's)."""
    return "trusted.overlay." if os.geteuid() == 0 else "user.overlay."


def _xattrs(path: str) -> dict[str, bytes]:
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return {}
    out = {}
    for name in names:
        if name.startswith(markers()):
            continue
        try:
            out[name] = os.getxattr(path, name, follow_symlinks=False)
        except OSError:
            continue
    return out


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _same_file(upper: str, real: str, up: os.stat_result, low: os.stat_result) -> bool:
    """A file copied up but left as it was (opened for writing, nothing written)."""
    if (up.st_size, up.st_mode, up.st_uid, up.st_gid, up.st_mtime_ns) != \
            (low.st_size, low.st_mode, low.st_uid, low.st_gid, low.st_mtime_ns):
        return False
    if _xattrs(upper) != _xattrs(real):
        return False
    with Path(upper).open("rb") as a, Path(real).open("rb") as b:
        while True:
            one, two = a.read(1 << 20), b.read(1 << 20)
            if one != two:
                return False
            if not one:
                return True


def _change(upper: str, real: str, info: os.stat_result, opaque: bool) -> Change | None:
    mode = info.st_mode
    common = {"path": real, "source": upper, "mode": stat.S_IMODE(mode), "uid": info.st_uid,
              "gid": info.st_gid, "mtime_ns": info.st_mtime_ns}
    low = _lstat(real)
    if stat.S_ISCHR(mode) and info.st_rdev == 0:
        return None if low is None else Change(path=real, kind="delete")
    if stat.S_ISDIR(mode):
        if not opaque and low is not None and stat.S_ISDIR(low.st_mode) and \
                (low.st_mode, low.st_uid, low.st_gid) == (mode, info.st_uid, info.st_gid) and \
                _xattrs(upper) == _xattrs(real):
            return None  # a parent copied up on the way to a change below it
        return Change(kind="dir", opaque=opaque, xattrs=_xattrs(upper), **common)  # type: ignore[arg-type]
    if stat.S_ISLNK(mode):
        link = str(Path(upper).readlink())
        if low is not None and stat.S_ISLNK(low.st_mode) and \
                str(Path(real).readlink()) == link and \
                (low.st_uid, low.st_gid) == (info.st_uid, info.st_gid):
            return None
        return Change(kind="symlink", link=link, **common)  # type: ignore[arg-type]
    if stat.S_ISREG(mode):
        if low is not None and stat.S_ISREG(low.st_mode) and _same_file(upper, real, info, low):
            return None
        return Change(kind="file", size=info.st_size, xattrs=_xattrs(upper), **common)  # type: ignore[arg-type]
    kind: Kind = "fifo" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device"
    return Change(kind=kind, **common)  # type: ignore[arg-type]


def _walk(top: str, tally: Tally) -> Iterator[tuple[str, str, os.stat_result, bool]]:
    """Each entry of the upper layer ``top``, parents first: (upper path, path relative to
    ``top``, its lstat, whether it replaced what was there whole). Counted by ``tally``
    before it is yielded, so a layer past the limits stops the walk holding no more than
    them (no recursion: a deep chain cannot exhaust the interpreter's stack)."""
    opaque_name = markers() + "opaque"  # a directory whose lower contents the step removed
    stack: list[tuple[str, str, int, bool]] = [(top, ".", 0, False)]
    while stack:
        here, rel_dir, depth, replaced = stack.pop()
        names: list[str] = []
        with os.scandir(here) as entries:
            for entry in entries:  # counted as they come: a directory of 10^6 names stops
                tally.entry(entry.path, depth + 1)
                names.append(entry.name)
        below = []
        for name in sorted(names):
            upper = posixpath.join(here, name)
            info = os.lstat(upper)
            if stat.S_ISREG(info.st_mode):
                tally.sized(info.st_size)
            opaque = False
            if stat.S_ISDIR(info.st_mode):
                try:
                    opaque = replaced or \
                        os.getxattr(upper, opaque_name, follow_symlinks=False) == b"y"
                except OSError:
                    opaque = False
                below.append((upper, posixpath.normpath(posixpath.join(rel_dir, name)),
                              depth + 1, opaque))
            yield upper, posixpath.normpath(posixpath.join(rel_dir, name)), info, opaque
        stack.extend(reversed(below))


def read_back(directory: Path, layers: dict[int, str],
              bounds: Bounds | None = None) -> list[Change]:
    """The change set in the upper layers, parents before children. Raises
    :class:`annad.capture.bounds.TooMuch` when the layers hold more than
    ``bounds`` allow (before anything of them is compared with the real tree)."""
    tally = Tally(bounds or Bounds())
    found = []
    for index, point in sorted(layers.items()):
        top = str(directory / LAYERS / str(index) / "u")
        if Path(top).is_dir():
            found += [(upper, posixpath.join(point, rel), info, opaque)
                      for upper, rel, info, opaque in _walk(top, tally)]
    out = [change for upper, real, info, opaque in found
           if (change := _change(upper, real, info, opaque)) is not None]
    out.sort(key=lambda c: c.path.split("/"))
    return out
