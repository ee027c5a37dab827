"""``annactl plan``, ``apply`` and ``rollback``: plans in the daemon (``show`` and
``history`` read them in :mod:`annactl.commands.listing`).

Every JSON output carries ``plan_id`` and ``status`` (for ``history``, each entry does).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anna_common.errors import UsageError
from annactl.commands.ask import (
    RunOptions,
    offer_memory,
    offline_note,
    run_prepared,
)
from annactl.commands.failures import json_failures, showing_rejections
from annactl.commands.spinner import plan_with_spinner
from annactl.core.exit_codes import ExitStatus, exit_status_for_plan
from annactl.ui import confirm

if TYPE_CHECKING:
    from anna_common.protocol.models import PlanRecord
    from anna_common.telemetry import Telemetry
    from annactl.commands.flow import Flow
    from annactl.commands.prepared import Prepared
    from annactl.ui.console import Consoles


def _flow() -> tuple[Flow, Any]:
    from annactl.commands.flow import connect_flow
    from annactl.core.config import load_settings

    settings = load_settings()
    return connect_flow(settings), settings


def load_telemetry(path: Path) -> Telemetry:
    """A saved telemetry snapshot (bare, or as ``GET /v1/telemetry`` returned it)."""
    from pydantic import ValidationError

    from anna_common.telemetry import Telemetry

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "telemetry" in data and "age_s" in data:
            data = data["telemetry"]
        return Telemetry.model_validate(data)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0][:200]
        raise UsageError(f"{path} is not a telemetry snapshot: {first}",
                         hint="save one with: annactl status --json") from None


def plan(consoles: Consoles, request: str, *, as_json: bool, telemetry_file: Path | None,
         use_templates: bool) -> int:
    """Plan, validate and store; print it with the id ``apply`` takes (``--json``: a JSON
    document on every outcome, failures included)."""
    with json_failures(consoles, as_json=as_json):
        return _plan(consoles, request, as_json=as_json, telemetry_file=telemetry_file,
                     use_templates=use_templates)


def _plan(consoles: Consoles, request: str, *, as_json: bool, telemetry_file: Path | None,
          use_templates: bool) -> int:
    from rich.text import Text

    from annactl.ui import render
    from annactl.ui.console import emit_json

    telemetry = load_telemetry(telemetry_file) if telemetry_file is not None else None
    flow, settings = _flow()

    def make(**hooks: Any) -> Prepared:
        return flow.plan_text(request, mode="one-shot", telemetry=telemetry,
                              use_templates=use_templates and settings.templates, **hooks)

    with showing_rejections(consoles, as_json=as_json):
        prepared = plan_with_spinner(consoles, make, show_spinner=consoles.err.is_terminal
                                     and not as_json)
    if as_json:
        emit_json(consoles, prepared.summary_json())
        return ExitStatus.SUCCESS
    offline_note(consoles, prepared)
    offer_memory(flow, consoles, prepared, RunOptions())
    consoles.out.print(render.plan_view(prepared.annotated, checks=prepared.checks,
                                        warnings=prepared.warnings, plan_id=prepared.plan_id,
                                        contradictions=prepared.outcome.contradictions
                                        if prepared.outcome is not None else ()))
    if prepared.annotated.steps and prepared.preview is not None:
        from annactl.ui.render_preview import preview_view

        consoles.out.print(preview_view(prepared.preview, prepared.annotated.steps))
    if prepared.annotated.steps:
        consoles.out.print(Text(f"To run it: annactl apply {prepared.plan_id}", style="dim"))
    return ExitStatus.SUCCESS


def _is_file(target: str) -> bool:
    return target == "-" or target.endswith(".json") or Path(target).is_file()


def apply(consoles: Consoles, target: str, opts: RunOptions, *, skip: list[str] | None = None,
          edits: list[str] | None = None) -> int:
    """``apply FILE.json|ID``: a file is validated like a model reply; an id is fetched.
    With ``skip``/``edits`` the plan offered is a new one (:mod:`annactl.commands.edit`)."""
    from annactl.commands.contract import read_plan_text

    with json_failures(consoles, as_json=opts.as_json):
        if _is_file(target):
            flow, _ = _flow()
            name = "standard input" if target == "-" else target
            with showing_rejections(consoles, as_json=opts.as_json):
                prepared = flow.plan_file_text(read_plan_text(target), name=name)
        else:
            flow, prepared = _stored(target)
        if skip or edits:
            from annactl.commands.edit import edited, parse_edits

            with showing_rejections(consoles, as_json=opts.as_json):
                prepared = edited(flow, prepared, skip=list(skip or []),
                                  edits=parse_edits(list(edits or [])))
        return run_prepared(flow, consoles, prepared, opts)


def _stored(plan_id: str) -> tuple[Flow, Prepared]:
    """A stored plan, read without pydantic when that is exact (issue 12: ``apply ID``
    within 15x a bare interpreter): the quick settings, and a daemon client whose answers
    are views (:mod:`annactl.core.wire`). When the settings are not plain, or an answer lacks
    the models' shape, the full client reads it again, and its models refuse a bad answer
    with a coded error. Nothing was shown or run before that."""
    from annactl.core.quicksettings import quick_settings
    from annactl.core.wire import ShapeError

    settings = quick_settings()
    if settings is not None:
        from annactl.commands.flow import Flow
        from annactl.core.daemon_client import connect

        try:
            flow = Flow(settings, connect(settings, wire=True))
            prepared = flow.stored(plan_id)
            _readable(prepared)
        except (ShapeError, TypeError, ValueError):
            pass  # the full client below says what is wrong
        else:
            return flow, prepared
    flow, _ = _flow()
    return flow, flow.stored(plan_id)


def _readable(prepared: Prepared) -> None:
    """Read everything the apply path reads of the plan before it runs (its tier, its view,
    its preview, its JSON): a view missing a field raises here, before anything is shown."""
    from annactl.ui import render
    from annactl.ui.render_preview import preview_view

    confirm.requirement(prepared.annotated)
    render.plan_view(prepared.annotated, plan_id=prepared.plan_id)
    if prepared.preview is not None:
        preview_view(prepared.preview, prepared.annotated.steps)
    prepared.summary_json()


def _something_to_undo(record: PlanRecord) -> None:
    """A finished plan that changed nothing (only INFO steps ran, or a failed one whose
    changes were all undone) is not rolled back: there is nothing to undo."""
    from anna_common.errors import ErrorCode, PlanError
    from annactl.ui import render

    if str(record.status) in ("succeeded", "failed") and not render.rollback_offered(record):
        why = "its changes were already undone" if record.undo else "it changed nothing"
        raise PlanError(f"plan {record.plan_id} is {record.status} and {why}: there is "
                        "nothing to roll back", code=ErrorCode.PLAN_STATE)


def rollback(consoles: Consoles, plan_id: str, *, yes: bool, as_json: bool,
             allow_high: bool = False) -> int:
    """Undo a plan after asking (``--yes`` skips the question; no terminal needs it).

    A plan whose rollback commands include a HIGH one needs, as at execute, the typed word
    too (``--yes --allow-high`` without a terminal); the daemon checks it.
    """
    from annactl.ui import render
    from annactl.ui.console import emit_json, inert

    flow, _ = _flow()
    record = flow.record(plan_id)
    _something_to_undo(record)
    if not as_json:
        for snap in record.snapshots:
            if snap.undo:  # offered, never run by Anna: it reverts more than this plan
                consoles.err.print(f"A {snap.tool} snapshot pair also covers this plan: "
                                   f"`{snap.undo}` reverts everything changed on that "
                                   "volume in between (not only this plan).", markup=False)
    req = confirm.rollback_requirement(record.annotated)
    granted = confirm.by_flags(req, yes=yes, allow_high=allow_high)
    if granted is None:
        if as_json or not consoles.interactive:
            need = "--yes --allow-high" if req.tier == confirm.Tier.TWO else "--yes"
            error = confirm.declined("rolling back needs a confirmation and there is no "
                                     "terminal to ask on", hint=f"pass {need}")
            error.detail["plan_id"] = record.plan_id
            raise error
        title = inert(record.annotated.plan.goals[0] if record.annotated.plan.goals else "",
                      max_chars=80)
        question = f"Roll back plan {record.plan_id} ({title}, now {record.status})? [y/N]"
        prompter = confirm.TerminalPrompter(consoles.err)
        if not prompter.yes_no(question):
            raise confirm.declined("declined; nothing was rolled back")
        typed = None
        if req.tier == confirm.Tier.TWO:
            typed = prompter.text(f"A rollback command is HIGH-risk. Type {req.word!r} to run "
                                  "it:")
        granted = confirm.approval(req, confirmed=True, typed_word=typed)
    response = flow.rollback(plan_id, confirm_word=granted.word)
    if as_json:
        from annactl.ui.jsonedge import code_for_status

        # a rollback that ended rolled_back is a success (OK), not the plan's failure code
        emit_json(consoles, {"code": code_for_status(str(response.status), after_rollback=True),
                             "plan_id": response.plan_id, "status": str(response.status),
                             "undo": [u.model_dump(mode="json") for u in response.undo]})
    else:
        consoles.out.print(render.result_view(flow.record(plan_id)))
    return exit_status_for_plan(str(response.status), after_rollback=True)
