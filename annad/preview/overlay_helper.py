"""The preview helper: run a plan's file steps over a throw-away overlay (a script).

Run by :func:`annad.confine.runner.run_overlay` as ``python -I -S overlay_helper.py -- STATUS_FD
REPORT_FD SPEC_JSON``. It builds the view of :mod:`annad.confine.mounts` (new mount, network,
IPC, UTS and PID namespaces: a preview shows effects on files, not the machine; every mount
read-only, nosuid, nodev; a minimal ``/dev``; an empty ``/run``) and then:

1. mounts a size-limited tmpfs, and over each directory the steps write in an overlay whose
   upper and work directories live on that tmpfs (the real directory is the read-only lower
   layer: the kernel copies a file up before changing it, so the real file never changes);
2. unmounts the tmpfs from the tree again (the overlays keep it; only this helper holds a
   descriptor to it), so a step cannot write its own "preview" into the upper layer;
3. runs the steps in order, each as the identity its real run would have — root keeps only
   the file capabilities (chown, dac_override, fowner, fsetid), so ``chown``/``install -o``
   and edits of root's files behave as they will; the owner's steps keep nothing — with
   ``/run`` hidden and the walls of a check (:func:`annad.confine.walls.enclose`: limits,
   no_new_privs, Landlock — writes only beneath its overlays and to ``/dev/null`` — and the
   daemon's seccomp program, which refuses every socket but netlink), and stops at the
   first that fails;
4. after each step walks the upper layers and writes what changed (created, modified and
   deleted entries, capped contents) as one JSON line to REPORT_FD (a memfd of the daemon).

When the helper ends, the namespace and with it the overlays and the tmpfs are gone.
Any failure before the first step is reported as ``E:reason``; nothing falls back.
"""

# ruff: noqa: PTH100, PTH101, PTH102, PTH103, PTH116, PTH118, PTH120 - no pathlib: start-up time
from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from annad.confine import landlock, mounts, walls

BASH = "/bin/bash"
EXIT_REFUSED = 125

MNT_DETACH = 2
SCRATCH = "/dev/shm"
"""Where the tmpfs of the upper layers is mounted while the overlays are built."""
FILE_CAPS = (0, 1, 3, 4)
"""CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID: what a root step keeps."""
OPTIONS = "redirect_dir=off,metacopy=off,index=off,xino=off"
"""A renamed directory is copied, never redirected; a chmod copies the data too: the upper
layer then holds complete files and plain directories only."""
USERNS_OPTIONS = "metacopy=off,index=off,xino=off,userxattr"
"""The same inside a user namespace (a per-user daemon)."""
WHITEOUT = 0


class Step:
    """One command and who runs it."""

    def __init__(self, raw: dict[str, object]) -> None:
        self.command = str(raw["command"])
        self.uid, self.gid = int(str(raw["uid"])), int(str(raw["gid"]))
        self.groups = [int(g) for g in str(raw.get("groups", "")).split(",") if g]
        self.env = {str(k): str(v) for k, v in dict(raw.get("env", {})).items()}  # type: ignore[call-overload]
        self.cwd = str(raw.get("cwd", "/"))
        self.checks = [(str(c["path"]), str(c["command"]))
                       for c in list(raw.get("validate", []))]  # type: ignore[call-overload]


def _mounts(overlays: list[str], size: int, userns: bool) -> int:
    """The tmpfs and the overlays; returns a descriptor of the (detached) tmpfs."""
    mounts.mount("anna-preview", SCRATCH, "tmpfs", mounts.MS_NOSUID | mounts.MS_NODEV,
              f"mode=0700,size={size},nr_inodes=200k")
    for index, directory in enumerate(overlays):
        upper, work = f"{SCRATCH}/{index}/u", f"{SCRATCH}/{index}/w"
        os.makedirs(upper)
        os.makedirs(work)
        info = os.stat(directory)
        # the merged root shows the upper's owner (a user namespace cannot give it an
        # unmapped one: it stays the owner's there)
        with contextlib.suppress(OSError):
            os.chown(upper, info.st_uid, info.st_gid)
        os.chmod(upper, stat.S_IMODE(info.st_mode))
        # in a user namespace overlayfs keeps its markers in user.* xattrs (userxattr), which
        # rules redirects out by itself (and refuses to be told so: redirect_dir=off fails)
        options = USERNS_OPTIONS if userns else OPTIONS
        mounts.mount("anna-overlay", directory, "overlay", mounts.MS_NOSUID | mounts.MS_NODEV,
                  f"lowerdir={directory},upperdir={upper},workdir={work},{options}")
    fd = os.open(SCRATCH, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    mounts.check(mounts.libc.umount2(os.fsencode(SCRATCH), MNT_DETACH),
                 "detach the upper layers")
    return fd


def _drop(step: Step, walled: Walled) -> None:
    """The step's identity and walls: root keeps the file capabilities only, anyone else
    nothing; writes only beneath the overlays; no socket but netlink, for every identity
    (a previewed step was never proven harmless: ``sed`` runs ``e`` commands, ``awk`` has
    system(); a bus, an agent or a root server would act outside the namespace)."""
    keep = FILE_CAPS if step.uid == 0 and not walled.userns else ()
    walls.enclose(uid=step.uid, gid=step.gid, groups=step.groups, userns=walled.userns,
                  limits=walled.limits, program=walled.program,
                  writable_files=mounts.DISCARDING, writable_trees=walled.overlays, keep=keep,
                  required_abi=walled.abi, tasks=walled.tasks.get(step.uid))


class Walled:
    """What every step's walls need: from the spec (the daemon compiled the program)."""

    def __init__(self, spec: dict[str, object], overlays: list[str], steps: list[Step]
                 ) -> None:
        self.userns = bool(spec["userns"])
        # RLIMIT_NPROC counts the uid's tasks machine-wide: count them now, while /proc is
        # still the machine's (the steps' PID namespace shows only their own)
        self.tasks = {step.uid: walls.tasks_of(step.uid) for step in steps if step.uid}
        self.program = bytes.fromhex(str(spec["program"]))
        self.abi = int(str(spec["abi"]))
        raw = dict(spec["walls"])  # type: ignore[call-overload]
        self.limits = walls.Limits(int(raw["memory"]), int(raw["processes"]), int(raw["cpu"]))
        self.overlays = tuple(overlays)


def _run_step(step: Step, walled: Walled, status_fd: int, cap: int) -> tuple[int, bytes]:
    """Fork, drop, exec ``bash -c``; the exit status (negative: a signal) and the tail of
    its output. A background process that keeps the output open does not hold the run:
    reading stops when the step itself has ended."""
    out_r, out_w = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(out_r)
            os.dup2(out_w, 1)
            os.dup2(out_w, 2)
            _drop(step, walled)
            try:
                os.chdir(step.cwd)
            except OSError:
                os.chdir("/")
            os.execve(BASH, [BASH, "--noprofile", "--norc", "-c", step.command],  # noqa: S606
                      step.env)
        except BaseException as exc:
            os.write(status_fd, f"E:{exc}".encode())
            os._exit(EXIT_REFUSED)
    os.close(out_w)
    os.set_blocking(out_r, False)
    tail = b""
    status = None
    while True:
        ready, _, _ = select.select([out_r], [], [], 0.05)
        chunk = b""
        if ready:
            try:
                chunk = os.read(out_r, 65536)
            except BlockingIOError:
                chunk = b""
            tail = (tail + chunk)[-cap:]
        if status is None:
            pid, raw = os.waitpid(child, os.WNOHANG)
            status = raw if pid else None
        if (ready and not chunk) or (status is not None and not ready):
            break
    if status is None:
        _, status = os.waitpid(child, 0)
    os.close(out_r)
    return os.waitstatus_to_exitcode(status), tail


class Walker:
    """What changed in the upper layers since the last walk."""

    def __init__(self, fd: int, overlays: list[str], limits: dict[str, int], userns: bool
                 ) -> None:
        self.fd, self.overlays, self.limits = fd, overlays, limits
        self.opaque = ("user" if userns else "trusted") + ".overlay.opaque"
        self.seen: dict[tuple[int, str], tuple[int, ...]] = {}
        self.budget = limits["total"]

    def entry(self, dir_fd: int, name: str, info: os.stat_result) -> dict[str, object]:
        kind = "f" if stat.S_ISREG(info.st_mode) else "d" if stat.S_ISDIR(info.st_mode) else \
            "l" if stat.S_ISLNK(info.st_mode) else \
            "w" if stat.S_ISCHR(info.st_mode) and info.st_rdev == WHITEOUT else "x"
        out: dict[str, object] = {"type": kind, "mode": stat.S_IMODE(info.st_mode),
                                  "uid": info.st_uid, "gid": info.st_gid,
                                  "size": info.st_size}
        if kind == "l":
            out["link"] = os.readlink(name, dir_fd=dir_fd)
        elif kind == "d":
            try:
                os.getxattr(f"/proc/self/fd/{dir_fd}/{name}", self.opaque)
                out["opaque"] = True
            except OSError:
                out["opaque"] = False
        elif kind == "f":
            cap = min(self.limits["file"], self.budget)
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
            try:
                data = os.read(fd, cap + 1) if cap > 0 else b""
            finally:
                os.close(fd)
            out["truncated"] = len(data) > cap or info.st_size > cap
            data = data[:cap]
            self.budget -= len(data)
            out["data"] = base64.b64encode(data).decode("ascii")
        return out

    def walk(self) -> list[dict[str, object]]:
        """Entries new or changed since the last walk, and those gone."""
        changed: list[dict[str, object]] = []
        now: dict[tuple[int, str], tuple[int, ...]] = {}
        for index in range(len(self.overlays)):
            top = os.open(f"{index}/u", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC,
                          dir_fd=self.fd)
            try:
                for root, dirs, files, dir_fd in os.fwalk(".", dir_fd=top):
                    for name in dirs + files:
                        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                        rel = os.path.normpath(os.path.join(root, name))
                        key = (index, rel)
                        sig = (info.st_ino, info.st_ctime_ns, info.st_mtime_ns, info.st_size,
                               info.st_mode, info.st_uid, info.st_gid)
                        now[key] = sig
                        if self.seen.get(key) != sig and len(changed) < self.limits["entries"]:
                            changed.append({"overlay": index, "rel": rel,
                                            **self.entry(dir_fd, name, info)})
            finally:
                os.close(top)
        changed += [{"overlay": index, "rel": rel, "type": "gone"}
                    for index, rel in self.seen if (index, rel) not in now]
        self.seen = now
        return changed


def _validate(step: Step, walled: Walled, status_fd: int, cap: int
              ) -> list[dict[str, object]]:
    """The step's validators, run after it on the previewed tree (as the step's identity)."""
    out: list[dict[str, object]] = []
    for path, command in step.checks:
        check = Step({"command": command, "uid": step.uid, "gid": step.gid,
                      "groups": ",".join(map(str, step.groups)), "env": step.env,
                      "cwd": "/"})
        code, output = _run_step(check, walled, status_fd, cap)
        out.append({"path": path, "exit": code, "output": output.decode("utf-8", "replace")})
    return out


def _empty_run() -> None:
    """/run as an empty read-only tmpfs holding only ``sshd``, the directory ``sshd -t``
    insists on: nothing of the host's /run (no bus, no socket) is visible."""
    mounts.mount("anna-run", "/run", "tmpfs", mounts.MS_NOSUID | mounts.MS_NODEV |
                 mounts.MS_NOEXEC, "mode=0755,size=16k")
    os.mkdir("/run/sshd", 0o755)
    mounts.setattr_("/run", mounts.SEALED, recursive=False)


def _init(walled: Walled, steps: list[Step], walker: Walker, report_fd: int,
          status_fd: int) -> int:
    """PID 1 of the namespace: /proc, then each step and a walk after it."""
    parent = os.getppid()
    walls.prctl(walls.PR_SET_PDEATHSIG, walls.SIGKILL)
    if os.getppid() != parent:
        return 1
    mounts.mount("proc", "/proc", "proc", mounts.MS_RDONLY | mounts.MS_NOSUID | mounts.MS_NODEV
                 | mounts.MS_NOEXEC, None)
    os.write(status_fd, b"R")
    for index, step in enumerate(steps):
        code, output = _run_step(step, walled, status_fd, walker.limits["output"])
        line = {"step": index, "exit": code, "entries": walker.walk(),
                "output": output.decode("utf-8", "replace"),
                "validators": _validate(step, walled, status_fd,
                                        walker.limits["output"]) if code == 0 else []}
        os.write(report_fd, json.dumps(line).encode() + b"\n")
        if code != 0:
            break
    return 0


def main(argv: list[str]) -> int:
    """Build the overlay confinement ``argv`` describes and run the steps there."""
    try:
        status_fd, report_fd, spec = int(argv[2]), int(argv[3]), json.loads(argv[4])
        steps = [Step(raw) for raw in spec["steps"]]
        overlays = [str(d) for d in spec["overlays"]]
        limits = {k: int(v) for k, v in spec["limits"].items()}
    except (IndexError, ValueError, KeyError, TypeError):
        return EXIT_REFUSED
    os.set_inheritable(status_fd, False)
    os.set_inheritable(report_fd, False)
    try:
        walled = Walled(spec, overlays, steps)
        abi = landlock.abi_version()
        if abi < walled.abi:
            raise landlock.Unavailable(f"this kernel's Landlock ABI is {abi}; confinement "
                                       f"needs ABI >= {walled.abi}")
        mounts.namespaces(mounts.CLONE_NEWNS | mounts.CLONE_NEWNET | mounts.CLONE_NEWIPC |
                          mounts.CLONE_NEWUTS | mounts.CLONE_NEWPID, bool(spec["userns"]))
        # no scratch, no masks: the overlay mounts come next
        mounts.file_tree(hide_run=False, masked=[], scratch=[])
        _empty_run()
        upper = _mounts(overlays, limits["tmpfs"], bool(spec["userns"]))
        walker = Walker(upper, overlays, limits, bool(spec["userns"]))
        child = os.fork()
        if child == 0:
            try:
                os._exit(_init(walled, steps, walker, report_fd, status_fd))
            except (mounts.Refused, landlock.Unavailable, OSError, ValueError) as exc:
                os.write(status_fd, f"E:{exc}".encode())
                os._exit(EXIT_REFUSED)
        os.close(status_fd)
        _, status = os.waitpid(child, 0)
        return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + walls.SIGKILL
    except (mounts.Refused, landlock.Unavailable, OSError, ValueError, KeyError) as exc:
        os.write(status_fd, f"E:{exc}".encode())
        return EXIT_REFUSED


if __name__ == "__main__":
    sys.exit(main(sys.argv))
