"""The undo record of one step: a JSON manifest under ``state/backups/<plan>/<step>/``.

Written (and flushed to disk) before the step runs, so a daemon killed mid-step,
or a machine rebooted, can still undo it. It holds the file snapshots (path,
kind, mode, owner, sha256 of the saved content, or "absent"), the pre-state of
recognised actions (package versions, unit states) and who the step ran as.
After the step succeeds it also holds what the step left at each target
(:class:`Ident`), so a later rollback can tell the plan's own result from a
change someone made since.

File names are bytes to the kernel; JSON holds text. Every path field is written
in a lossless escaped form (:func:`escape_path`): a backslash is written ``\\\\``
and a byte that is not part of valid UTF-8 ``\\xHH``, so ``b"caf\\xe9"`` is
stored as ``caf\\xe9`` and read back as exactly those bytes.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, ValidationInfo

_MODEL = ConfigDict(extra="forbid", use_attribute_docstrings=True)

MANIFEST = "manifest.json"
"""File name of a step's manifest."""
AFTER = "after.json"
"""The manifest again with what the step left (written after it succeeded, not flushed)."""
VERSION = 2
"""Manifest format: 2 escapes paths (:func:`escape_path`); 1 stored them verbatim."""
_ESCAPED = re.compile(rb"\\(\\|x[0-9a-fA-F]{2})")


def escape_path(path: str) -> str:
    """The lossless text form of a file name (``os.fsdecode`` form in, printable text out).

    Also what messages and the journal show for a name that is not valid UTF-8.
    """
    return os.fsencode(path).replace(b"\\", b"\\\\").decode("utf-8", "backslashreplace")


def printable(text: str) -> str:
    """Text safe for messages, the journal and JSON: bytes that are not UTF-8 as ``\\xHH``."""
    return os.fsencode(text).decode("utf-8", "backslashreplace")


def unescape_path(text: str) -> str:
    """Inverse of :func:`escape_path`: the exact bytes again, as ``os.fsdecode`` text."""
    def byte(match: re.Match[bytes]) -> bytes:
        code = match.group(1)
        return b"\\" if code == b"\\" else bytes([int(code[1:], 16)])
    return os.fsdecode(_ESCAPED.sub(byte, text.encode("utf-8", "surrogateescape")))


def _from_json(value: object, info: ValidationInfo) -> object:
    # only text read from a manifest file is escaped; paths built in code are raw names
    if info.mode == "json" and isinstance(value, str):
        return unescape_path(value)
    return value


FsPath = Annotated[str, BeforeValidator(_from_json),
                   PlainSerializer(escape_path, when_used="json")]
"""A file name as the kernel has it, stored losslessly in JSON."""


class Entry(BaseModel):
    """One file system object as it was before the step."""

    model_config = _MODEL

    path: FsPath
    """Absolute path with no symlink in its directories."""
    kind: Literal["file", "dir", "symlink", "absent", "special"]
    """What was there; ``absent``: nothing (restoring deletes whatever is there then)."""
    mode: int = 0
    """Permission bits (``S_IMODE``), setuid/setgid/sticky included."""
    uid: int = -1
    """Owner."""
    gid: int = -1
    """Group."""
    size: int = 0
    """Bytes (files)."""
    sha256: str | None = None
    """Content hash (files); the blob's name in the plan's blob store."""
    link: FsPath | None = None
    """Symlink target, as stored in the link."""
    mtime_ns: int | None = None
    """Modification time."""
    xattrs: dict[str, str] | None = None
    """Extended attributes of a file or directory (user.*, POSIX ACLs, file capabilities…),
    name → base64 value (:mod:`annad.backups.xattrs`); None: not recorded (older record)."""


class Ident(BaseModel):
    """What is at a path at one moment: enough to tell whether anyone changed it since."""

    model_config = _MODEL

    path: FsPath
    """Absolute, symlink-free."""
    kind: Literal["file", "dir", "symlink", "absent", "special"]
    """What is there."""
    ino: int = 0
    """Inode number (a replaced file has a new one)."""
    ctime_ns: int = 0
    """Change time: every write, chmod, chown or rename sets it, and no one can set it back."""
    mtime_ns: int = 0
    """Modification time."""
    size: int = 0
    """Bytes (files)."""
    mode: int = 0
    """Permission bits."""
    uid: int = -1
    """Owner."""
    gid: int = -1
    """Group."""
    sha256: str | None = None
    """Content hash of a file within the snapshot limits (None: larger, not hashed)."""
    link: FsPath | None = None
    """Symlink target."""


class TargetSnapshot(BaseModel):
    """Everything saved for one write target (one undo action)."""

    model_config = _MODEL

    requested: FsPath
    """The target as the command names it (resolved against the step's home)."""
    path: FsPath
    """The symlink-free path saved."""
    tree: bool = False
    """Whether everything below a directory was saved (restoring removes what is new)."""
    entries: list[Entry] = Field(default_factory=list)
    """The target first, then what is below it (parents before children)."""
    new_only: bool = False
    """``path`` is a directory in which the step only creates entries whose names are known
    at run time (``cp f f.bak.$(date +%s)``): ``listing`` is what it held before, and undo
    removes only what is new."""
    listing: list[Ident] | None = None
    """For ``new_only``: the directory's entries before the step (names and identity, no
    content)."""
    after: list[Ident] | None = None
    """What the step left (the target, and below it for a saved or created tree; for
    ``new_only`` the entries it created), recorded when it succeeded. None: not recorded
    (the step did not finish, or it was too big to check)."""
    overwritten: list[FsPath] = Field(default_factory=list)
    """For ``new_only``: entries that existed before and that the step changed anyway
    (not backed up, so undo cannot restore them)."""


class PackageState(BaseModel):
    """Installed packages before (and after) a ``pacman -S/-U/-R`` step."""

    model_config = _MODEL

    program: str
    """``pacman`` or the helper used."""
    options: list[str]
    """The path options (``--root``, ``--dbpath``, ``--config``, ...) exactly as the step
    used them: queries and undo must touch the same database."""
    before: dict[str, str]
    """name → version before the step."""
    after: dict[str, str] | None = None
    """name → version after the step succeeded (None when it did not finish)."""


class UnitState(BaseModel):
    """A unit's state before a ``systemctl enable/disable/start/stop`` step."""

    model_config = _MODEL

    unit: str
    """Unit name as given."""
    user: bool
    """``systemctl --user``."""
    enabled: str
    """``systemctl is-enabled`` output (``enabled``, ``disabled``, ``masked``, ...)."""
    active: str
    """``systemctl is-active`` output (``active``, ``inactive``, ...)."""
    ran: list[str] = Field(default_factory=list)
    """What the step made the unit's own programs do (a start runs ``ExecStart=``, a stop
    ``ExecStop=``): their effects Anna did not see, so this unit's undo puts its state back
    and is never reported verified (:func:`annad.execution.prestate.unit_programs`)."""


class ValueState(BaseModel):
    """A live value before the step: a kernel parameter, a desktop setting
    (:mod:`annad.execution.prestate_values`) or the network configuration
    (:mod:`annad.execution.prestate_net`)."""

    model_config = _MODEL

    kind: Literal["sysctl", "gsettings", "ip"]
    """Which program reads and writes it (``ip``: read only, never written back)."""
    key: list[str]
    """``[KEY]`` for sysctl; ``[--schemadir DIR…, SCHEMA, KEY]`` for gsettings;
    ``["network"]`` for ip."""
    env: dict[str, str] = Field(default_factory=dict)
    """The step's own variables choosing the store (``GSETTINGS_BACKEND``…)."""
    user: bool
    """Read and written as the step's user (gsettings), else as root (sysctl)."""
    before: str
    """The value before the step, as the program prints it."""


class StepManifest(BaseModel):
    """The undo record of one step."""

    model_config = _MODEL

    version: int = VERSION
    """Manifest format (see :data:`VERSION`)."""
    plan_id: str
    """The plan."""
    index: int
    """0-based step number."""
    step_id: str
    """The step's id."""
    scope: Literal["user", "system"]
    """Who the step ran as."""
    uid: int
    """uid of user-scope commands (also the snapshot owner check)."""
    gid: int
    """gid of user-scope commands."""
    groups: list[int] = Field(default_factory=list)
    """Supplementary groups of user-scope commands."""
    user: str = ""
    """User name."""
    home: str
    """Home of the step (the caller's, or the configured override)."""
    session: dict[str, str] = Field(default_factory=dict)
    """Whitelisted session environment for user-scope undo commands."""
    targets: list[TargetSnapshot] = Field(default_factory=list)
    """File snapshots."""
    notes: list[str] = Field(default_factory=list)
    """Writes that were not snapshotted and why (devices, kernel files)."""
    uncaptured: bool = False
    """The step runs code whose writes Anna cannot see (reason ``uncaptured_write``): undo
    cannot restore them and says so."""
    packages: list[PackageState] = Field(default_factory=list)
    """Package pre-state per package-manager call."""
    units: list[UnitState] = Field(default_factory=list)
    """Unit pre-state per unit."""
    values: list[ValueState] = Field(default_factory=list)
    """Live values the step sets, as they were before it (undo puts them back, reads again)."""
    unchecked: list[str] = Field(default_factory=list)
    """Live programs the step ran to change the running system whose state Anna records none
    of (``ip``, ``nmcli``, ``hyprctl``…): their undo is the plan's rollback command, and an
    undo that relied on it is reported ``unverified``, never done."""
    reloads: list[Literal["user", "system"]] = Field(default_factory=list)
    """The systemd managers the step told to reload their unit files (``daemon-reload``):
    nothing to undo, but reloaded again once the undo put the files back."""
    rollback_command: str | None = None
    """The plan's rollback command for this step, if it has one."""
    rollback_scope: Literal["user", "system"] = "user"
    """Scope of the rollback command by the daemon's own assessment."""
    rollback_tier: str = "HIGH"
    """The tier the rollback command was approved at (what it really changes is judged
    against it; HIGH for a record written before it was kept)."""


def write_atomic(path: Path, data: bytes, mode: int = 0o600, *, flush: bool = True) -> None:
    """Write a file so it is either wholly there or not at all (on disk before return unless
    ``flush`` is False)."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if flush:
            os.fdatasync(fd)
    finally:
        os.close(fd)
    tmp.replace(path)
    if not flush:
        return
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def save(directory: Path, manifest: StepManifest, *, durable: bool = True,
         flush: bool = True) -> None:
    """Write a step's undo record.

    ``durable``: ``manifest.json``, flushed (before the step runs: the snapshot must
    survive a power cut) — unless ``flush`` is False: the caller flushes the file system
    itself before anything lands (a captured step: one flush for its blobs, this record and
    its commit record). Otherwise ``after.json`` beside it, not flushed: what the step
    left, recorded after it; a power cut that tears it only costs the conflict check,
    never the snapshot, because :func:`load` then falls back to ``manifest.json``.
    """
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = manifest.model_dump_json(indent=1).encode("utf-8")
    if durable:
        write_atomic(directory / MANIFEST, data, flush=flush)
        (directory / AFTER).unlink(missing_ok=True)
    else:
        write_atomic(directory / AFTER, data, flush=False)


def _parse(text: str) -> StepManifest:
    data = json.loads(text)
    if isinstance(data, dict) and data.get("version", 1) < VERSION:
        return StepManifest.model_validate(data)  # written before paths were escaped
    return StepManifest.model_validate_json(text)


def load(directory: Path) -> StepManifest | None:
    """Read a step's undo record; None when the step never got that far."""
    try:
        text = (directory / MANIFEST).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return _parse((directory / AFTER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return _parse(text)  # no record of the result (or a torn one): the snapshot alone
