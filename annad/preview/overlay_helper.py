"""The preview helper: run a plan's file steps over a throw-away overlay (a script).

Started by :func:`annad.confine.runner.run_overlay` as ``python -I -S overlay_helper.py --
SOCK_FD`` and kept for the previews that follow (:class:`annad.confine.session.Pool`, as the
confinement helper is: an interpreter's start-up and imports, ~30 ms of CPU, are paid once,
not twice per preview). It says ``S`` and serves one preview at a time with the confinement
helper's loop (:func:`annad.confine.helper.serve`): a request is the spec (JSON) with the
descriptors of its output, its report (a memfd of the daemon) and its cgroup's
``cgroup.procs``. A forked child per preview joins the cgroup and, in new mount, IPC and UTS
namespaces of its own (the PID and network namespaces stay the machine's, as for every
unasked run: ``ps`` and ``ss`` tell the truth),

1. builds the tree of :mod:`annad.capture.tree`: every real, writable file system under an
   overlay whose upper layer is on a size-limited tmpfs only this helper can reach, so the
   real files never change and whatever program writes wherever, the write is seen;
2. runs the steps in order, each as the identity its real run would have — root keeps only
   the file capabilities (chown, dac_override, fowner, fsetid), so ``chown``/``install -o``
   and edits of root's files behave as they will; the owner's steps keep nothing — with
   the walls of a check (:func:`annad.confine.walls.enclose`: limits, no_new_privs,
   Landlock — writes only beneath the overlaid tree and to ``/dev/null``, signals scoped
   to the run — and the daemon's seccomp program, which refuses every socket but
   netlink), and stops at the first that fails; whatever a step left running is killed
   before its effect is read (the helper is their subreaper);
3. after each step walks the upper layers and writes what changed (created, modified and
   deleted entries, capped contents, the full content's SHA-256) as one JSON line to
   the report; validators chosen by the changed paths then run on
   the previewed tree, and whatever they leave is not the step's (walked and dropped).

When the child ends, the namespace and with it the overlays and the tmpfs are gone (the
helper kills and reaps whatever it left, as for a check). Any failure before the first step
is reported as ``E:reason``; nothing falls back.
"""

# ruff: noqa: PTH100, PTH118, PTH120 - no pathlib: start-up time
from __future__ import annotations

import _socket
import base64
import contextlib
import fnmatch
import hashlib
import json
import os
import select
import shlex
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from annad.capture import tree
from annad.confine import landlock, memwatch, mounts, walls
from annad.confine.helper import as_run, reap_all, serve

TYPE_CHECKING = False  # typing costs start-up time; mypy reads the block below
if TYPE_CHECKING:
    from annad.confine.helper import Child

BASH = "/bin/bash"
EXIT_REFUSED = 125

FILE_CAPS = (0, 1, 3, 4)
"""CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID: what a root step keeps."""
OPTIONS = tree.OPTIONS
"""The overlay options (the capture uses the same: complete files in the upper layer)."""
WHITEOUT = 0
HASH_CHUNK = 1 << 20


class Step:
    """One command and who runs it."""

    def __init__(self, raw: dict[str, object]) -> None:
        self.command = str(raw["command"])
        self.uid, self.gid = int(str(raw["uid"])), int(str(raw["gid"]))
        self.groups = [int(g) for g in str(raw.get("groups", "")).split(",") if g]
        self.env = {str(k): str(v) for k, v in dict(raw.get("env", {})).items()}  # type: ignore[call-overload]
        self.cwd = str(raw.get("cwd", "/"))


def _drop(step: Step, walled: Walled) -> None:
    """The step's identity and walls: root keeps the file capabilities only, anyone else
    nothing; writes only beneath the overlaid tree; no socket but netlink, for every identity
    (a previewed step was never proven harmless: ``sed`` runs ``e`` commands, ``awk`` has
    system(); a bus, an agent or a root server would act outside the namespace)."""
    keep = FILE_CAPS if step.uid == 0 and not walled.userns else ()
    walls.enclose(uid=step.uid, gid=step.gid, groups=step.groups, userns=walled.userns,
                  limits=walled.limits, program=walled.program,
                  writable_files=mounts.DISCARDING, writable_trees=walled.layers, keep=keep,
                  required_abi=walled.abi, tasks=walled.tasks.get(step.uid))


class Walled:
    """What every step's walls need: from the spec (the daemon compiled the program)."""

    def __init__(self, spec: dict[str, object], layers: list[str], steps: list[Step],
                 rules: list[tuple[str, str]]) -> None:
        self.userns = bool(spec["userns"])
        # RLIMIT_NPROC counts the uid's tasks machine-wide
        self.tasks = {step.uid: walls.tasks_of(step.uid) for step in steps if step.uid}
        self.program = bytes.fromhex(str(spec["program"]))
        self.abi = int(str(spec["abi"]))
        raw = dict(spec["walls"])  # type: ignore[call-overload]
        self.limits = walls.Limits(int(raw["memory"]), int(raw["processes"]), int(raw["cpu"]))
        # no cgroup caps the run: this helper, the steps' subreaper, sums their memory
        self.watch = memwatch.Watch(int(raw["watch"])) if raw.get("watch") else None
        self.layers = tuple(layers)
        self.rules = rules
        """(real path pattern, validator command with ``{file}``): chosen by what changed."""


def _run_step(step: Step, walled: Walled, cap: int) -> tuple[int, bytes]:
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
            # in the step's output, which the preview shows: status 125 alone said nothing
            # (pair 11 saw one, its reason lost)
            with contextlib.suppress(OSError):
                os.write(out_w, f"anna: the step could not start: {exc}\n".encode(
                    "utf-8", "replace"))
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
        if walled.watch is not None and status is None:
            try:
                walled.watch.check()
            except memwatch.Exceeded:
                os.close(out_r)
                reap_all()  # the step and all it started, the child reaped with them
                raise
        if (ready and not chunk) or (status is not None and not ready):
            break
    if status is None:
        _, status = os.waitpid(child, 0)
    os.close(out_r)
    return os.waitstatus_to_exitcode(status), tail


def _digest(fd: int) -> str:
    """SHA-256 of a whole file (the upper layer is on a size-limited tmpfs: bounded)."""
    digest = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, HASH_CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


class Walker:
    """What changed in the upper layers since the last walk."""

    def __init__(self, fd: int, layers: list[str], limits: dict[str, int], userns: bool
                 ) -> None:
        self.fd, self.layers, self.limits = fd, layers, limits
        self.opaque = ("user" if userns else "trusted") + ".overlay.opaque"
        self.seen: dict[tuple[int, str], tuple[int, ...]] = {}
        self.budget = limits["total"]
        self.more = 0
        """Entries of the last walk left out by the cap (the preview is then incomplete)."""

    def entry(self, dir_fd: int, name: str, info: os.stat_result) -> dict[str, object]:
        """One upper-layer entry: type, metadata, and for a file capped content and the
        digest of all of it."""
        kind = "f" if stat.S_ISREG(info.st_mode) else "d" if stat.S_ISDIR(info.st_mode) else \
            "l" if stat.S_ISLNK(info.st_mode) else \
            "w" if stat.S_ISCHR(info.st_mode) and info.st_rdev == WHITEOUT else "x"
        out: dict[str, object] = {"type": kind, "mode": stat.S_IMODE(info.st_mode),
                                  "uid": info.st_uid, "gid": info.st_gid,
                                  "size": info.st_size, "mtime": info.st_mtime_ns}
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
                out["sha256"] = _digest(fd)
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
        self.more = 0
        for index in range(len(self.layers)):
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
                        if self.seen.get(key) == sig:
                            continue
                        if len(changed) < self.limits["entries"]:
                            changed.append({"overlay": index, "rel": rel,
                                            **self.entry(dir_fd, name, info)})
                        else:
                            self.more += 1
            finally:
                os.close(top)
        changed += [{"overlay": index, "rel": rel, "type": "gone"}
                    for index, rel in self.seen if (index, rel) not in now]
        self.seen = now
        return changed


def _validate(step: Step, entries: list[dict[str, object]], walled: Walled, walker: Walker
              ) -> list[dict[str, object]]:
    """The validators of the files the step really changed, run after it on the previewed
    tree (as the step's identity)."""
    out: list[dict[str, object]] = []
    for item in entries:
        if item.get("type") != "f":
            continue
        path = os.path.normpath(os.path.join(walker.layers[int(str(item["overlay"]))],
                                             str(item["rel"])))
        command = next((c for p, c in walled.rules if fnmatch.fnmatchcase(path, p)), None)
        if command is None:
            continue
        check = Step({"command": command.replace("{file}", shlex.quote(path)), "uid": step.uid,
                      "gid": step.gid, "groups": ",".join(map(str, step.groups)),
                      "env": step.env, "cwd": "/"})
        code, output = _run_step(check, walled, walker.limits["output"])
        out.append({"path": path, "exit": code, "output": output.decode("utf-8", "replace")})
    return out


def _steps(walled: Walled, steps: list[Step], walker: Walker, report_fd: int) -> None:
    """Each step, what is left of it killed, a walk; its validators, a walk dropped."""
    for index, step in enumerate(steps):
        try:
            code, output = _run_step(step, walled, walker.limits["output"])
            reap_all()  # nothing a step left running writes on after its walk
            entries = walker.walk()
            line = {"step": index, "exit": code, "entries": entries, "more": walker.more,
                    "output": output.decode("utf-8", "replace"),
                    "validators": _validate(step, entries, walled, walker)
                    if code == 0 else []}
        except memwatch.Exceeded as exc:  # its processes are gone; the run ends here
            os.write(report_fd, json.dumps({"step": index, "memory": exc.used,
                                            "cap": exc.cap}).encode() + b"\n")
            return
        os.write(report_fd, json.dumps(line).encode() + b"\n")
        if code != 0:
            break
        if line["validators"]:
            reap_all()
            walker.walk()  # what a validator wrote (a cache, a lock) is no step's change


class Request:
    """One preview: the spec (JSON) the daemon sent, read before anything is forked (a bad
    one is refused on the socket)."""

    def __init__(self, data: bytes) -> None:
        self.spec = json.loads(data)
        self.steps = [Step(raw) for raw in self.spec["steps"]]
        self.plan = [list(op) for op in self.spec["plan"]]
        self.layers = [str(op[1]) for op in sorted(
            (op for op in self.plan if op[0] == "overlay"), key=lambda op: int(op[2]))]
        self.limits = {k: int(v) for k, v in self.spec["limits"].items()}
        self.rules = [(str(p), str(c)) for p, c in self.spec.get("validators", [])]


def _preview(request: Request, out: int, status_w: int, report_fd: int,
             cgroup: list[int]) -> None:
    """In the forked child: its cgroup, then the overlay confinement, then the steps; never
    returns. ``status_w`` is closed once the tree is built (the daemon's "it runs"); a
    failure before that is ``E:reason`` on it, and nothing ran."""
    try:
        as_run(out, cgroup)  # before anything runs: every process of the preview is counted
        walled = Walled(request.spec, request.layers, request.steps, request.rules)
        abi = landlock.abi_version()
        if abi < walled.abi:
            raise landlock.Unavailable(f"this kernel's Landlock ABI is {abi}; confinement "
                                       f"needs ABI >= {walled.abi}")
        parent = os.getppid()
        walls.prctl(walls.PR_SET_PDEATHSIG, walls.SIGKILL)  # the server's death ends it
        if os.getppid() != parent:
            os._exit(EXIT_REFUSED)
        mounts.namespaces(mounts.CLONE_NEWNS | mounts.CLONE_NEWIPC | mounts.CLONE_NEWUTS,
                          walled.userns)
        upper = tree.assemble(request.plan, request.limits["tmpfs"], walled.userns)
        walls.prctl(walls.PR_SET_CHILD_SUBREAPER, 1)
        walker = Walker(upper, request.layers, request.limits, walled.userns)
    except (mounts.Refused, landlock.Unavailable, OSError, ValueError, KeyError,
            TypeError) as exc:
        os.write(status_w, f"E:{exc}".encode())
        os._exit(EXIT_REFUSED)
    os.close(status_w)
    try:
        _steps(walled, request.steps, walker, report_fd)
    except (mounts.Refused, landlock.Unavailable, OSError, ValueError, KeyError) as exc:
        os.write(2, f"anna: the preview stopped: {exc}\n".encode("utf-8", "replace"))
        os._exit(EXIT_REFUSED)
    os._exit(0)


def prepare(data: bytes, extra: list[int]) -> Child:
    """One request's child: ``extra`` is the report's descriptor, then the ``cgroup.procs``
    descriptors of the preview's leaf (none: the spec asks for the memory watch)."""
    request = Request(data)
    if not extra:
        raise ValueError("a preview request without its report")
    return lambda out, status_w: _preview(request, out, status_w, extra[0], extra[1:])


def main(argv: list[str]) -> int:
    """Serve previews on the socket ``argv`` names until it closes."""
    try:
        if len(argv) != 3 or argv[1] != "--":
            return EXIT_REFUSED
        fd = int(argv[2])
    except ValueError:
        return EXIT_REFUSED
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET, 0, fd)
    os.set_inheritable(fd, False)  # no step may hold it
    # what a preview's child leaves behind when it is killed becomes this process's child
    walls.prctl(walls.PR_SET_CHILD_SUBREAPER, 1)
    sock.send(b"S")
    try:
        serve(sock, prepare)
    finally:
        reap_all()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
