"""The overlay tree: every real, writable file system under an overlay, as a preview sees it.

The preview's helper (:mod:`annad.preview.overlay_helper`) builds it; the capture's helper
(:mod:`annad.capture.helper`) mounts its overlays with the same options (:data:`OPTIONS`,
:data:`USERNS_OPTIONS`), so it lives with the capture and the preview uses it from here.
Imported by both helpers (``python -I -S``: standard library and :mod:`annad.confine.mounts`
only). The daemon decided the mount plan, the same one an approved step's capture uses
(:func:`annad.capture.layers.mount_plan`): an overlay for each real, writable file system, a
read-only bind for the rest. Here, in the preview helper's new mount namespace:

1. a size-limited tmpfs holds the new root and every overlay's upper and work directory;
2. the new root is assembled on it: overlays whose lower layer is the real file system,
   read-only binds of ``/proc`` and ``/sys`` (the machine's: the PID and network namespaces
   are kept, so ``ps`` and ``ss`` tell the truth), a minimal ``/dev`` (no disk, no memory
   device) and an empty ``/run`` (no bus, no socket);
3. ``pivot_root`` into it and the old root detached: the tmpfs is reachable only through the
   descriptor returned (the helper's walker reads the upper layers through it), so no step
   can write its own "preview" into an upper layer, and no path reaches the real tree.

A write anywhere on a local disk lands in an upper layer and is shown; one on a read-only
or virtual file system fails as it would (the capture binds the same ones read-only).
"""

# ruff: noqa: PTH101, PTH102, PTH103, PTH110, PTH112, PTH211 - no pathlib: start-up time
from __future__ import annotations

import contextlib
import os

from annad.confine import mounts

SCRATCH = "/dev/shm"
"""Where the tmpfs of the root and upper layers is mounted while the tree is built."""
ROOT = SCRATCH + "/root"
OPTIONS = "redirect_dir=off,metacopy=off,index=off,xino=off"
"""A renamed directory is copied, never redirected; a chmod copies the data too: the upper
layer then holds complete files and plain directories only."""
USERNS_OPTIONS = "metacopy=off,index=off,xino=off,userxattr"
"""The same inside a user namespace (a per-user daemon): overlayfs keeps its markers in
user.* xattrs there, which rules redirects out by itself (redirect_dir=off is refused)."""
READ_ONLY = mounts.MOUNT_ATTR_RDONLY | mounts.MOUNT_ATTR_NOSUID | mounts.MOUNT_ATTR_NODEV


def _overlay(index: int, point: str, userns: bool) -> None:
    upper, work = f"{SCRATCH}/{index}/u", f"{SCRATCH}/{index}/w"
    os.makedirs(upper)
    os.makedirs(work)
    info = mounts.overlay_point(point, ROOT + point)
    if info is None:
        return  # gone since the mount table was read: the parent's overlay shows its path
    # the merged root shows the upper's owner (a user namespace cannot give it an unmapped
    # one: it stays the owner's there)
    with contextlib.suppress(OSError):
        os.chown(upper, info.st_uid, info.st_gid)
    os.chmod(upper, info.st_mode & 0o7777)
    mounts.mount("anna-overlay", ROOT + point, "overlay", mounts.MS_NOSUID | mounts.MS_NODEV,
                 f"lowerdir={point},upperdir={upper},workdir={work},"
                 f"{USERNS_OPTIONS if userns else OPTIONS}")


def _dev() -> None:
    """The confinement's device nodes only, read-only, with a throw-away /dev/shm."""
    target = ROOT + "/dev"
    mounts.mount("anna-dev", target, "tmpfs", mounts.MS_NOSUID | mounts.MS_NOEXEC,
                 "mode=0755,size=64k")
    for name in mounts.DEVICES:
        if os.path.exists(f"/dev/{name}"):
            os.close(os.open(f"{target}/{name}", os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o666))
            mounts.mount(f"/dev/{name}", f"{target}/{name}", None, mounts.MS_BIND, None)
    for name, link in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                       ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(link, f"{target}/{name}")
    os.mkdir(f"{target}/pts", 0o755)
    os.mkdir(f"{target}/shm", 0o1777)
    mounts.mount("anna-shm", f"{target}/shm", "tmpfs", mounts.MS_NOSUID | mounts.MS_NODEV,
                 "mode=1777,size=16m")
    mounts.setattr_(target, mounts.MOUNT_ATTR_RDONLY | mounts.MOUNT_ATTR_NOSUID |
                    mounts.MOUNT_ATTR_NOEXEC, recursive=False)


def _run() -> None:
    """/run as an empty read-only tmpfs holding only ``sshd``, the directory ``sshd -t``
    insists on: nothing of the host's /run (no bus, no socket) is visible."""
    mounts.mount("anna-run", ROOT + "/run", "tmpfs", mounts.MS_NOSUID | mounts.MS_NODEV |
                 mounts.MS_NOEXEC, "mode=0755,size=16k")
    os.mkdir(ROOT + "/run/sshd", 0o755)
    mounts.setattr_(ROOT + "/run", mounts.SEALED, recursive=False)


def assemble(plan: list[list[object]], size: int, userns: bool) -> int:
    """Build the tree of the module text and enter it; a descriptor of the tmpfs."""
    mounts.mount("none", "/", None, mounts.MS_REC | mounts.MS_PRIVATE, None)
    mounts.mount("anna-preview", SCRATCH, "tmpfs", mounts.MS_NOSUID | mounts.MS_NODEV,
                 f"mode=0700,size={size},nr_inodes=200k")
    os.mkdir(ROOT, 0o755)
    for op in plan:
        kind, point = str(op[0]), str(op[1])
        if kind == "overlay":
            _overlay(int(str(op[2])), point, userns)
        elif kind == "dev":
            _dev()
        elif point == "/run":
            _run()
        elif os.path.exists(ROOT + point):  # a mount point the new tree does not show
            mounts.mount(point, ROOT + point, None, mounts.MS_BIND | mounts.MS_REC, None)
            mounts.setattr_(ROOT + point, READ_ONLY, recursive=True)
    if not any(str(op[1]) == "/run" for op in plan) and os.path.isdir(ROOT + "/run"):
        _run()  # a /run on the root file system: hidden all the same
    fd = os.open(SCRATCH, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    mounts.pivot_into(ROOT)
    return fd
