"""One approved step, captured: run, read back, judge, back up, commit (or refuse).

The executor's path for every step that is not a live kind (:mod:`annad.execution.livekinds`)
on a daemon that can build the capture (root). In order:

1. :func:`annad.capture.layers.run_step` runs the step over overlays; it returns once
   the step and whatever it left running have been killed and reaped (the capture helper is
   their subreaper), so nothing writes into the upper layers while they are read;
2. a failed step lands nothing (its upper layers are discarded), like a refused one;
3. :func:`annad.capture.layers.read_back` gives the change set and
   :func:`annad.capture.judge.judge` decides; a refusal names each change and why;
4. :func:`annad.capture.commit.backup_targets` saves the originals of exactly the observed
   paths into the step's manifest, :func:`annad.capture.commit.prepare` writes the commit
   record and the journal's record of the backups and flushes it all at once (one
   ``syncfs`` per file system), then :func:`annad.capture.commit.apply` lands it.
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from anna_common.errors import ErrorCode
from annad.backups import manifest as manifests
from annad.backups.backup import BackupRefused, BlobStore, Budget
from annad.backups.manifest import printable
from annad.backups.trash import remove_tree
from annad.capture import commit
from annad.capture.bounds import TooMuch, Watch
from annad.capture.judge import Approval, Verdict, judge
from annad.capture.layers import (
    LAYERS,
    PLAN_FILE,
    ROOT,
    read_back,
    run_step,
    upper_problem,
)
from annad.confine.capture_run import probe_userns
from annad.confine.filters import FilterUnavailable
from annad.confine.runner import RunResult

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from annad.backups.manifest import StepManifest
    from annad.backups.trash import Trash
    from annad.capture.layers import Change
    from annad.stepspec import Limits, StepSpec, Who


log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 30.0
"""Bound on the one probe of a per-user daemon's capture (a helper's start and a mount)."""


@dataclass
class Captured:
    """What a captured step came to."""

    result: RunResult
    verdict: Verdict | None = None
    """The judgement of its change set (None: it failed before one was read)."""
    refusal: str | None = None
    """Why nothing landed although the step succeeded (judge or backup refusal)."""
    code: ErrorCode = ErrorCode.OBSERVED_CHANGE_REFUSED
    """Why nothing (or not all) of it landed: the judge refused it (the default), the backups
    could not be written (``BACKUP_REFUSED``), the capture cannot be built here
    (``CAPTURE_UNAVAILABLE``), or the commit failed half way (``EXECUTION_FAILED``: what
    landed of it is undone with the step)."""
    dropped: list[str] = field(default_factory=list)
    """Observed paths left out of the commit (:attr:`StepRun.skip`), never landed."""


@dataclass(frozen=True)
class StepRun:
    """The step, whose it is, where its record lives, and how to report."""

    step: StepSpec
    who: Who
    directory: Path
    blobs_dir: Path
    limits: Limits
    on_output: Callable[[str], None]
    on_spawn: Callable[[int], None]
    cancel: threading.Event
    trash: Trash | None = None
    """Where the step's layers go when done with (None: removed at once)."""
    recorded: Callable[[StepManifest], None] | None = None
    """Called once the backups and the commit record are written, before they are flushed
    and anything lands: the journal's record of them, written unflushed — the flush of
    :attr:`journal` makes it durable with them (raises BackupRefused: nothing lands)."""
    journal: Path | None = None
    """The journal's file, flushed with the backups (its file system's ``syncfs``)."""
    skip: Callable[[Change], bool] | None = None
    """Observed changes never judged nor landed (a rollback command's at a path the daemon
    restores from its own backup: :mod:`annad.execution.undoonce`)."""


def availability(state: Path, *, enabled: bool, python: str | None) -> str | None:
    """Why this daemon cannot capture its steps, or None. Root can; a per-user daemon asks
    a capture helper to try (:func:`annad.confine.capture_run.probe_userns`) in a fresh
    directory of its state disk, once, unless the setting ``capture_userns`` says not to."""
    if os.geteuid() == 0:
        return None
    if not enabled:
        return "the capture in a user namespace is turned off (capture_userns = false)"
    # a state disk that cannot hold upper layers (an overlay root: a container booted on an
    # image) fails the probe with a bare EINVAL from mount: say the reason instead
    problem = upper_problem(state, Path("/proc/self/mountinfo").read_text())
    if problem is not None:
        log.warning("this per-user daemon cannot capture its steps (%s): its file steps are "
                    "HIGH, they run live and Anna cannot undo them", problem)
        return f"no overlay in a user namespace here: {problem}"
    top = state / f"capture-probe-{os.getpid()}"
    try:
        remove_tree(top)
        top.mkdir(mode=0o700, parents=True)
    except OSError as exc:
        return f"no room to try the capture on the state disk: {printable(str(exc))}"
    try:
        why = probe_userns(top, timeout=PROBE_TIMEOUT_S, python=python)
    finally:
        remove_tree(top)
    if why is None:
        return None
    log.warning("this per-user daemon cannot capture its steps (%s): its file steps are HIGH, "
                "they run live and Anna cannot undo them", why)
    return f"no overlay in a user namespace here: {printable(why)}"


def discard(directory: Path, trash: Trash | None = None) -> None:
    """Drop a capture that must not land or has landed: its layers go into ``trash`` (one
    rename; a background thread removes them) or, without one, are removed here."""
    if trash is not None:
        trash.throw(directory / LAYERS)
    else:
        remove_tree(directory / LAYERS)
    with contextlib.suppress(OSError):
        (directory / ROOT).rmdir()  # where a daemon before the layers held it put it
    (directory / PLAN_FILE).unlink(missing_ok=True)


def _too_much(result: RunResult, why: str) -> Captured:
    """A step whose change set is past the limits: refused, nothing of it landed."""
    result.exit_code, result.cancelled = None, False  # the watch's stop is not the person's
    result.error = why
    return Captured(result, None, f"{why}; nothing of it landed",
                    ErrorCode.OBSERVED_CHANGE_TOO_LARGE)


def _split(changes: list[Change], skip: Callable[[Change], bool] | None
           ) -> tuple[list[Change], list[str]]:
    """The changes to judge and land, and the paths of those left out (:attr:`StepRun.skip`)."""
    if skip is None:
        return changes, []
    return [c for c in changes if not skip(c)], [c.path for c in changes if skip(c)]


class _Unflushed(OSError):
    """The journal recorded the backups but they could not be flushed: nothing landed; the
    manifest stays, so the step's undo finds what the journal says is saved."""


def _save(run_: StepRun, record: StepManifest, changes: list[Change]) -> None:
    """The originals of the observed paths, the manifest, the commit record and the
    journal's record of them, flushed together: all on disk before anything lands."""
    blobs = BlobStore(run_.blobs_dir, flushed=False)  # flushed once, by commit.prepare
    record.targets = commit.backup_targets(
        changes, blobs, Budget(run_.limits.backup_max_bytes, run_.limits.backup_max_files))
    record.notes.append(f"captured: {len(changes)} change(s) observed and committed")
    manifests.save(run_.directory, record, flush=False)
    journalled = False

    def recorded() -> None:
        nonlocal journalled
        if run_.recorded is not None:
            run_.recorded(record)
            journalled = True

    try:
        commit.prepare(run_.directory, changes, blobs=run_.blobs_dir, recorded=recorded,
                       also=(run_.journal,) if run_.journal is not None else ())
    except OSError as exc:
        if journalled:
            raise _Unflushed(exc.errno, exc.strerror or str(exc)) from exc
        raise


def run(run_: StepRun, record: StepManifest, approval: Approval) -> Captured:
    """Run one step captured; see the module text."""
    problem = upper_problem(run_.directory, Path("/proc/self/mountinfo").read_text())
    if problem is not None:  # refused before it runs: it never runs live instead
        why = f"the step did not run: {problem}"
        return Captured(RunResult(exit_code=None, output="", error=why), None, why,
                        ErrorCode.CAPTURE_UNAVAILABLE)
    bounds = run_.limits.capture
    try:
        run_.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        # the state disk is watched while the step runs: its layers cannot fill it
        with Watch(run_.directory, bounds, run_.cancel) as watch:
            capture = run_step(run_.step, run_.who, run_.directory,
                               timeout=run_.limits.step_timeout_s,
                               max_output=run_.limits.max_output, on_output=run_.on_output,
                               cancel=watch.stop, on_spawn=run_.on_spawn,
                               python=run_.limits.confine_python)
    except OSError as exc:  # no room on the state disk for the layers: the step never ran
        discard(run_.directory, run_.trash)
        return Captured(RunResult(exit_code=None, output="", error="the capture could not be "
                                  f"set up, so the step did not run: {printable(str(exc))}"))
    except FilterUnavailable as exc:  # never less confined: the step does not run at all
        discard(run_.directory, run_.trash)
        why = f"the step did not run: {exc}"
        return Captured(RunResult(exit_code=None, output="", error=why), None, why,
                        ErrorCode.CAPTURE_UNAVAILABLE)
    if watch.why is not None:  # stopped for its size: refused, whatever it printed
        discard(run_.directory, run_.trash)
        return _too_much(capture.result, watch.why)
    if not capture.result.ok:
        discard(run_.directory, run_.trash)
        return Captured(capture.result)
    try:
        changes = read_back(run_.directory, capture.layers, bounds)
    except TooMuch as exc:
        discard(run_.directory, run_.trash)
        return _too_much(capture.result, str(exc))
    except OSError as exc:  # a directory the step made unreadable to this uid (chmod 0)
        discard(run_.directory, run_.trash)
        return Captured(capture.result, None, "what the step changed cannot be read back "
                        f"({printable(str(exc))}), so it cannot be checked; nothing of it "
                        "landed")
    changes, dropped = _split(changes, run_.skip)
    verdict = judge(changes, approval, run_.who.uid)
    if verdict.refused:
        discard(run_.directory, run_.trash)
        shown = "; ".join(verdict.refused[:20]) + (
            f"; and {len(verdict.refused) - 20} more" if len(verdict.refused) > 20 else "")
        return Captured(capture.result, verdict,
                        f"what the step really changed was refused, nothing of it landed: "
                        f"{shown}")
    if not changes:
        discard(run_.directory, run_.trash)
        return Captured(capture.result, verdict, dropped=dropped)
    try:
        _save(run_, record, changes)
    except (BackupRefused, OSError) as exc:
        commit.abandon(run_.directory)
        discard(run_.directory, run_.trash)
        if not isinstance(exc, _Unflushed):
            (run_.directory / manifests.MANIFEST).unlink(missing_ok=True)
        return Captured(capture.result, verdict, f"cannot back up what the step changed: "
                        f"{printable(str(exc))}; nothing of it landed", ErrorCode.BACKUP_REFUSED)
    try:
        commit.apply(run_.directory, changes)
    except OSError as exc:  # a full target disk, a directory swapped for a link meanwhile
        commit.abandon(run_.directory)
        discard(run_.directory, run_.trash)
        why = printable(exc.strerror or str(exc))
        return Captured(capture.result, verdict, f"what the step changed could not land "
                        f"({why}{': ' + printable(exc.filename) if exc.filename else ''}); "
                        "what landed of it is undone", ErrorCode.EXECUTION_FAILED)
    discard(run_.directory, run_.trash)
    return Captured(capture.result, verdict, dropped=dropped)
