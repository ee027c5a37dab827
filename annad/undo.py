"""Undoing one step from its manifest, in the order the contract gives.

1. restore the file snapshots (byte-exact; what was absent is deleted again);
2. run the plan's rollback command for the step, if it has one;
3. invert recognised actions: reinstall from the package cache what the step
   removed or changed, remove only the packages it newly installed, and put
   unit enablement and activity back.

Each action yields an :class:`~anna_common.protocol.UndoResult`; a failing one
is reported and the rest still run.
"""

from __future__ import annotations

import glob
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from anna_common.protocol import UndoResult
from annad.backup import BackupRefused, BlobStore
from annad.prestate import HelperRunner, query_packages, unit_state
from annad.restore import restore_target
from annad.runner import Identity, RunResult

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Mapping

    from annad.manifest import PackageState, StepManifest, UnitState

TMP_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")
"""Temporary directories a user-scope step may write besides its home."""


class Runner(HelperRunner, Protocol):
    """What undo needs from :mod:`annad.runner`."""

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


def identity_of(manifest: StepManifest) -> Identity:
    """The identity user-scope commands of this step ran as."""
    return Identity(uid=manifest.uid, gid=manifest.gid, groups=tuple(manifest.groups),
                    home=manifest.home, user=manifest.user)


def _result(manifest: StepManifest, action: str, target: str, ok: bool, message: str
            ) -> UndoResult:
    return UndoResult(step_id=manifest.step_id, action=action, target=target[:500], ok=ok,
                      message=message[-2000:])


def _summary(result: RunResult) -> str:
    if result.error:
        return result.error
    if result.timed_out:
        return "timed out"
    tail = result.output.strip()[-500:]
    return f"exit {result.exit_code}" + (f": {tail}" if tail else "")


def undo_step(manifest: StepManifest, env: UndoEnv) -> list[UndoResult]:
    """Undo one step; every action is attempted and reported."""
    results: list[UndoResult] = []
    allowed = None
    if env.restrict_user_scope and manifest.scope == "user":
        runtime = manifest.session.get("XDG_RUNTIME_DIR")
        allowed = (manifest.home, *TMP_ROOTS, *([runtime] if runtime else []))
    for target in reversed(manifest.targets):
        try:
            action = restore_target(target, env.blobs, allowed)
            results.append(_result(manifest, action, target.path, True,
                                   "deleted (it did not exist before)" if action == "delete"
                                   else "restored byte-exact"))
        except (OSError, ValueError) as exc:
            results.append(_result(manifest, "restore", target.path, False, str(exc)))
    if manifest.rollback_command:
        results.append(_rollback_command(manifest, env))
    for state in reversed(manifest.packages):
        results.extend(_undo_packages(manifest, state, env.runner))
    for unit in reversed(manifest.units):
        results.append(_undo_unit(manifest, unit, env.runner, env.session))
    return results


def _rollback_command(manifest: StepManifest, env: UndoEnv) -> UndoResult:
    command = manifest.rollback_command or ""
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
    return results


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
        return _result(manifest, "unit_state", before.unit, True,
                       f"already {before.enabled}/{before.active}")
    scope = ["--user"] if before.user else []
    failures = []
    for verb in verbs:
        run = runner.run_argv(["systemctl", *scope, verb, "--", before.unit], timeout=120,
                              identity=identity, env=env)
        if not run.ok:
            failures.append(f"{verb}: {_summary(run)}")
    message = "; ".join(failures) if failures else "ran " + ", ".join(verbs)
    return _result(manifest, "unit_state", before.unit, not failures, message)
