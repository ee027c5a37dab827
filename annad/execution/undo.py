"""Undoing one step from its manifest, in the order the contract gives.

1. restore the file snapshots (byte-exact; what was absent is deleted again),
   except what someone changed since the plan ran (:mod:`annad.backups.undofiles`);
2. run the plan's rollback command for the step, if it has one: live when it is a live
   kind and nothing else (:func:`annad.execution.livekinds.live_only`), else captured and
   judged like a step (:mod:`annad.execution.rollback_capture`, :attr:`UndoEnv.capture`),
   never live unseen;
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
import glob
import os
import posixpath
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from anna_common.errors import ErrorCode
from anna_common.protocol.models import UndoResult
from annad.backups import manifest as manifests
from annad.backups.backup import BackupRefused, BlobStore
from annad.backups.identity import matches_snapshot
from annad.backups.manifest import printable
from annad.backups.undofiles import Progress, undo_targets
from annad.confine.credentials import Identity
from annad.confine.runner import RunResult
from annad.execution.livekinds import live_only
from annad.execution.prestate import HelperRunner, query_packages, unit_state
from annad.execution.prestate_values import restore_value

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from annad.backups.manifest import PackageState, StepManifest, UnitState

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


class CaptureRollback(Protocol):
    """What runs a rollback command captured (:mod:`annad.execution.rollback_capture`)."""

    def __call__(self, manifest: StepManifest, session: dict[str, str] | None
                 ) -> RollbackOutcome:
        """Run ``manifest``'s rollback command captured, judged and committed."""


class RollbackOutcome(Protocol):
    """Whether the captured rollback command landed, and what to report."""

    @property
    def ok(self) -> bool:
        """It ran, and what it changed was judged within its approval and landed."""

    @property
    def message(self) -> str:
        """What it changed, or why nothing of it landed."""


def identity_of(manifest: StepManifest) -> Identity:
    """The identity user-scope commands of this step ran as."""
    return Identity(uid=manifest.uid, gid=manifest.gid, groups=tuple(manifest.groups),
                    home=manifest.home, user=manifest.user)


def _result(manifest: StepManifest, action: str, target: str, ok: bool, message: str
            ) -> UndoResult:
    return UndoResult(step_id=manifest.step_id, action=action, target=printable(target)[:500],
                      ok=ok, message=printable(message)[-2000:])


def _summary(result: RunResult) -> str:
    if result.error:
        return result.error
    if result.timed_out:
        return "timed out"
    tail = result.output.strip()[-500:]
    return f"exit {result.exit_code}" + (f": {tail}" if tail else "")


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
    for done in undo_targets(manifest.targets, env.blobs, allowed, env.progress):
        results.append(_result(manifest, done.action, done.target, done.ok, done.message))
    results.extend(_verified(manifest, results))
    command_ok = None
    if manifest.rollback_command:
        results.append(_rollback_command(manifest, env))
        command_ok = results[-1].ok
    if manifest.uncaptured:
        results.append(_uncaptured(manifest, command_ok))
    if manifest.unchecked:
        results.append(_unchecked(manifest, command_ok))
    for state in reversed(manifest.packages):
        results.extend(_undo_packages(manifest, state, env.runner))
    for unit in reversed(manifest.units):
        results.append(_undo_unit(manifest, unit, env.runner, env.session))
    for value in reversed(manifest.values):
        found = restore_value(env.runner, value, identity=identity_of(manifest),
                              env=dict(env.session or manifest.session))
        name = " ".join(value.key[-2:])
        results.append(_result(manifest, "live_state", name, found.ok, found.message))
        if found.differs:  # read again and not as before: the undo is incomplete there
            results.append(_result(manifest, "verify", name, False,
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
        out.append(_result(manifest, "verify", target.path, False,
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
                out.append(_result(manifest, "backup_missing", entry.path, False,
                                   f"the backup of {printable(entry.path)} is {why}: nothing "
                                   "of this plan was touched"))
    return out


def _uncaptured(manifest: StepManifest, command_ok: bool | None) -> UndoResult:
    """A step whose writes Anna could not see is never reported undone on Anna's word."""
    if command_ok:
        return _result(manifest, "uncaptured", "", True,
                       "Anna could not back up what this step wrote; the restore relied on the "
                       "plan's rollback command, which ran successfully")
    why = "its rollback command failed" if command_ok is False else "it has no rollback command"
    return _result(manifest, "uncaptured", "", False,
                   f"Anna could not back up what this step wrote, and {why}: what it changed "
                   "is not restored")


def _unchecked(manifest: StepManifest, command_ok: bool | None) -> UndoResult:
    """What a live program with no typed pre-state changed is never reported undone: at most
    the plan's rollback command ran, which Anna cannot check."""
    programs = ", ".join(manifest.unchecked)
    if command_ok:
        return _result(manifest, "unverified", programs, True,
                       f"Anna ran the rollback command for what {programs} changed on the "
                       "running system and it exited 0, but Anna records no state of it to "
                       "compare: the undo is not verified")
    why = "its rollback command failed" if command_ok is False else \
        "the plan gives no rollback command for it"
    return _result(manifest, "unverified", programs, False,
                   f"{programs} changed the running system and {why}: it is not undone")


def _rollback_command(manifest: StepManifest, env: UndoEnv) -> UndoResult:
    command = manifest.rollback_command or ""
    if live_only(command) is None:  # files: judged on what it really changes, or not run
        if env.capture is None:
            return _result(manifest, "rollback_command", command, False,
                           "the rollback command did not run: there is no capture to run it "
                           "in, and Anna does not run it live unseen")
        done = env.capture(manifest, env.session)
        return _result(manifest, "rollback_command", command, done.ok, done.message)
    user = manifest.rollback_scope == "user"
    run = env.runner.run_shell(command, timeout=env.timeout, max_output=env.max_output,
                               identity=identity_of(manifest) if user else None,
                               session=env.session or manifest.session,
                               cwd=manifest.home if user else "/", home=manifest.home)
    return _result(manifest, "rollback_command", command, run.ok, _summary(run))


# --------------------------------------------------------------------------- packages


def _cache_dir(state: PackageState) -> str:
    opts = dict(zip(state.options[::2], state.options[1::2], strict=True))
    if "--cachedir" in opts:
        return opts["--cachedir"]
    return posixpath.join(opts.get("--root", "/"), "var/cache/pacman/pkg")


def _undo_packages(manifest: StepManifest, state: PackageState, runner: HelperRunner
                   ) -> list[UndoResult]:
    try:
        current = query_packages(runner, state.options)
    except BackupRefused as exc:
        return [_result(manifest, "remove_packages", "", False, str(exc))]
    results = []
    changed = {n: v for n, v in state.before.items() if current.get(n) != v}
    if changed:
        files, missing = [], []
        for name, version in sorted(changed.items()):
            found = [f for f in glob.glob(posixpath.join(  # noqa: PTH207 - escaped pattern
                glob.escape(_cache_dir(state)), f"{glob.escape(name)}-{glob.escape(version)}-*"
                ".pkg.tar*")) if not f.endswith(".sig")]
            (files.append(found[0]) if found else missing.append(f"{name} {version}"))
        if missing:
            results.append(_result(manifest, "reinstall_packages", " ".join(changed), False,
                                   "no cached package for " + ", ".join(missing)
                                   + "; reinstall it by hand"))
        else:
            run = runner.run_argv(["pacman", *state.options, "-U", "--noconfirm",
                                   *files], timeout=1800)
            results.append(_result(manifest, "reinstall_packages", " ".join(changed), run.ok,
                                   _summary(run)))
    # only what this step installed (what was there after it and not before it)
    installed = set(state.after if state.after is not None else current) - set(state.before)
    remove = sorted(n for n in installed if n in current)
    if remove:
        run = runner.run_argv(["pacman", *state.options, "-R", "--noconfirm", *remove],
                              timeout=1800)
        results.append(_result(manifest, "remove_packages", " ".join(remove), run.ok,
                               _summary(run)))
    if (changed or remove) and all(r.ok for r in results):
        results.extend(_packages_checked(manifest, state, runner, [*changed, *remove]))
    return results


def _packages_checked(manifest: StepManifest, state: PackageState, runner: HelperRunner,
                      names: list[str]) -> list[UndoResult]:
    """The database read again after pacman said it restored ``names``: each is at its
    version from before the step, or absent if it was (never on pacman's exit status)."""
    try:
        now = query_packages(runner, state.options)
    except BackupRefused as exc:
        return [_result(manifest, "packages_checked", "", False,
                        f"cannot check the packages: {exc}")]
    wrong = [f"{n} {now.get(n, 'absent')} (was {state.before.get(n, 'absent')})"
             for n in names if now.get(n) != state.before.get(n)]
    if not wrong:
        return []
    return [_result(manifest, "packages_checked", " ".join(names), False,
                    "after the undo, the package database differs from before the step: "
                    + ", ".join(wrong))]


# --------------------------------------------------------------------------- units


def _unit_commands(before: UnitState, now: UnitState) -> list[str]:
    verbs: list[str] = []
    if before.enabled != now.enabled:
        if now.enabled == "masked":
            verbs.append("unmask")
        if before.enabled == "masked":
            verbs.append("mask")
        elif before.enabled in ("enabled", "enabled-runtime"):
            verbs.append("enable")
        elif before.enabled == "disabled":
            verbs.append("disable")
    if before.active != now.active:
        if before.active == "active":
            verbs.append("start")
        elif before.active in ("inactive", "failed"):
            verbs.append("stop")
    return verbs


def _undo_unit(manifest: StepManifest, before: UnitState, runner: HelperRunner,
               session: dict[str, str] | None) -> UndoResult:
    identity = identity_of(manifest) if before.user else None
    env = dict(session or manifest.session) if before.user else {}
    now = unit_state(runner, before.unit, user=before.user, identity=identity, env=env)
    verbs = _unit_commands(before, now)
    if not verbs:
        return _unit_result(manifest, before, f"already {before.enabled}/{before.active}")
    scope = ["--user"] if before.user else []
    failures = []
    for verb in verbs:
        run = runner.run_argv(["systemctl", *scope, verb, "--", before.unit], timeout=120,
                              identity=identity, env=env)
        if not run.ok:
            failures.append(f"{verb}: {_summary(run)}")
    if failures:
        return _result(manifest, "unit_state", before.unit, False, "; ".join(failures))
    # read again: the verbs exiting 0 is systemctl's word, the state is the check
    again = unit_state(runner, before.unit, user=before.user, identity=identity, env=env)
    if (again.enabled, again.active) != (before.enabled, before.active):
        return _result(manifest, "unit_state", before.unit, False,
                       f"ran {', '.join(verbs)}, but it is {again.enabled}/{again.active} "
                       f"now, not {before.enabled}/{before.active} as before the plan")
    return _unit_result(manifest, before,
                        f"ran {', '.join(verbs)}; read again: {again.enabled}/{again.active}")


def _unit_result(manifest: StepManifest, before: UnitState, done: str) -> UndoResult:
    """A unit put back: checked (``unit_state``), unless the step ran the unit's own programs,
    whose effects nobody saw (``unverified``: the rollback is never ``rolled_back``)."""
    if not before.ran:
        return _result(manifest, "unit_state", before.unit, True, done)
    return _result(manifest, "unverified", before.unit, True,
                   f"{done}; but {'; '.join(before.ran)}, and what they did Anna did not see: "
                   "the unit's state is back, the rest is not verified")
