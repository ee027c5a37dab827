"""A booted container with systemd as PID 1, and Anna installed in it.

:class:`Container` prepares an overlay of the cached rootfs (``container.sh cache``: Debian
minbase + systemd + Python, and a wheelhouse of Anna's dependencies), installs this
worktree's Anna into ``/opt/anna/venv`` *before* booting (``/usr/bin/annad`` and
``/usr/bin/annactl`` point there, as a package would put them), boots it with
``systemd-nspawn --private-network --register=no --keep-unit`` and systemd as PID 1 (through
``init.sh``, which first hands the container its cgroup v1 controllers on a hybrid host, so
that annad.service's ``Delegate=`` works as on a real machine) and runs commands inside
with ``nsenter`` (there is no machined or system bus on the machine, so ``machinectl`` and
``systemd-run -M`` cannot be used). :meth:`Container.stop` powers it off from inside and
removes everything it made; the cached rootfs is never written after it is built.

Every command that runs inside is an argv list (never shell text built here); the few
scripts the container runs are files in this folder.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from tests.waiting import wait_until

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SCRIPT = HERE / "container.sh"
CACHE = Path(os.environ.get("ANNA_CI_CACHE", "/var/cache/anna-ci"))
"""Where the rootfs is cached between runs (rebuilt when missing)."""
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SOURCE_PARTS = ("anna_common", "annad", "annactl", "systemd", "docs", "pyproject.toml",
                "README.md")
"""What of the worktree goes into the container (the installable tree and its units)."""
RUN_TIMEOUT_S = 300.0
"""Bound on one command inside the container (a safety net, not a wait)."""


def missing_tools() -> list[str]:
    """Programs the container needs that this machine lacks."""
    return [t for t in ("systemd-nspawn", "mmdebstrap", "nsenter", "unshare", "flock")
            if shutil.which(t) is None]


def dependency_key() -> str:
    """The name of this checkout's dependency layer in the cache (``container.sh key``)."""
    return hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()[:16]


def build_cache() -> None:
    """Build the cached rootfs (no-op when it is there and matches pyproject.toml)."""
    subprocess.run([str(SCRIPT), "cache", str(CACHE), str(REPO)], check=True,
                   stdin=subprocess.DEVNULL, timeout=1800)


@dataclass
class User:
    """A person in the container."""

    name: str
    uid: int
    home: str
    runtime: bool
    """Has a /run/user/UID (a running user manager): XDG_RUNTIME_DIR is set as at login."""


@dataclass
class Container:
    """One booted container (see the module docstring)."""

    name: str
    work: Path
    """Scratch directory: the overlay's upper layer and the console log."""
    proc: subprocess.Popen[bytes] | None = None
    pid1: int | None = None
    users: dict[str, User] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        """The overlay's upper layer: write here only before booting (see :meth:`write`)."""
        return self.work / "upper" / "root"

    @property
    def log(self) -> Path:
        """The container's console (boot messages)."""
        return self.work / "console.log"

    def _nspawn(self, *args: str) -> list[str]:
        return [str(SCRIPT), "run", str(CACHE), dependency_key(), str(self.work / "upper"),
                self.name, "--", *args]

    def install(self) -> None:
        """Copy the worktree into ``/opt/anna-src`` and install it into the cached venv
        (offline, from the wheelhouse), before the container boots."""
        src = self.root / "opt" / "anna-src"
        src.mkdir(parents=True)
        for part in SOURCE_PARTS:
            origin = REPO / part
            if origin.is_dir():
                shutil.copytree(origin, src / part,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(origin, src / part)
        shutil.copy2(HERE / "install.sh", self.root / "opt" / "anna-install.sh")
        shutil.copy2(HERE / "init.sh", self.root / "opt" / "anna-init.sh")
        with self.log.open("ab") as log:
            subprocess.run(self._nspawn("/bin/sh", "/opt/anna-install.sh"), check=True,
                           stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                           timeout=RUN_TIMEOUT_S)

    def _home(self) -> Path:
        """The host directory (the scratch tree's disk) bound at the container's /home."""
        home = self.work / "home"
        home.mkdir(mode=0o755, exist_ok=True)
        return home

    def boot(self) -> None:
        """Boot with systemd as PID 1 and wait until it has finished starting up.

        PID 1 is ``init.sh`` for a moment: it makes the cgroup v1 pids and memory hierarchies
        (rooted at the test's scratch cgroup) writable, then becomes systemd, so that
        annad.service gets its ``Delegate=pids memory`` as on a real machine."""
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                self._nspawn("--private-network", "--console=read-only",
                             # /home on a local disk, as on a real machine: the root is an
                             # overlay, which cannot hold a per-user daemon's upper layers
                             # (its state dir is in the home), so it could not capture
                             f"--bind={self._home()}:/home",
                             # nspawn's own syscall allowlist (systemd 252) lacks Landlock,
                             # which Anna's confinement requires (it refuses to run without)
                             "--system-call-filter=landlock_create_ruleset landlock_add_rule "
                             "landlock_restrict_self",
                             f"--machine={self.name}", "/bin/sh", "/opt/anna-init.sh"),
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        self.pid1 = wait_until(self._find_pid1, "the container's systemd to start",
                               saw=lambda: self.log.read_text(errors="replace")[-2000:])
        # nsenter can get in before systemd's private socket exists: ask until it answers
        wait_until(self._booted, "systemctl is-system-running in the container",
                   saw=lambda: self.run(["systemctl", "is-system-running"]).stdout)

    def _find_pid1(self) -> int | None:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"systemd-nspawn exited {self.proc.returncode}: "
                                 + self.log.read_text(errors="replace")[-3000:])
        try:
            for child in psutil.Process(self.proc.pid).children(recursive=True):
                parent = child.parent()
                if child.name() == "systemd" and parent is not None and \
                        parent.name() == "systemd-nspawn":
                    return int(child.pid)
        except psutil.Error:
            return None
        return None

    def _booted(self) -> bool:
        state = self.run(["systemctl", "is-system-running", "--wait"]).stdout.strip()
        return state in {"running", "degraded"}

    # ------------------------------------------------------------------ commands inside

    def argv(self, argv: list[str], *, user: str | None = None,
             env: dict[str, str] | None = None, old_session: bool = False) -> list[str]:
        """The host argv that runs ``argv`` in the container as root or as ``user``: with
        the groups /etc/group gives now, as after a fresh login, or (``old_session``) only
        the user's own group, as in a session that began before they joined others."""
        assert self.pid1 is not None, "the container is not booted"
        base = {"PATH": PATH, "LANG": "C.UTF-8"}
        head = ["nsenter", "-t", str(self.pid1), "-a"]
        if user is None:
            base["HOME"] = "/root"
        else:
            who = self.users[user]
            base.update(HOME=who.home, USER=who.name, LOGNAME=who.name)
            if who.runtime:
                base["XDG_RUNTIME_DIR"] = f"/run/user/{who.uid}"
            groups = f"--groups={who.uid}" if old_session else "--init-groups"
            head += ["setpriv", f"--reuid={who.uid}", f"--regid={who.uid}", groups]
        base.update(env or {})
        return [*head, "env", "-i", *(f"{k}={v}" for k, v in base.items()), *argv]

    def run(self, argv: list[str], *, user: str | None = None, env: dict[str, str] | None = None,
            stdin: str | None = None, cwd: str | None = None, old_session: bool = False,
            timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` in the container; output captured as text, never raises on status."""
        inner = argv if cwd is None else ["/usr/bin/env", "-C", cwd, *argv]
        return subprocess.run(self.argv(inner, user=user, env=env, old_session=old_session),
                              input=stdin,
                              capture_output=True, text=True, timeout=timeout, check=False,
                              stdin=None if stdin is not None else subprocess.DEVNULL)

    def ok(self, argv: list[str], **kwargs: object) -> str:
        """Run ``argv`` and return its stdout; fail the test when it exits non-zero."""
        proc = self.run(argv, **kwargs)  # type: ignore[arg-type]
        assert proc.returncode == 0, f"{argv} exited {proc.returncode}: {proc.stdout}{proc.stderr}"
        return proc.stdout

    def write(self, path: str, text: str, *, user: str | None = None) -> None:
        """Write a file inside the running container (as ``user``), parents included.

        Never through :attr:`root`: the overlay does not see changes made to its upper
        layer while it is mounted."""
        self.ok(["mkdir", "-p", path.rsplit("/", 1)[0] or "/"], user=user)
        self.ok(["tee", path], user=user, stdin=text)

    def add_user(self, name: str, *, groups: tuple[str, ...] = (), linger: bool = True) -> User:
        """Create a user (and, with ``linger``, start their systemd user manager)."""
        args = ["useradd", "--create-home", "--shell", "/bin/bash"]
        if groups:
            args += ["--groups", ",".join(groups)]
        self.ok([*args, name])
        uid = int(self.ok(["id", "-u", name]).strip())
        self.users[name] = User(name, uid, f"/home/{name}", runtime=linger)
        if linger:
            self.ok(["loginctl", "enable-linger", name])
            wait_until(lambda: self.run(["systemctl", "--user", "is-system-running"],
                                        user=name).stdout.strip() in {"running", "degraded"},
                       f"{name}'s user manager")
        return self.users[name]

    # ------------------------------------------------------------------ the end

    def stop(self) -> None:
        """Power off from inside, wait for nspawn to exit, remove the scratch tree."""
        if self.proc is not None and self.proc.poll() is None:
            if self.pid1 is not None:
                subprocess.run(self.argv(["systemctl", "poweroff"]), capture_output=True,
                               timeout=60, check=False)
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:  # never leave it running: kill what we started
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=60)
        shutil.rmtree(self.work, ignore_errors=True)


def boot_container(work: Path, label: str) -> Container:
    """A container named after ``label`` and this process, installed and booted."""
    name = f"anna-{label}-{os.getpid()}"
    container = Container(name=name, work=work)
    try:
        container.install()
        container.boot()
    except BaseException:
        container.stop()
        raise
    return container
