"""Undoing one step from its manifest, in the order the contract gives.

1. run the plan's rollback command for the step, if it has one and it is not a live kind:
   captured and judged like a step (:mod:`annad.execution.rollback_capture`,
   :attr:`UndoEnv.capture`), never live unseen; what it changes at a path the daemon
   restores from its own backup is dropped unlanded (:mod:`annad.execution.undoonce`: one
   undo per path, the person's data before the model's command);
2. restore the file snapshots (byte-exact; what was absent is deleted again),
   except what someone changed since the plan ran (:mod:`annad.backups.undofiles`);
   then a rollback command that is a live kind and nothing else
   (:func:`annad.execution.livekinds.live_only`: ``systemctl``, the package manager…) runs
   live, after the files it may need are back;
   a step whose writes Anna could not capture (interpreter code) is never reported undone
   unless that command ran, and then the result says it relied on it; the same for what a
   live program with no typed pre-state changed (``ip``, ``nmcli``, ``hyprctl``…): the
   result is ``unverified``, and such a rollback ends ``rollback_unverified``, never
   ``rolled_back`` on the command's exit status;
3. invert recognised actions: reinstall from the package cache what the step
   removed or changed, remove only the packages it newly installed, and put
   unit enablement and activity back.

Each action yields an :class:`~anna_common.protocol.models.UndoResult`; a failing one
is reported and the rest still run.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from anna_common.errors import ErrorCode
from anna_common.protocol.models import UndoResult
from annad.backups import manifest as manifests
from annad.backups.backup import BlobStore
from annad.backups.identity import matches_snapshot
from annad.backups.manifest import printable
from annad.backups.undofiles import Progress, undo_targets
from annad.confine.credentials import Identity
from annad.confine.runner import RunResult
from annad.execution.livekinds import live_only
from annad.execution.prestate import HelperRunner
from annad.execution.prestate_values import restore_value
from annad.execution.undo_actions import (
    identity_of,
    reload_managers,
    result,
    summary,
    undo_packages,
    undo_unit,
)

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from annad.backups.manifest import StepManifest, TargetSnapshot

TMP_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")
"""Temporary directories a user-scope step may write besides its home."""


class Runner(HelperRunner, Protocol):
    """What undo needs from :mod:`annad.confine.runner`."""

    def run_shell(self, command: str, *, timeout: float = ..., max_output: int = ...,
                  identity: Identity | None = ..., session: Mapping[str, str | None] | None = ...,
                  cwd: str | None = ..., on_output: Callable[[str], None] | None = ...,
                  cancel: threading.Event | None = ...,
                  on_spawn: Callable[[int], None] | None = ..., home: str | None = ...
                  ) -> RunResult:
        """Run a command with bash (``home``: HOME of a root command)."""


@dataclass
class UndoEnv:
    """What undoing needs besides the manifest."""

    runner: Runner
    blobs: BlobStore
    timeout: float
    max_output: int
    restrict_user_scope: bool
    """Restore a user-scope step's files only inside its home and temp dirs (root daemon)."""
    session: dict[str, str] | None = None
    """The caller's session now, for user-scope undo commands (else the one saved)."""
    progress: Progress = field(default_factory=Progress)
    """What this rollback restored or left in conflict so far (across its steps)."""
    capture: CaptureRollback | None = None
    """Runs a rollback command that is not a live kind captured and judged (None: no capture
    here, so such a command does not run)."""
    restored: tuple[str, ...] = ()
    """Every path the daemon restores from its own backups for this plan: a rollback
    command's change there is dropped (:func:`annad.execution.undoonce.drops`)."""
    every_step_captured: bool = False
    """Every step of the plan ran captured: a path no step changed was as it is now before
    the plan, so a rollback command's change there is a difference from the pre-plan state."""
    undone: list[tuple[StepManifest, TargetSnapshot]] = field(default_factory=list)
    """The targets this undo restored, each with its step (for the comparison at its end:
    :func:`annad.execution.undoonce.compare`)."""
    command_saved: list[tuple[StepManifest, TargetSnapshot]] = field(default_factory=list)
    """What a rollback command changed at paths no step changed, as it was before it ran."""


class CaptureRollback(Protocol):
    """What runs a rollback command captured (:mod:`annad.execution.rollback_capture`)."""

    def __call__(self, manifest: StepManifest, session: dict[str, str] | None,
                 restored: tuple[str, ...]) -> RollbackOutcome:
        """Run ``manifest``'s rollback command captured, judged and committed, its changes
        at or above ``restored`` dropped."""


class RollbackOutcome(Protocol):
    """Whether the captured rollback command landed, and what to report."""

    @property
    def ok(self) -> bool:
        """It ran, and what it changed was judged within its approval and landed."""

    @property
    def message(self) -> str:
        """What it changed, or why nothing of it landed."""

    @property
    def saved(self) -> list[TargetSnapshot]:
        """What was at each path it changed before it ran (the backups of its commit)."""


def allowed_roots(uid: int, home: str) -> tuple[str, ...]:
    """Where root may restore a user-scope step's files: the home the daemon resolved for
    ``uid`` (passwd, or the configured override; never ``/``), the temporary directories,
    and ``/run/user/<uid>`` when it is a real directory owned by ``uid``.

    Nothing here comes from the request: a session saying ``XDG_RUNTIME_DIR=/`` once let
    root restore ``/etc/shadow`` through a symlink in the home.
    """
    roots = [*TMP_ROOTS]
    if home.startswith("/") and posixpath.normpath(home) != "/":
        roots.insert(0, posixpath.normpath(home))
        # snapshots record symlink-free paths: a home under a root-made link (/home →
        # /var/home) is saved at its real place; the user cannot replace their home itself
        real = os.path.realpath(home)
        if real not in roots and real != "/":
            roots.insert(1, real)
    runtime = f"/run/user/{uid}"
    try:
        info = os.lstat(runtime)
    except OSError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode) and info.st_uid == uid:
        roots.append(runtime)
    return tuple(roots)


def undo_step(manifest: StepManifest, env: UndoEnv) -> list[UndoResult]:
    """Undo one step; every action is attempted and reported."""
    results: list[UndoResult] = []
    allowed = None
    if env.restrict_user_scope and manifest.scope == "user":
        allowed = allowed_roots(manifest.uid, manifest.home)
    command = manifest.rollback_command
    live = command is not None and live_only(command) is not None
    command_ok = None
    if command and not live:  # first: its changes at restored paths never land
        results.append(_captured_command(manifest, env))
        command_ok = results[-1].ok
    env.undone.extend((manifest, target) for target in manifest.targets)
    for done in undo_targets(manifest.targets, env.blobs, allowed, env.progress):
        results.append(result(manifest, done.action, done.target, done.ok, done.message))
    results.extend(_verified(manifest, results))
    if command and live:  # after the files it may need are back
        results.append(_live_command(manifest, env))
        command_ok = results[-1].ok
    if manifest.uncaptured:
        results.append(_uncaptured(manifest, command_ok))
    if manifest.unchecked:
        results.append(_unchecked(manifest, command_ok))
    for state in reversed(manifest.packages):
        results.extend(undo_packages(manifest, state, env.runner))
    results.extend(reload_managers(manifest, env.runner, env.session))
    for unit in reversed(manifest.units):
        results.append(undo_unit(manifest, unit, env.runner, env.session))
    for value in reversed(manifest.values):
        found = restore_value(env.runner, value, identity=identity_of(manifest),
                              env=dict(env.session or manifest.session))
        name = " ".join(value.key[-2:])
        results.append(result(manifest, "live_state", name, found.ok, found.message))
        if found.differs:  # read again and not as before: the undo is incomplete there
            results.append(result(manifest, "verify", name, False,
                                   f"{name} is not as it was before the plan after the undo "
                                   f"({ErrorCode.ROLLBACK_INCOMPLETE})"))
    return results


def _verified(manifest: StepManifest, done: list[UndoResult]) -> list[UndoResult]:
    """Every path an undo put back, compared with its recorded pre-state: an undo is only
    reported done for what is now as it was (``ROLLBACK_INCOMPLETE`` otherwise)."""
    restored = {r.target for r in done if r.ok and r.action in ("restore", "delete")}
    out = []
    for target in manifest.targets:
        if target.new_only or target.path not in restored or matches_snapshot(target):
            continue
        out.append(result(manifest, "verify", target.path, False,
                           f"{printable(target.path)} is not as it was before the plan after "
                           f"the undo ({ErrorCode.ROLLBACK_INCOMPLETE})"))
    return out


def missing_backups(step_dirs: list[Path], blobs: BlobStore) -> list[UndoResult]:
    """A saved file whose backup is missing or damaged, one result per path, for the steps
    of these directories (checked before anything is touched: a rollback never starts on
    backups it cannot finish with)."""
    out: list[UndoResult] = []
    for directory in step_dirs:
        with contextlib.suppress(OSError, ValueError):
            manifest = manifests.load(directory)
            if manifest is not None:
                out.extend(_missing(manifest, blobs))
    return out


def _missing(manifest: StepManifest, blobs: BlobStore) -> list[UndoResult]:
    out = []
    for target in manifest.targets:
        for entry in target.entries:
            if entry.kind != "file" or entry.sha256 is None:
                continue
            try:
                blobs.verify(entry.sha256)
            except OSError as exc:
                why = "missing" if isinstance(exc, FileNotFoundError) else "damaged"
                out.append(result(manifest, "backup_missing", entry.path, False,
                                   f"the backup of {printable(entry.path)} is {why}: nothing "
                                   "of this plan was touched"))
    return out


def _uncaptured(manifest: StepManifest, command_ok: bool | None) -> UndoResult:
    """A step whose writes Anna could not see is never reported undone on Anna's word."""
    if command_ok:
        return result(manifest, "uncaptured", "", True,
                       "Anna could not back up what this step wrote; the restore relied on the "
                       "plan's rollback command, which ran successfully")
    why = "its rollback command failed" if command_ok is False else "it has no rollback command"
    return result(manifest, "uncaptured", "", False,
                   f"Anna could not back up what this step wrote, and {why}: what it changed "
                   "is not restored")


def _unchecked(manifest: StepManifest, command_ok: bool | None) -> UndoResult:
    """What a live program with no typed pre-state changed is never reported undone: at most
    the plan's rollback command ran, which Anna cannot check."""
    programs = ", ".join(manifest.unchecked)
    if command_ok:
        return result(manifest, "unverified", programs, True,
                       f"Anna ran the rollback command for what {programs} changed on the "
                       "running system and it exited 0, but Anna records no state of it to "
                       "compare: the undo is not verified")
    why = "its rollback command failed" if command_ok is False else \
        "the plan gives no rollback command for it"
    return result(manifest, "unverified", programs, False,
                   f"{programs} changed the running system and {why}: it is not undone")


def _captured_command(manifest: StepManifest, env: UndoEnv) -> UndoResult:
    """A rollback command that writes files: judged on what it really changes, or not run."""
    command = manifest.rollback_command or ""
    if env.capture is None:
        return result(manifest, "rollback_command", command, False,
                       "the rollback command did not run: there is no capture to run it "
                       "in, and Anna does not run it live unseen")
    done = env.capture(manifest, env.session, env.restored)
    if env.every_step_captured:  # a path no step changed: before it, as before the plan
        env.command_saved.extend((manifest, target) for target in done.saved)
    return result(manifest, "rollback_command", command, done.ok, done.message)


def _live_command(manifest: StepManifest, env: UndoEnv) -> UndoResult:
    command = manifest.rollback_command or ""
    user = manifest.rollback_scope == "user"
    run = env.runner.run_shell(command, timeout=env.timeout, max_output=env.max_output,
                               identity=identity_of(manifest) if user else None,
                               session=env.session or manifest.session,
                               cwd=manifest.home if user else "/", home=manifest.home)
    return result(manifest, "rollback_command", command, run.ok, summary(run))
