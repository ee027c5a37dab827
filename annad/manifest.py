"""The undo record of one step: a JSON manifest under ``state/backups/<plan>/<step>/``.

Written (and flushed to disk) before the step runs, so a daemon killed mid-step,
or a machine rebooted, can still undo it. It holds the file snapshots (path,
kind, mode, owner, sha256 of the saved content, or "absent"), the pre-state of
recognised actions (package versions, unit states) and who the step ran as.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

_MODEL = ConfigDict(extra="forbid", use_attribute_docstrings=True)

MANIFEST = "manifest.json"
"""File name of a step's manifest."""


class Entry(BaseModel):
    """One file system object as it was before the step."""

    model_config = _MODEL

    path: str
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
    link: str | None = None
    """Symlink target, as stored in the link."""
    mtime_ns: int | None = None
    """Modification time."""


class TargetSnapshot(BaseModel):
    """Everything saved for one write target (one undo action)."""

    model_config = _MODEL

    requested: str
    """The target as the command names it (resolved against the step's home)."""
    path: str
    """The symlink-free path saved."""
    tree: bool = False
    """Whether everything below a directory was saved (restoring removes what is new)."""
    entries: list[Entry] = Field(default_factory=list)
    """The target first, then what is below it (parents before children)."""


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


class StepManifest(BaseModel):
    """The undo record of one step."""

    model_config = _MODEL

    version: int = 1
    """Manifest format."""
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
    packages: list[PackageState] = Field(default_factory=list)
    """Package pre-state per package-manager call."""
    units: list[UnitState] = Field(default_factory=list)
    """Unit pre-state per unit."""
    rollback_command: str | None = None
    """The plan's rollback command for this step, if it has one."""
    rollback_scope: Literal["user", "system"] = "user"
    """Scope of the rollback command by the daemon's own assessment."""


def write_atomic(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Write a file so it is either wholly there or not at all, and on disk before return."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fdatasync(fd)
    finally:
        os.close(fd)
    tmp.replace(path)
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def save(directory: Path, manifest: StepManifest) -> None:
    """Write ``manifest.json`` into a step's backup directory."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic(directory / MANIFEST, manifest.model_dump_json(indent=1).encode("utf-8"))


def load(directory: Path) -> StepManifest | None:
    """Read a step's manifest; None when the step never got that far."""
    try:
        text = (directory / MANIFEST).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return StepManifest.model_validate_json(text)
