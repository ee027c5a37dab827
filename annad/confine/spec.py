"""Confinement for what runs without a confirmation: what it is, and how it is started.

A necessary check or an INFO step runs because Anna's classifier called it read-only, and a
classifier can be wrong (bash evaluates ``$(…)`` inside ``let 'x[…]'``). So the verdict alone
is not the wall: such commands run in :mod:`annad.confine.helper`, which keeps the machine's
PID and network namespaces (``ps``, ``ss``, ``ip`` and ``systemctl`` tell the truth) and gives
each command

- a private mount namespace: every mount read-only, nosuid and nodev, a minimal ``/dev``,
  root's secrets (for a capless-root read) and Anna's own state and socket masked
  (:mod:`annad.confine.mounts`);
- Landlock: no write anywhere but ``/dev/null``, no TCP, signals and abstract Unix sockets
  scoped to the run (:mod:`annad.confine.landlock`);
- seccomp: no inet/packet sockets, no keyrings, ptrace, mounts, namespaces, bpf, io_uring;
  Unix sockets only for a read verb that needs them, whose ``/run`` then holds only D-Bus's
  and systemd's sockets (:mod:`annad.confine.filters`, :mod:`annad.confine.readverbs`);
- ``PR_SET_NO_NEW_PRIVS``, no capability in any set, the plan owner's uid, gid and groups —
  or, only where the system daemon must read what only root can read, uid 0 without any
  capability, no Unix socket at all and ``/run`` hidden;
- limits on memory, processes and CPU time, per process and — in a cgroup of its own
  (:mod:`annad.confine.cgroups`) — for the whole run, and nothing left running after it ends;
- in a per-user daemon, a user namespace in which the owner maps to itself.

This module describes the confinement (:class:`Confinement`) and builds the helper's
command line; :mod:`annad.confine.session` runs it. If it cannot be built the command does
not run: there is no unconfined fallback.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import pwd
import shlex
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from annad.confine.credentials import Identity

HELPER = Path(__file__).with_name("helper.py")
"""The script that builds the view and runs the commands (standard library only)."""
ROOT_READERS = frozenset({"journalctl"})
"""Programs whose data (the system journal) only root's group reads: a ``sudo`` check of these
may read as capless root."""
_WRAPPERS = frozenset({"sudo", "doas", "env", "command", "nice", "ionice", "timeout", "stdbuf"})
_PROTECTED: set[str] = set()


def protect(*paths: str | os.PathLike[str]) -> None:
    """Mask ``paths`` (Anna's state directory, its socket's directory) in every confined run:
    the journal holds every member's plans and output. Called once by the daemon at start."""
    _PROTECTED.update(os.path.realpath(p) for p in paths)


def protected() -> tuple[str, ...]:
    """What :func:`protect` registered and still exists."""
    return tuple(sorted(p for p in _PROTECTED if os.path.lexists(p)))


@dataclass(frozen=True, slots=True)
class RunLimits:
    """Resource limits of one confined command."""

    memory: int = 1024 ** 3
    """Memory a process may allocate, bytes (RLIMIT_DATA; four times that as address
    space, RLIMIT_AS)."""
    processes: int = 256
    """Processes (tasks) of the whole run (its cgroup's ``pids.max``; where it has no cgroup,
    what it may add to what its uid already runs, RLIMIT_NPROC)."""
    run_memory: int = 1024 ** 3
    """Memory of the whole run, bytes: its cgroup's cap (all its processes and the page cache
    they fill together)."""
    cpu_s: int = 300
    """CPU seconds per process (RLIMIT_CPU); the wall time is the run's timeout."""


@dataclass(frozen=True, slots=True)
class Confinement:
    """How commands are confined: one helper process serves every run of one confinement."""

    uid: int
    """The uid the command runs as (the owner's; 0 only for a capless-root read)."""
    gid: int
    """Its primary gid."""
    groups: tuple[int, ...] = ()
    """Its supplementary groups (kept as they are in a user namespace)."""
    userns: bool = False
    """Build inside a new user namespace (a daemon that is not root)."""
    scratch: tuple[str, ...] = ()
    """Existing directories covered by a throw-away writable tmpfs (previews). Nothing else is
    writable; what the command writes there is gone when it ends."""
    masked: tuple[str, ...] = ()
    """Existing files and directories no run may see (root's secrets for a capless-root read,
    :func:`root_secrets`; Anna's state, :func:`protect`): a file is covered by a device node
    on a ``nodev`` mount (opening it fails), a directory by an empty read-only tmpfs."""
    bus: tuple[str, ...] | None = None
    """Unix sockets allowed: None for none (seccomp refuses AF_UNIX); otherwise the sockets
    (D-Bus, systemd) its ``/run`` keeps, with nothing else there and /tmp empty."""
    env: dict[str, str] = field(default_factory=dict, compare=False)
    """The command's environment (per run, not part of the session)."""
    cwd: str = field(default="/", compare=False)
    """Its working directory (``/`` when it does not exist; per run)."""

    @property
    def hide_run(self) -> bool:
        """uid 0 without capabilities still passes the uid checks of systemd's and D-Bus's
        sockets under /run: a root command never sees /run."""
        return self.uid == 0

    def session_key(self) -> tuple[object, ...]:
        """What makes two runs share one helper: everything but environment and cwd."""
        return (self.uid, self.gid, self.groups, self.userns, self.scratch, self.masked,
                self.bus)


def helper_argv(confinement: Confinement, *, sock_fd: int, program: bytes, abi: int,
                python: str | None = None) -> list[str]:
    """The helper's command line (:class:`annad.confine.helper.Spec` reads it).

    Plain arguments, no JSON: the helper parses them with ``str.split`` so that its
    interpreter starts fast.
    """
    flags = ("u" if confinement.userns else "") + ("r" if confinement.hide_run else "") + \
        ("b" if confinement.bus is not None else "") or "-"
    bus = confinement.bus or ()
    # -I: no user site, no PYTHON* variables, no script directory on sys.path; -S: no site
    return [python or sys.executable, "-I", "-S", str(HELPER), "--", str(sock_fd),
            str(confinement.uid), str(confinement.gid),
            ",".join(str(g) for g in confinement.groups), flags, str(abi),
            str(len(confinement.masked)), *confinement.masked,
            str(len(confinement.scratch)), *confinement.scratch,
            str(len(bus)), *bus, program.hex()]


ROOT_SECRET_DIRS = ("/root",)
"""Directories a capless-root read never sees: root's home (keys, shell history, tokens)."""


def root_secrets(patterns: Sequence[str] | None = None) -> tuple[str, ...]:
    """What a capless-root read is kept from seeing, as it exists now on this machine.

    Uid 0 without capabilities still owns root's files, so it reads ``/etc/shadow``, host
    keys and the rest of root's secrets. The risk engine judges secret reads by the words
    of the command, but words can name a file without spelling its path (a relative path
    from the ``/`` working directory, ``..``, a symlink, a glob, a variable, a ``cd``
    first). So the confinement itself takes the files away: every absolute pattern of
    :data:`anna_common.risk.paths.SECRET_PATTERNS` outside ``/home`` (other users' files are not
    readable by capless root anyway), expanded on the real filesystem, and
    :data:`ROOT_SECRET_DIRS`. Defence in depth: the words are still judged first.
    ``patterns`` replaces the secret patterns (tests). A link is covered at its target; a
    dangling one is skipped (covering it would fail, and the read would never run).
    """
    from anna_common.risk.paths import SECRET_PATTERNS

    found: set[str] = {d for d in ROOT_SECRET_DIRS if os.path.isdir(d)}  # noqa: PTH112
    for pattern in SECRET_PATTERNS if patterns is None else patterns:
        if not pattern.startswith("/") or pattern.startswith("/home/"):
            continue
        for match in glob.glob(pattern):  # noqa: PTH207 - patterns are shell globs
            real = os.path.realpath(match)  # a link is covered at its target
            if any(real == d or real.startswith(d + "/") for d in ROOT_SECRET_DIRS):
                continue
            if os.path.exists(real):  # noqa: PTH110 - a dangling link has nothing to cover
                found.add(real)
    return tuple(sorted(found))


def _words(command: str) -> list[str]:
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>()")
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return []


def _code_words(command: str, depth: int = 0) -> list[str]:
    """The command's words and, for a word that is itself code (``sh -c '…'``, ``bash -c``,
    a quoted pipeline), that code's words too — a few levels deep (a hint, not a parse)."""
    words = _words(command)
    if depth >= 3:
        return words
    inner = [w for word in words if any(c.isspace() for c in word)
             for w in _code_words(word, depth + 1)]
    return words + inner


def _programs(words: Sequence[str]) -> set[str]:
    """First words of each simple command, past ``sudo``-like wrappers (a hint, not a parse)."""
    found: set[str] = set()
    start = True
    for word in words:
        if word and set(word) <= set(";&|()"):
            start = True
            continue
        if start and "=" not in word and not word.startswith("-"):
            name = word.rsplit("/", 1)[-1]
            if name not in _WRAPPERS:
                found.add(name)
                start = False
    return found


def _readable_by(path: str, uid: int, groups: Iterable[int]) -> bool:
    """Whether ``uid`` (with ``groups``) reaches and reads ``path`` by its permission bits."""
    gids = set(groups)

    def allowed(info: os.stat_result, bit: int) -> bool:
        if info.st_uid == uid:
            return bool(info.st_mode & (bit << 6))
        if info.st_gid in gids:
            return bool(info.st_mode & (bit << 3))
        return bool(info.st_mode & bit)

    parts = Path(path).parts
    try:
        for depth in range(1, len(parts)):
            if not allowed(Path(*parts[:depth]).stat(), 0o1):
                return False
        info = Path(path).stat()
    except OSError:
        return True  # absent or unreachable for root too: reading it needs no root
    return allowed(info, 0o4 | (0o1 if stat.S_ISDIR(info.st_mode) else 0))


def needs_root_read(command: str, uid: int, groups: Iterable[int], home: str | None = None
                    ) -> bool:
    """Whether a check the system daemon judged system-scope must read as (capless) root.

    ``sudo`` in the text is never the reason. Root is used only when the command names a path
    that exists and that the owner's permission bits do not let them read, or when it is a
    program whose data only root's groups read (the system journal).
    """
    if uid == 0:
        return True
    words = _code_words(command)
    if _programs(words) & ROOT_READERS:
        return True
    gids = tuple(groups)
    for word in words:
        candidate = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        candidate = _in_home(candidate, home)
        if candidate.startswith("/") and not set(candidate) & set("*?[{$`") and \
                not _readable_by(candidate, uid, gids):
            return True
    return False


def _in_home(word: str, home: str | None) -> str:
    """``~/x``, ``$HOME/x`` and a relative ``x`` that exists in the home (the command's working
    directory) as absolute paths; anything else as it is."""
    if home is None or not word or word.startswith(("/", "-")):
        return word
    for prefix in ("~/", "$HOME/", "${HOME}/"):
        if word.startswith(prefix):
            return str(Path(home) / word[len(prefix):])
    if word in ("~", "$HOME", "${HOME}"):
        return home
    if set(word) & set("*?[{$`~") or not Path(home, word).exists():
        return word
    return str(Path(home) / word)


NOBODY_UID = 65534
"""The overflow uid: what a root owner's unasked commands run as when they need no root read."""


def _nobody(identity: Identity) -> Identity:
    try:
        entry = pwd.getpwnam("nobody")
        uid, gid = entry.pw_uid, entry.pw_gid
    except KeyError:
        uid = gid = NOBODY_UID
    # HOME stays the owner's: ``~`` means what Anna judged, and nobody cannot read /root anyway
    return dataclasses.replace(identity, uid=uid, gid=gid, groups=(), user="nobody")


def unasked_identity(identity: Identity, command: str, *, root_allowed: bool
                     ) -> tuple[Identity, bool]:
    """Who a check or an INFO step runs as, and whether it reads as capless root.

    A non-root owner runs as themselves; as capless root only where the system daemon must
    read what they cannot (``root_allowed``: a system-scope command in the system daemon).
    A root owner is never simply uid 0: even without capabilities uid 0 is trusted by root's
    servers (so its sockets are taken away, and ``systemctl status`` could not work). Their
    commands run as ``nobody`` — with the sockets every user has — unless they must read
    what ``nobody`` cannot, which they then do as capless root without sockets.
    """
    if identity.uid != 0:
        return identity, root_allowed and needs_root_read(command, identity.uid,
                                                          identity.groups)
    nobody = _nobody(identity)
    if needs_root_read(command, nobody.uid, (), home=identity.home):
        return identity, True
    return nobody, False
