"""Compute a plan's preview at submit: one overlay run for the file and unit steps, typed
previews for pacman, validators on the previewed files, a plain reason for everything else.

Nothing here writes outside the preview confinement: file steps and offline ``systemctl
--root`` calls run over a throw-away overlay (:mod:`annad.preview.overlay`), ``pacman
--print`` and validators in the read-only confinement of checks, and the current unit states
come from read verbs. The result is data for the person; only a failed validator feeds back
into the risk, and only upwards (:func:`raise_failed`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anna_common.annotate import raise_to_high
from anna_common.errors import ErrorCode, PlanError
from anna_common.findings import Finding, FindingCode
from anna_common.plan import RiskLevel
from anna_common.protocol.models import DaemonMode, SessionEnv
from anna_common.protocol.preview import PlanPreview, StepPreview
from anna_common.protocol.routes import FAILED_IN_PREVIEW
from anna_common.risk.assess import Scope
from annad.capture.versus_preview import shown_by_key
from annad.journal.integrity import PREVIEWED_KIND
from annad.journal.records import who_of
from annad.preview import overlay, pacman, systemd, validators
from annad.preview.diff import Reader, Tracker
from annad.preview.kinds import step_kind

if TYPE_CHECKING:
    from pathlib import Path

    from anna_common.findings import AnnotatedPlan, AnnotatedStep
    from anna_common.protocol.preview import FileChange
    from annad.config import DaemonSettings
    from annad.journal.store import Journal
    from annad.stepspec import Who

log = logging.getLogger(__name__)

OUTPUT_SHOWN = 600
"""Characters of a failing step's preview output shown with the reason."""


@dataclass(frozen=True, slots=True)
class Options:
    """How previews are made on this daemon."""

    user_mode: bool = False
    """A per-user daemon: only user-scope steps can be previewed."""
    dbpath: Path | None = None
    """pacman database for steps that name none (the daemon's ``pacman_dbpath``)."""
    validator_path: tuple[str, ...] = ()
    """Directories searched for validators before PATH."""
    python: str | None = None
    """Interpreter of the confinement helpers."""
    limits: overlay.Limits = field(default_factory=overlay.Limits)
    """Caps of the overlay run."""


@dataclass(slots=True)
class _Pending:
    steps: list[overlay.FileStep] = field(default_factory=list)
    units: dict[int, list[systemd.UnitCall]] = field(default_factory=dict)


def compute(annotated: AnnotatedPlan, who: Who, options: Options) -> PlanPreview:
    """The preview of every step of ``annotated`` (never raises for a bad step)."""
    started = time.monotonic()
    previews: list[StepPreview] = []
    pending = _Pending()
    for index, step in enumerate(annotated.steps):
        previews.append(_plan_step(index, step, who, options, pending))
    more = 0
    if pending.steps:
        more = _overlay(pending, previews, who, options)
    for index, calls in pending.units.items():
        if not previews[index].units and not any(s.index == index for s in pending.steps):
            previews[index].units = systemd.changes(calls, {}, who)
    return PlanPreview(steps=previews, duration_ms=round((time.monotonic() - started) * 1000, 1),
                       more_lines=more)


def _plan_step(index: int, step: AnnotatedStep, who: Who, options: Options,
               pending: _Pending) -> StepPreview:
    """The step's preview where it needs no overlay; queue it for the overlay otherwise."""
    kind = step_kind(step.command)
    preview = StepPreview(step_id=step.id, kind=kind.kind, reason=kind.reason)
    system = step.scope == Scope.SYSTEM
    if system and options.user_mode and kind.kind != "none":
        return StepPreview(step_id=step.id, kind="none", reason="needs root: the per-user "
                           "daemon cannot preview system steps")
    if kind.kind == "files":
        if step.final_risk == RiskLevel.INFO:
            return preview  # runs read-only confined at execution: it changes nothing
        pending.steps.append(overlay.FileStep(index, step.command, system))
    elif kind.kind == "packages":
        try:
            preview.packages = pacman.preview(step.command, who.identity(),
                                              root_read=not options.user_mode,
                                              dbpath=options.dbpath, python=options.python)
        except pacman.PacmanPreviewError as exc:
            preview.reason = str(exc)
    elif kind.kind == "units":
        calls = systemd.unit_calls(step.command)
        pending.units[index] = calls
        command = systemd.overlay_command(calls)
        if command is not None and not options.user_mode:
            pending.steps.append(overlay.FileStep(index, command, True))
    return preview


def _overlay(pending: _Pending, previews: list[StepPreview], who: Who, options: Options
             ) -> int:
    """Run the queued steps over one overlay and fill in their previews; the diff lines
    the per-plan cap left out."""
    run = overlay.run(pending.steps, who, limits=options.limits, python=options.python,
                      validators=validators.overlay_rules(options.validator_path))
    tracker = Tracker(run.overlays)
    for step in pending.steps:
        preview = previews[step.index]
        result = run.steps.get(step.index)
        if result is None:
            preview.reason = f"no preview: {run.error}" if run.error else \
                "not previewed: an earlier step failed in the preview"
            preview.code = str(run.code) if run.code is not None else None
            continue
        reader = None if step.system else Reader(who.uid, tuple(who.groups))
        preview.files = tracker.step(result.entries, reader)
        if step.index in pending.units:
            preview.units = systemd.changes(pending.units[step.index],
                                            systemd.answers(result.output), who)
        if result.more:
            preview.reason = f"the preview shows {len(result.entries)} changed paths; " \
                f"{result.more} more were not read back"
        if result.exit_code != 0:
            tail = result.output.strip()[-OUTPUT_SHOWN:]
            preview.reason = f"{FAILED_IN_PREVIEW} (exit status " \
                f"{result.exit_code}){': ' + tail if tail else ''}"
        # keyed by the shown path: a name that is not UTF-8 (shown escaped) is "not checked"
        contents = {f.path: state.data for f in preview.files
                    if (state := tracker.states.get(f.path)) is not None and
                    state.data is not None}
        preview.validators = validators.validate(
            preview.files, contents, who.identity(),
            root_read=step.system and not options.user_mode,
            extra_path=options.validator_path, python=options.python, ran=result.validators)
    return tracker.budget.dropped


def raise_failed(annotated: AnnotatedPlan, preview: PlanPreview
                 ) -> tuple[AnnotatedPlan, list[Finding]]:
    """Raise every step whose previewed file fails its validator to HIGH (never lower)."""
    warnings: list[Finding] = []
    for index, step_preview in enumerate(preview.steps):
        failed = [v for v in step_preview.validators if v.verdict == "failed"]
        if not failed or index >= len(annotated.steps):
            continue
        first = failed[0]
        reason = f"{first.name} fails on the previewed {first.target}"
        annotated = raise_to_high(annotated, index, reason, word=first.target)
        warnings.append(Finding(code=FindingCode.RISK_RAISED,
                                path=f"command_plan[{index}].command",
                                message=f"Anna raised the risk to HIGH: {reason}"))
    return annotated, warnings


def for_plan(annotated: AnnotatedPlan, *, owner: int, home: str, settings: DaemonSettings
             ) -> PlanPreview:
    """The preview of a submitted plan with this daemon's settings."""
    options = Options(user_mode=settings.mode is DaemonMode.USER, dbpath=settings.pacman_dbpath,
                      validator_path=tuple(str(p) for p in settings.preview_validator_path),
                      python=settings.confine_python,
                      limits=overlay.Limits(timeout_s=settings.preview_timeout_s,
                                            memory_bytes=settings.preview_memory))
    try:
        return compute(annotated, who_of(owner, home, SessionEnv()), options)
    except Exception as exc:  # a preview is information: it must never keep a plan out
        log.exception("the preview failed")
        return PlanPreview(steps=[StepPreview(step_id=s.id, kind="none",
                                              reason=f"the preview failed ({type(exc).__name__})")
                                  for s in annotated.steps])


def store(journal: Journal, plan_id: str, preview: PlanPreview | None, *,
          checks_only: bool = False) -> None:
    """Journal the preview with the plan (an event of the hash chain); None: nothing.
    ``checks_only``: the plan was stored to run its checks, without the preview submit
    makes (``POST /v1/plans?preview=false``): the event says so, with or without a preview
    made later, and the plan does not execute (:func:`executable`) until a submit revises
    it with its preview."""
    if checks_only:
        journal.event(PREVIEWED_KIND, plan_id, checks_only=True,
                      preview=preview.model_dump(mode="json") if preview is not None else None)
    elif preview is not None:
        journal.event(PREVIEWED_KIND, plan_id, preview=preview.model_dump(mode="json"))


def executable(journal: Journal, plan_id: str) -> None:
    """PLAN_STATE when the plan's content was stored for its checks only: no preview was
    made at its submit, so no failed validator could raise its sealed tier."""
    body = journal.last_body(plan_id, PREVIEWED_KIND)
    if body is not None and body.get("checks_only"):
        raise PlanError(f"plan {plan_id} was stored to run its checks only; submit it again "
                        "(it is previewed then) to execute it", code=ErrorCode.PLAN_STATE)


def previewed_files(journal: Journal, plan_id: str, index: int
                    ) -> dict[str, FileChange] | None:
    """What the person saw a step change, by exact path, when its file preview was complete
    (it ran, succeeded and every change was read back); None when there is none to compare
    with (:mod:`annad.capture.versus_preview`)."""
    body = journal.last_body(plan_id, PREVIEWED_KIND)
    if body is None:
        return None
    try:
        preview = PlanPreview.model_validate(body.get("preview"))
    except ValueError:
        return None
    if index >= len(preview.steps):
        return None
    step = preview.steps[index]
    if step.kind != "files" or step.reason is not None:
        return None
    return shown_by_key(step.files)


def stored_or_new(journal: Journal, annotated: AnnotatedPlan, *, plan_id: str, owner: int,
                  home: str, settings: DaemonSettings) -> PlanPreview:
    """The preview stored at submit; made (and stored) now when there is none. A preview
    made after submit cannot raise the sealed tier: its failed validators are shown only."""
    body = journal.last_body(plan_id, PREVIEWED_KIND)
    if body is not None:
        try:
            return PlanPreview.model_validate(body.get("preview"))
        except ValueError:
            pass  # an older or damaged body, or none made (checks only): make a new one
    preview = for_plan(annotated, owner=owner, home=home, settings=settings)
    store(journal, plan_id, preview, checks_only=body is not None and bool(
        body.get("checks_only")))
    return preview


def at_submit(annotated: AnnotatedPlan, warnings: list[Finding], *, owner: int, home: str,
              settings: DaemonSettings, wanted: bool = True
              ) -> tuple[AnnotatedPlan, list[Finding], PlanPreview | None]:
    """The plan, its warnings and its preview as submit stores them (raised where a
    validator failed); unchanged and None when previews are off or not ``wanted`` (a plan
    stored to run its checks: nobody sees it, the refined plan that revises it is shown)."""
    if not settings.preview or not wanted:
        return annotated, warnings, None
    preview = for_plan(annotated, owner=owner, home=home, settings=settings)
    annotated, raised = raise_failed(annotated, preview)
    return annotated, [*warnings, *raised], preview
