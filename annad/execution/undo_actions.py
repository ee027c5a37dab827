"""Undoing what a step did through recognised programs: packages and units.

Reinstall from the package cache what the step removed or changed, remove only the packages
it newly installed, and put unit enablement and activity back; each is read again afterwards
(never taken on the program's exit status). Also the result helpers of
:mod:`annad.execution.undo`.
"""

from __future__ import annotations

import glob
import posixpath
from typing import TYPE_CHECKING

from anna_common.protocol.models import UndoResult
from annad.backups.backup import BackupRefused
from annad.backups.manifest import printable
from annad.confine.credentials import Identity
from annad.execution.prestate import HelperRunner, query_packages, unit_state

if TYPE_CHECKING:
    from annad.backups.manifest import PackageState, StepManifest, UnitState
    from annad.confine.runner import RunResult


def identity_of(manifest: StepManifest) -> Identity:
    """The identity user-scope commands of this step ran as."""
    return Identity(uid=manifest.uid, gid=manifest.gid, groups=tuple(manifest.groups),
                    home=manifest.home, user=manifest.user)


def result(manifest: StepManifest, action: str, target: str, ok: bool, message: str
            ) -> UndoResult:
    return UndoResult(step_id=manifest.step_id, action=action, target=printable(target)[:500],
                      ok=ok, message=printable(message)[-2000:])


def summary(result: RunResult) -> str:
    if result.error:
        return result.error
    if result.timed_out:
        return "timed out"
    tail = result.output.strip()[-500:]
    return f"exit {result.exit_code}" + (f": {tail}" if tail else "")


# --------------------------------------------------------------------------- packages


def _cache_dir(state: PackageState) -> str:
    opts = dict(zip(state.options[::2], state.options[1::2], strict=True))
    if "--cachedir" in opts:
        return opts["--cachedir"]
    return posixpath.join(opts.get("--root", "/"), "var/cache/pacman/pkg")


def undo_packages(manifest: StepManifest, state: PackageState, runner: HelperRunner
                   ) -> list[UndoResult]:
    try:
        current = query_packages(runner, state.options)
    except BackupRefused as exc:
        return [result(manifest, "remove_packages", "", False, str(exc))]
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
            results.append(result(manifest, "reinstall_packages", " ".join(changed), False,
                                   "no cached package for " + ", ".join(missing)
                                   + "; reinstall it by hand"))
        else:
            run = runner.run_argv(["pacman", *state.options, "-U", "--noconfirm",
                                   *files], timeout=1800)
            results.append(result(manifest, "reinstall_packages", " ".join(changed), run.ok,
                                   summary(run)))
    # only what this step installed (what was there after it and not before it)
    installed = set(state.after if state.after is not None else current) - set(state.before)
    remove = sorted(n for n in installed if n in current)
    if remove:
        run = runner.run_argv(["pacman", *state.options, "-R", "--noconfirm", *remove],
                              timeout=1800)
        results.append(result(manifest, "remove_packages", " ".join(remove), run.ok,
                               summary(run)))
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
        return [result(manifest, "packages_checked", "", False,
                        f"cannot check the packages: {exc}")]
    wrong = [f"{n} {now.get(n, 'absent')} (was {state.before.get(n, 'absent')})"
             for n in names if now.get(n) != state.before.get(n)]
    if not wrong:
        return []
    return [result(manifest, "packages_checked", " ".join(names), False,
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


def undo_unit(manifest: StepManifest, before: UnitState, runner: HelperRunner,
               session: dict[str, str] | None) -> UndoResult:
    identity = identity_of(manifest) if before.user else None
    env = dict(session or manifest.session) if before.user else {}
    now = unit_state(runner, before.unit, user=before.user, identity=identity, env=env)
    verbs = _unit_commands(before, now)
    if not verbs:
        return _unitresult(manifest, before, f"already {before.enabled}/{before.active}")
    scope = ["--user"] if before.user else []
    failures = []
    for verb in verbs:
        run = runner.run_argv(["systemctl", *scope, verb, "--", before.unit], timeout=120,
                              identity=identity, env=env)
        if not run.ok:
            failures.append(f"{verb}: {summary(run)}")
    if failures:
        return result(manifest, "unit_state", before.unit, False, "; ".join(failures))
    # read again: the verbs exiting 0 is systemctl's word, the state is the check
    again = unit_state(runner, before.unit, user=before.user, identity=identity, env=env)
    if (again.enabled, again.active) != (before.enabled, before.active):
        return result(manifest, "unit_state", before.unit, False,
                       f"ran {', '.join(verbs)}, but it is {again.enabled}/{again.active} "
                       f"now, not {before.enabled}/{before.active} as before the plan")
    return _unitresult(manifest, before,
                        f"ran {', '.join(verbs)}; read again: {again.enabled}/{again.active}")


def _unitresult(manifest: StepManifest, before: UnitState, done: str) -> UndoResult:
    """A unit put back: checked (``unit_state``), unless the step ran the unit's own programs,
    whose effects nobody saw (``unverified``: the rollback is never ``rolled_back``)."""
    if not before.ran:
        return result(manifest, "unit_state", before.unit, True, done)
    return result(manifest, "unverified", before.unit, True,
                   f"{done}; but {'; '.join(before.ran)}, and what they did Anna did not see: "
                   "the unit's state is back, the rest is not verified")


def reload_managers(manifest: StepManifest, runner: HelperRunner,
                    session: dict[str, str] | None) -> list[UndoResult]:
    """A step's ``daemon-reload`` needs no undo; the manager is told to reload once more, so
    it reads the unit files the undo put back (its exit status is the result)."""
    out = []
    for scope in manifest.reloads:
        user = scope == "user"
        run = runner.run_argv(["systemctl", *(["--user"] if user else []), "daemon-reload"],
                              timeout=120, identity=identity_of(manifest) if user else None,
                              env=dict(session or manifest.session) if user else {})
        out.append(result(manifest, "daemon_reload", scope, run.ok,
                          "the manager reads the restored unit files" if run.ok else
                          summary(run)))
    return out
