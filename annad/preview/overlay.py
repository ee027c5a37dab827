"""Run a plan's file steps in order over a throw-away overlay and collect what they changed.

Which directories get an overlay comes from the same write-target analysis the executor's
snapshots use (:func:`annad.backups.targets.snapshot_targets`): for every path a step writes, the
nearest existing directory above it. Everything else stays read-only, so a write Anna did
not foresee fails in the preview (and the preview says the step failed) instead of
landing anywhere. The run itself is :func:`annad.confine.runner.run_overlay`.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from annad.backups.backup import BackupRefused
from annad.backups.targets import snapshot_targets
from annad.confine.runner import run_overlay
from annad.confine.stepenv import step_environment, sudo_shims

if TYPE_CHECKING:
    from annad.execution.stepspec import Who

UNPREVIEWABLE = ("/proc", "/sys", "/dev", "/run")
"""Kernel, device and runtime trees: never overlaid (a preview there would mean nothing)."""
_OPTION_UNSAFE = frozenset(",:\\\n\0=")
"""Characters an overlay mount option cannot carry unescaped: such directories are refused."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps of one preview run."""

    file_bytes: int = 256 * 1024
    """Content read back per file (beyond it: sizes only, no diff)."""
    total_bytes: int = 4 * 1024 * 1024
    """Content read back per plan."""
    entries: int = 2000
    """Entries reported per step."""
    tmpfs_bytes: int = 256 * 1024 * 1024
    """Size of the tmpfs holding the upper layers."""
    output_bytes: int = 8 * 1024
    """Output kept per step (the tail)."""
    timeout_s: float = 20.0
    """Wall time of the whole run."""


@dataclass(frozen=True, slots=True)
class FileStep:
    """One step to run over the overlay."""

    index: int
    """Its position in ``command_plan``."""
    command: str
    """The command."""
    system: bool
    """Runs as root in the real run (system scope)."""
    validate: list[tuple[str, str]] = field(default_factory=list)
    """(real path, validator command) to run after the step on the previewed tree."""


@dataclass(frozen=True, slots=True)
class StepRun:
    """One step's run over the overlay."""

    exit_code: int
    """Its exit status (negative: a signal)."""
    entries: list[dict[str, Any]]
    """Upper-layer entries new, changed or gone since the step before."""
    output: str
    """The tail of its output."""
    validators: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Real path → (exit status, output) of its validator, run on the previewed tree."""


@dataclass(slots=True)
class OverlayRun:
    """What the run produced."""

    overlays: list[str] = field(default_factory=list)
    """The overlaid directories, by index."""
    steps: dict[int, StepRun] = field(default_factory=dict)
    """Plan step index → what its run left."""
    error: str | None = None
    """Why nothing ran (confinement refused, no directory to overlay)."""
    output: str = ""
    """The steps' combined output (the tail)."""


def _directory_for(path: str, *, inside: bool) -> str:
    """The existing directory whose overlay captures a write to ``path``."""
    directory = path if inside else posixpath.dirname(path.rstrip("/")) or "/"
    while directory != "/" and not os.path.isdir(directory):  # noqa: PTH112
        directory = posixpath.dirname(directory)
    # where the mount will really land (a symlinked directory is judged by its target)
    return os.path.realpath(directory)


def write_paths(command: str, *, home: str, system: bool) -> list[str]:
    """The paths ``command`` writes, as the snapshots see them (raises BackupRefused)."""
    targets, _ = snapshot_targets(command, home=home, cwd="/" if system else home)
    return [t.path for t in targets]


def overlay_dirs(command: str, *, home: str, system: bool) -> list[str]:
    """The directories ``command`` writes in; raises :class:`BackupRefused` with the reason."""
    targets, _ = snapshot_targets(command, home=home, cwd="/" if system else home)
    out: list[str] = []
    for target in targets:
        directory = _directory_for(target.path, inside=target.new_only)
        if directory == "/" or directory.startswith(tuple(p + "/" for p in UNPREVIEWABLE)) \
                or directory in UNPREVIEWABLE:
            raise BackupRefused(f"it writes {target.path}, where no preview can be made")
        if set(directory) & _OPTION_UNSAFE:
            raise BackupRefused(f"{directory!r} cannot be overlaid (unusual characters)")
        out.append(directory)
    return out


def reduce_dirs(dirs: list[str]) -> list[str]:
    """Drop directories inside another one on the same file system; refuse nesting across
    file systems (an overlay of the outer one would hide the inner mount)."""
    unique = sorted(set(dirs), key=lambda d: (d.count("/"), d))
    kept: list[str] = []
    for directory in unique:
        outer = next((k for k in kept if directory.startswith(k.rstrip("/") + "/")), None)
        if outer is None:
            kept.append(directory)
        elif Path(outer).stat().st_dev != Path(directory).stat().st_dev:
            raise BackupRefused(f"{directory} is a separate file system inside {outer}")
    return kept


def _spec_step(step: FileStep, who: Who) -> dict[str, Any]:
    checks = [{"path": path, "command": command} for path, command in step.validate]
    if step.system:
        env = step_environment(None, who.session, home=who.home)
        env.update(sudo_shims())
        return {"command": step.command, "uid": 0, "gid": 0, "groups": "", "env": env,
                "cwd": "/", "validate": checks}
    env = step_environment(who.identity(), who.session)
    env.update(sudo_shims())
    return {"command": step.command, "uid": who.uid, "gid": who.gid,
            "groups": ",".join(str(g) for g in who.groups), "env": env, "cwd": who.home,
            "validate": checks}


def run(steps: list[FileStep], overlays: list[str], who: Who, *, limits: Limits,
        python: str | None = None) -> OverlayRun:
    """Run ``steps`` in order over overlays of ``overlays``; never raises."""
    userns = os.geteuid() != 0
    spec = {"steps": [_spec_step(s, who) for s in steps], "overlays": overlays,
            "userns": userns,
            "limits": {"file": limits.file_bytes, "total": limits.total_bytes,
                       "entries": limits.entries, "tmpfs": limits.tmpfs_bytes,
                       "output": limits.output_bytes}}
    result, report = run_overlay(json.dumps(spec), timeout=limits.timeout_s,
                                 max_output=16 * 1024, python=python, owner=who.uid)
    out = OverlayRun(overlays=overlays, output=result.output)
    if result.error is not None:
        out.error = result.error
        return out
    if result.timed_out:
        out.error = f"the preview ran longer than {limits.timeout_s:g} s and was stopped"
    for line in report.splitlines():
        try:
            item = json.loads(line)
            position = int(item["step"])
            checks = {str(v["path"]): (int(v["exit"]), str(v["output"]))
                      for v in item.get("validators", [])}
            out.steps[steps[position].index] = StepRun(int(item["exit"]), list(item["entries"]),
                                                       str(item.get("output", "")), checks)
        except (ValueError, KeyError, IndexError, TypeError):
            out.error = "the preview report could not be read"
    return out


def content(entry: dict[str, Any]) -> bytes | None:
    """The (capped) content of a file entry, or None."""
    data = entry.get("data")
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
