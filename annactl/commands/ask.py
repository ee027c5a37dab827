"""``annactl ask`` (and the bare ``annactl "TEXT"``), and running any prepared plan.

Plan with a spinner (stderr, terminals only), show the daemon's annotated plan,
run its read-only checks, get the confirmation its tier demands
(:mod:`annactl.ui.confirm`), execute with live progress, report the result. Ctrl-C
while the model works cancels planning (exit 130); during execution it asks the
daemon to stop and roll back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode
from annactl.commands.failures import error_json, json_failures, showing_rejections
from annactl.commands.spinner import interrupted, plan_with_spinner
from annactl.core.exit_codes import ExitStatus, exit_status_for_plan

if TYPE_CHECKING:

    from rich.console import Console

    from anna_common.protocol.models import ExecEvent, PlanRecord
    from annactl.commands.flow import Flow
    from annactl.commands.prepared import Prepared
    from annactl.ui import confirm
    from annactl.ui.console import Consoles

@dataclass
class RunOptions:
    """How a prepared plan is run."""

    yes: bool = False
    """Approve up to MEDIUM without asking."""
    allow_high: bool = False
    """With ``yes``: approve HIGH too."""
    dry_run: bool = False
    """Show the plan and run only its read-only checks."""
    as_json: bool = False
    """Print one JSON document instead of text (never prompts)."""
    fix: bool = False
    """When the plan misses its goals, ask the model for a fix without asking first; with
    ``yes``, approve that fix up to MEDIUM (a HIGH fix always needs its typed word)."""
    offer_fix: str = "prompt"
    """After a failure: ``prompt`` asks "Ask for a fix?" on a terminal; ``repl`` only hints
    (the person types ``fix``)."""
    loop: Any = None
    """The request's :class:`annactl.planning.fix.FixLoop` (rounds are counted across fixes)."""
    into: dict[str, Any] | None = None
    """With ``as_json``: fill this document (a fix nested in its parent's) instead of
    printing one."""
    keep_on_verify_fail: bool = False
    """Keep a step whose verification failed instead of rolling the plan back."""
    prose: Any = None
    """The :class:`~annactl.ui.streamed.ProsePrinter` that printed the model's prose while it
    was written (the views do not print it twice); None with ``--json``."""
    answer_on_stdout: bool = True
    """A read-only plan's output and summary on stdout, its chrome on stderr
    (:mod:`annactl.commands.answer_out`); the REPL shows everything in one place."""


def run_prepared(flow: Flow, consoles: Consoles, prepared: Prepared, opts: RunOptions) -> int:
    """Show, check, confirm, execute and report one plan; returns the exit status. An error
    from here on is about this plan: it carries its ``plan_id`` (``--json`` prints it)."""
    try:
        return _run_prepared(flow, consoles, prepared, opts)
    except AnnaError as exc:
        if prepared.plan_id and isinstance(exc.detail, dict):
            exc.detail.setdefault("plan_id", prepared.plan_id)
        raise


def _run_prepared(flow: Flow, consoles: Consoles, prepared: Prepared, opts: RunOptions) -> int:
    plan = prepared.annotated
    offline_note(consoles, prepared)
    from annactl.commands.piped_count import piped_note

    piped_note(consoles, prepared, as_json=opts.as_json)
    offer_memory(flow, consoles, prepared, opts)
    if not plan.steps:
        return _answer(consoles, prepared, opts)
    # imported past the answer: an answer (the offline "how is my system?") needs none of them
    # (issue 23.7, bench/startup.py)
    from annactl.commands.answer_out import split
    from annactl.commands.needs_root import refuse_before_asking
    from annactl.ui import confirm, render
    from annactl.ui.render_preview import preview_view

    if plan.checks and not prepared.checks:
        flow.run_checks(prepared)
    req = confirm.requirement(plan)
    shown, answer = split(consoles, req.tier, opts)
    if not opts.as_json:
        shown.out.print(render.plan_view(plan, checks=prepared.checks,
                                         warnings=prepared.warnings,
                                         plan_id=prepared.plan_id,
                                         contradictions=prepared.contradictions,
                                         streamed=_printed(opts, plan.plan.analysis,
                                                           shown.out)))
        if prepared.preview is not None:
            shown.out.print(preview_view(prepared.preview, plan.steps))
    if opts.dry_run:
        return _dry_run(flow, consoles, prepared, req, opts)
    if req.tier == confirm.Tier.BANNED:
        raise confirm.banned_error(req)
    # a per-user daemon: say so now, not after "y", and keep the plan as not run
    refuse_before_asking(flow.daemon, plan, prepared.plan_id)
    prompter = None
    if consoles.interactive and not opts.as_json:
        prompter = confirm.TerminalPrompter(consoles.err)
    try:
        approval = confirm.ask(req, prompter, yes=opts.yes, allow_high=opts.allow_high,
                               failed=confirm.failed_in_preview(prepared.preview))
    except AnnaError as exc:
        if exc.code in (ErrorCode.DECLINED, ErrorCode.CONFIRMATION_REQUIRED):
            not_run(flow, prepared)
        raise
    events, record = execute(flow, shown, prepared, approval, show=not opts.as_json,
                             keep_on_verify_fail=opts.keep_on_verify_fail, answer=answer)
    return _report(flow, shown, prepared, record, events, opts, answer=answer)


def not_run(flow: Flow, prepared: Prepared) -> None:
    """A plan the person did not approve is recorded as shown and not run (``dry_run``:
    ``annactl apply ID`` still runs it), never left ``submitted`` as if it were waiting."""
    if not prepared.plan_id:
        return
    from contextlib import suppress

    # the decline is what the person must hear about, not a bookkeeping failure
    with suppress(AnnaError):
        flow.daemon.mark_dry_run(prepared.plan_id)


def offer_memory(flow: Flow, consoles: Consoles, prepared: Prepared, opts: RunOptions) -> None:
    """A model's memory proposal: asked about at a terminal; never applied by --yes/--json."""
    from annactl.commands import memory

    asks = consoles.interactive and not opts.as_json and not opts.yes
    prompter = None
    if asks:
        from annactl.ui.confirm import TerminalPrompter

        prompter = TerminalPrompter(consoles.err)
    memory.offer(consoles, flow.settings.state_dir, prepared.outcome, prompter)


def offline_note(consoles: Consoles, prepared: Prepared) -> None:
    """Say so when a template answered because no model could (stderr, one line)."""
    from annactl.ui.console import inert

    reason = prepared.outcome.offline_reason if prepared.outcome is not None else None
    if reason:
        consoles.err.print("note: " + inert(reason, max_chars=300), style="yellow",
                           markup=False, highlight=False)


def _answer(consoles: Consoles, prepared: Prepared, opts: RunOptions) -> int:
    if opts.as_json:
        _emit(consoles, opts, {**prepared.summary_json(), "status": "answered"})
    else:
        from annactl.ui.render_plan import notes_only  # not render: its events are for steps

        plan = prepared.annotated.plan
        consoles.out.print(notes_only(
            prepared.annotated, telemetry=prepared.answer_telemetry,
            contradictions=prepared.contradictions,
            citations=prepared.outcome.citations if prepared.outcome is not None else (),
            streamed=_printed(opts, plan.notes_for_user.strip() or plan.analysis,
                              consoles.out)))
    return ExitStatus.SUCCESS


def _printed(opts: RunOptions, text: str, where: Console) -> bool:
    """``text`` was printed on ``where`` while the model wrote it (the view leaves it out)."""
    return opts.prose is not None and opts.prose.printed_on(where) and \
        bool(opts.prose.repeats(text))



def _dry_run(flow: Flow, consoles: Consoles, prepared: Prepared, req: confirm.Requirement,
             opts: RunOptions) -> int:
    from rich.text import Text

    from annactl.ui import confirm

    if prepared.plan_id and req.tier != confirm.Tier.BANNED:
        # the journal records what happened: shown, checks run, nothing executed
        flow.daemon.mark_dry_run(prepared.plan_id)

    if opts.as_json:
        _emit(consoles, opts, {**prepared.summary_json(), "status": "dry_run",
                             "requires": str(req.tier), "confirm_word": req.word})
    else:
        consoles.err.print(Text(f"dry run: nothing was changed. To run it: annactl apply "
                                f"{prepared.plan_id}", style="dim"))
    return ExitStatus.PLAN_INVALID if req.tier == confirm.Tier.BANNED else ExitStatus.SUCCESS


def execute(flow: Flow, consoles: Consoles, prepared: Prepared, approval: confirm.Approval,
            *, show: bool, keep_on_verify_fail: bool = False, answer: Console | None = None
            ) -> tuple[list[ExecEvent], PlanRecord]:
    """Execute with live progress; Ctrl-C asks the daemon to stop and roll back (exit 130).
    With ``answer`` (a read-only plan's stdout), the steps' output goes there, the progress
    to stderr."""
    from annactl.commands.answer_out import answer_line
    from annactl.ui import render

    def output(line: str) -> None:
        if answer is not None:
            answer_line(answer, line)
        else:
            consoles.err.print(render.output_line(line))

    events: list[ExecEvent] = []
    lines = render.OutputLines()
    streamed: set[str | None] = set()
    try:
        for event in flow.execute(prepared, approval, keep_on_verify_fail=keep_on_verify_fail):
            events.append(event)
            if not show:
                continue
            if event.type == "step_output":
                streamed.add(event.step_id)
                for line in lines.feed(event.step_id, event.output):
                    output(line)
                continue
            if event.type == "step_finished":
                for line in lines.flush(event.step_id):
                    output(line)
            view = render.event_view(event, streamed=event.step_id in streamed)
            if view is not None:
                consoles.err.print(view)
    except KeyboardInterrupt:
        consoles.err.print("Stopping: asking the daemon to stop and roll back…",
                           style="bold yellow", markup=False)
        record = flow.cancel(prepared.plan_id)
        if show:
            consoles.out.print(render.result_view(record))
        raise interrupted(f"stopped; plan {prepared.plan_id} is {record.status}") from None
    return events, flow.record(prepared.plan_id)


def _emit(consoles: Consoles, opts: RunOptions, doc: dict[str, Any]) -> None:
    """Print the JSON document, or fill the parent's (a fix's document nests in it)."""
    from annactl.ui.console import emit_json

    if opts.into is not None:
        opts.into.update(doc)
    else:
        emit_json(consoles, doc)


def _report(flow: Flow, consoles: Consoles, prepared: Prepared, record: PlanRecord,
            events: list[ExecEvent], opts: RunOptions, *, answer: Console | None = None
            ) -> int:
    """The result, then its evaluation and perhaps a fix (:mod:`annactl.commands.loop`);
    with ``answer``, the evaluation's summary line there too."""
    from annactl.commands.loop import after_execution
    from annactl.ui import render

    doc: dict[str, Any] | None = None
    if opts.as_json:
        doc = {**prepared.summary_json(), "status": str(record.status),
               "events": [e.model_dump(mode="json") for e in events],
               "record": record.model_dump(mode="json")}
    else:
        consoles.out.print(render.result_view(record))
    if str(record.status) == "succeeded":
        # before the evaluation: a lock-out guard's clock is running
        offer_confirm(flow, consoles, record, opts)
    status = int(exit_status_for_plan(str(record.status)))
    wants_fix = after_execution(flow, consoles, prepared, record, opts, doc)
    if answer is not None:
        from annactl.commands.answer_out import summary_line

        summary_line(answer, opts.loop)
    if wants_fix:
        status = run_fix(flow, consoles, opts, status, doc)
    if doc is not None:
        _emit(consoles, opts, doc)
    return status


def run_fix(flow: Flow, consoles: Consoles, opts: RunOptions, status: int,
            doc: dict[str, Any] | None) -> int:
    """Ask the model for a fix, then show, confirm (afresh) and run it like any plan
    (:mod:`annactl.planning.fix`); returns the exit status. A fix that cannot be planned,
    or that the person declines, leaves ``status`` as it was.
    """
    from contextlib import nullcontext
    from dataclasses import replace

    from annactl.ui.console import inert_text
    from annactl.ui.streamed import prose_printer

    loop = opts.loop
    fix_doc: dict[str, Any] | None = {} if doc is not None else None
    if doc is not None:
        doc["fix"] = fix_doc
    # --yes stands for the fix's one confirmation only when --fix was given; never HIGH
    fix_opts = replace(opts, yes=opts.yes and opts.fix, allow_high=False, dry_run=False,
                       into=fix_doc, prose=prose_printer(
                           consoles.out, as_json=opts.as_json,
                           plans=consoles.err if opts.answer_on_stdout else None))
    try:
        # a refused fix is shown as text; with --json its error goes into the fix's document
        shown = (nullcontext() if opts.as_json
                 else showing_rejections(consoles, as_json=False))
        with shown:
            prepared = plan_with_spinner(
                consoles, lambda **hooks: loop.plan_fix(flow, **hooks),
                show_spinner=consoles.err.is_terminal and not opts.as_json,
                prose=fix_opts.prose)
        fixed = run_prepared(flow, consoles, prepared, fix_opts)
    except AnnaError as exc:
        if exc.code == ErrorCode.CANCELLED:
            raise  # Ctrl-C while the fix was planned or ran: exit 130 as anywhere else
        if fix_doc is not None:
            fix_doc.update(error_json(exc))
        consoles.err.print(f"fix: {exc.code}: ", style="red", end="", markup=False)
        consoles.err.print(inert_text(exc.message, max_chars=500))
        return status
    # a fix that answers without steps (the model says it cannot) fixes nothing
    return fixed if prepared.annotated.steps else status


def offer_confirm(flow: Flow, consoles: Consoles, record: PlanRecord, opts: RunOptions) -> None:
    """After a plan the lock-out guard armed: say so and offer the confirmation."""
    from annactl.commands.confirm import offer

    if not opts.as_json:
        offer(flow, consoles, record)


def ask(consoles: Consoles, request: str, opts: RunOptions, *, use_templates: bool,
        session: str | None = None, resume: bool = False) -> int:
    """``annactl ask TEXT``: plan, then :func:`run_prepared`. ``resume`` (``--continue``)
    carries the latest conversation's turns, ``session`` that conversation's; without either
    this request starts the conversation ``last`` afresh (:mod:`annactl.commands.sessions`)."""
    import gc

    from annactl.commands import sessions
    from annactl.commands.flow import connect_flow
    from annactl.commands.piped_count import saying_piped
    from annactl.commands.stdin_text import read_piped
    from annactl.core.config import load_settings
    from annactl.ui.streamed import prose_printer

    with json_failures(consoles, as_json=opts.as_json):
        settings = load_settings()
        talk = sessions.open_conversation(settings.state_dir, name=session, resume=resume)
        piped = read_piped()  # `journalctl -b | annactl ask …`: untrusted context, bounded
        flow = connect_flow(settings)
        sessions.say_continued(consoles, talk, as_json=opts.as_json)

        def make(**hooks: Any) -> Prepared:
            return flow.plan_text(request, mode="one-shot", piped=piped,
                                  use_templates=use_templates and settings.templates,
                                  turns=sessions.sent_turns(talk), **hooks)

        opts.prose = prose_printer(consoles.out, as_json=opts.as_json,
                                   plans=consoles.err if opts.answer_on_stdout else None)
        with showing_rejections(consoles, as_json=opts.as_json), \
                saying_piped(consoles, piped, as_json=opts.as_json):
            try:
                prepared = plan_with_spinner(consoles, make,
                                             show_spinner=consoles.err.is_terminal,
                                             prose=opts.prose)
            finally:
                # paused while annactl started and planned (cli._fast_ask): what was built
                # until now stays (frozen: never walked again), the collector goes on
                gc.freeze()
                gc.enable()
        sessions.record(settings.state_dir, talk, request, prepared)
        return run_prepared(flow, consoles, prepared, opts)
