"""``annactl repl``: an interactive session on prompt-toolkit.

Persistent history (``state_dir/repl_history``), Ctrl-R reverse search
(prompt-toolkit's Emacs bindings), completion of slash commands and plan ids.
Free text is planned in ``repl`` mode with the previous turns as context and
then confirmed like a one-shot request; ``plan: …`` only plans; ``ok``,
``apply`` or ``yes`` run the last plan shown (that word is its one
confirmation; a HIGH plan still asks for its confirmation word). After a run
the evaluation is shown; when the plan missed its goals, ``fix`` asks the model
for a new plan, shown and confirmed afresh (at most two per request);
"remember …" stores a whitelisted preference. Output goes through the same
renderers as one-shot, so text from outside stays inert here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, UsageError
from annactl.interactive.repl_slash import APPLY_WORDS, MAX_TURNS, SLASH_COMMANDS, SlashCompleter
from annactl.ui import confirm
from annactl.ui.console import inert

if TYPE_CHECKING:
    from collections.abc import Callable

    from annactl.commands.ask import RunOptions
    from annactl.commands.flow import Flow
    from annactl.commands.prepared import Prepared
    from annactl.core.config import ClientSettings
    from annactl.interactive.repl_partial import Changes
    from annactl.planning.fix import FixLoop
    from annactl.ui.console import Consoles

class ReplSession:
    """One REPL conversation: the flow, the turns so far, the last plan shown."""

    def __init__(self, consoles: Consoles, settings: ClientSettings,
                 connect: Callable[[], Flow], *, use_templates: bool = True) -> None:
        self.consoles = consoles
        self.settings = settings
        self._connect = connect
        self._flow: Flow | None = None
        self.use_templates = use_templates and settings.templates
        self.turns: list[tuple[str, str]] = []
        self.last: Prepared | None = None
        self.known_ids: list[str] = []
        self.loop: FixLoop | None = None
        """The evaluate → fix rounds of the last request."""

    @property
    def flow(self) -> Flow:
        """The daemon connection (made on first use)."""
        if self._flow is None:
            self._flow = self._connect()
        return self._flow

    def handle(self, line: str) -> bool:
        """Act on one line; False ends the session. Errors are reported, never raised."""
        text = line.strip()
        if not text:
            return True
        try:
            return self._dispatch(text)
        except AnnaError as exc:
            self._error(f"{exc.code}: {exc.message}", exc.hint)
        except KeyboardInterrupt:
            self._error("interrupted")
        return True

    def _dispatch(self, text: str) -> bool:
        if text.startswith("/"):
            return self._slash(text)
        from annactl.interactive.repl_partial import names_a_step, parse_word

        if text.lower().rstrip(".!") in APPLY_WORDS:
            self._apply_last(confirmed=True)
        elif text.lower() in ("clear", "cls"):  # the screen, never a request for the model
            self.consoles.out.clear()
        elif names_a_step(text, self.last) and self.last is not None:
            self._change(self.last, parse_word(text, self.last))
        elif text.lower().rstrip(".!") == "fix":
            self._fix()
        elif text.lower().startswith("plan:"):
            self._plan(text[5:].strip(), run=False)
        elif text.lower().startswith("remember"):
            self._remember(text)
        else:
            self._plan(text, run=True)
        return True

    def _slash(self, text: str) -> bool:
        from annactl.commands import status

        command, _, arg = text.partition(" ")
        arg = arg.strip()
        if command in {"/quit", "/exit", "/q"}:
            return False
        if command == "/help":
            for name, meta in SLASH_COMMANDS.items():
                self.consoles.out.print(f"{name:<10} {meta}", markup=False, highlight=False)
        elif command == "/status":
            status.run(self.consoles, as_json=False)
        elif command == "/history":
            from annactl.commands import listing

            self.known_ids = [p.plan_id for p in self.flow.daemon.list_plans().plans]
            listing.history(self.consoles, as_json=False)
        elif command == "/memory":
            self._memory(arg)
        elif command in {"/show", "/rollback"} and arg:
            from annactl.commands import listing

            run = listing.show if command == "/show" else self._rollback
            run(self.consoles, arg, as_json=False)
        elif command == "/fix":
            self._fix()
        elif command == "/clear":
            self.consoles.out.clear()
        elif command == "/apply":
            self._apply_stored(arg) if arg else self._apply_last(confirmed=False)
        else:
            raise UsageError(f"unknown or incomplete command {inert(text, max_chars=40)!r}",
                             hint="type /help")
        return True

    def _rollback(self, consoles: Consoles, plan_id: str, *, as_json: bool) -> int:
        from annactl.commands import plans as cmd_plans

        return cmd_plans.rollback(consoles, plan_id, yes=False, as_json=as_json)

    def _plan(self, request: str, *, run: bool) -> None:
        from annactl.commands import ask as cmd_ask
        from annactl.planning.memory import Memory
        from annactl.ui import render
        from annactl.ui.render_preview import preview_view

        if not request:
            raise UsageError("say what you want planned")
        preferences = Memory(self.settings.state_dir).all()
        from annactl.interactive.repl_offline import OfflineFirst

        first = OfflineFirst()  # Anna's offline answer, shown while the model works

        def make(**hooks: Any) -> Prepared:
            shown = hooks.pop("on_offline")

            def stored(early: Prepared) -> None:
                first.stored.append(early)
                shown(early)

            return self.flow.plan_text(request, mode="repl", use_templates=self.use_templates,
                                       turns=self.turns[-MAX_TURNS:], preferences=preferences,
                                       on_offline=stored, **hooks)

        from annactl.commands.spinner import plan_with_spinner
        from annactl.ui.streamed import ProsePrinter

        prose = ProsePrinter(self.consoles.out)  # the model's words as it writes them
        try:
            prepared = plan_with_spinner(
                self.consoles, make, show_spinner=self.consoles.err.is_terminal,
                on_offline=lambda early: first.show(self.consoles, early), prose=prose)
        except AnnaError as exc:
            prepared = first.after_failure(self.flow, self.consoles, exc)
        other = first.settle(self.flow, self.consoles, prepared)
        if other is not None:
            self.known_ids.insert(0, other.plan_id)
        self.last = prepared
        self.loop = None  # a new request starts its own fix rounds
        self.known_ids.insert(0, prepared.plan_id)
        self.turns.append((request, _turn_summary(prepared)))
        from annactl.commands import memory

        memory.offer(self.consoles, self.settings.state_dir, prepared.outcome,
                     confirm.TerminalPrompter(self.consoles.err))
        if run:
            opts = self._options(prepared)
            opts.prose = prose
            cmd_ask.run_prepared(self.flow, self.consoles, prepared, opts)
            self._note_result()
            return
        cmd_ask.offline_note(self.consoles, prepared)
        plan = prepared.annotated.plan
        if not prepared.annotated.steps:  # an answer: Anna's facts beside the model's prose
            self.consoles.out.print(render.notes_only(
                prepared.annotated, telemetry=prepared.answer_telemetry,
                contradictions=prepared.contradictions,
                streamed=prose.repeats(plan.notes_for_user.strip() or plan.analysis)))
        else:
            self.consoles.out.print(render.plan_view(prepared.annotated, checks=prepared.checks,
                                                     warnings=prepared.warnings,
                                                     plan_id=prepared.plan_id,
                                                     contradictions=prepared.contradictions,
                                                     streamed=prose.repeats(plan.analysis)))
            if prepared.preview is not None:
                self.consoles.out.print(preview_view(prepared.preview,
                                                     prepared.annotated.steps))
        if prepared.annotated.steps:
            from annactl.commands.needs_root import refuse_before_asking

            # needs the system daemon: said now, instead of "Type ok to run it"
            refuse_before_asking(self.flow.daemon, prepared.annotated, prepared.plan_id)
            self.consoles.out.print("Type ok to run it." if other is None else
                                    f"Type ok to run the model's plan {prepared.plan_id} "
                                    f"(above); /apply {other.plan_id} runs Anna's offline "
                                    "answer.", style="dim", markup=False, highlight=False)

    def _apply_last(self, *, confirmed: bool) -> None:
        if self.last is None:
            raise UsageError("no plan has been shown yet", hint="describe what you want first")
        if not self.last.annotated.steps:
            raise UsageError("the last answer has nothing to run",
                             hint="describe what you want done")
        self._run(self.last, confirmed=confirmed)

    def _change(self, base: Prepared, changes: Changes) -> None:
        """A changed copy of ``base`` (a new plan, judged and previewed afresh): shown, and
        the last plan now; ``ok`` runs it after its own confirmation."""
        from annactl.commands.edit import edited
        from annactl.interactive.repl_partial import show_changed

        prepared = edited(self.flow, base, skip=changes.skip, edits=changes.edits)
        self.last, self.loop = prepared, None
        self.known_ids.insert(0, prepared.plan_id)
        show_changed(self.consoles, prepared)

    def _apply_stored(self, arg: str) -> None:
        from annactl.interactive.repl_partial import parse_apply

        changes = parse_apply(arg)
        if changes.plan_id is None:
            if self.last is None:
                raise UsageError("no plan has been shown yet", hint="/apply ID --skip STEP")
            self._change(self.last, changes)
            return
        prepared = self.flow.stored(changes.plan_id)
        if changes.any:
            self._change(prepared, changes)
            return
        plan_id = changes.plan_id
        from annactl.ui import render
        from annactl.ui.render_preview import preview_view

        self.consoles.out.print(render.plan_view(prepared.annotated, plan_id=plan_id))
        if prepared.annotated.steps and prepared.preview is not None:
            self.consoles.out.print(preview_view(prepared.preview, prepared.annotated.steps))
        self.last = prepared
        self.loop = None
        self._run(prepared, confirmed=False)

    def _run(self, prepared: Prepared, *, confirmed: bool) -> None:
        """Confirm by tier (``ok`` counts as the one confirmation) and execute."""
        from annactl.commands import ask as cmd_ask
        from annactl.commands.loop import after_execution
        from annactl.commands.needs_root import refuse_before_asking
        from annactl.ui import render

        req = confirm.requirement(prepared.annotated)
        if req.tier == confirm.Tier.BANNED:
            raise confirm.banned_error(req)
        refuse_before_asking(self.flow.daemon, prepared.annotated, prepared.plan_id)
        prompter = confirm.TerminalPrompter(self.consoles.err)
        approval = confirm.ask(req, prompter, already_confirmed=confirmed,
                               failed=confirm.failed_in_preview(prepared.preview))
        _, record = cmd_ask.execute(self.flow, self.consoles, prepared, approval, show=True)
        self.consoles.out.print(render.result_view(record))
        if str(record.status) == "succeeded":  # a guarded plan: say so, offer the confirm
            cmd_ask.offer_confirm(self.flow, self.consoles, record, cmd_ask.RunOptions())
        # the REPL never fixes on its own: the person types `fix`
        after_execution(self.flow, self.consoles, prepared, record, self._options(prepared), None)
        self._note_result()

    def _note_result(self) -> None:
        """Add how the last run went to its turn, so the next request has it as context."""
        loop = self.loop
        evaluation = loop.evaluation if loop is not None else None
        if loop is None or evaluation is None or not self.turns or \
                self.turns[-1][0] != loop.request:
            return
        verdict = "goals met" if evaluation.goals_met else "goals not met"
        request, answer = self.turns[-1]
        self.turns[-1] = (request, inert(f"{answer} Ran it: {evaluation.status}, {verdict}. "
                                         f"{evaluation.evaluation.summary}", max_chars=600))

    def _options(self, prepared: Prepared) -> RunOptions:
        """How the REPL runs a plan: it asks; after a failure it hints at ``fix``."""
        from annactl.commands.ask import RunOptions
        from annactl.planning.fix import FixLoop

        if self.loop is None:
            self.loop = FixLoop(prepared.request, mode="repl",
                                planned=prepared.outcome is not None)
        return RunOptions(offer_fix="repl", loop=self.loop, answer_on_stdout=False)

    def _fix(self) -> None:
        """``fix``: a new plan from the model for the last request, confirmed afresh."""
        from annactl.commands import ask as cmd_ask

        loop = self.loop
        if loop is None or not loop.can_fix:
            raise UsageError("no fix to ask for: " + (loop.why_not() if loop is not None
                                                      else "no plan has run yet"))
        from annactl.commands.spinner import plan_with_spinner

        prepared = plan_with_spinner(
            self.consoles, lambda **hooks: loop.plan_fix(self.flow, **hooks),
            show_spinner=self.consoles.err.is_terminal)
        self.last = prepared
        self.known_ids.insert(0, prepared.plan_id)
        cmd_ask.run_prepared(self.flow, self.consoles, prepared, self._options(prepared))
        self._note_result()

    def _remember(self, text: str) -> None:
        from annactl.interactive.repl_memory import remember

        remember(self.consoles, self.settings.state_dir, text)

    def _memory(self, arg: str) -> None:
        from annactl.interactive.repl_memory import show_or_forget

        show_or_forget(self.consoles, self.settings.state_dir, arg)

    def _error(self, line: str, hint: str | None = None) -> None:
        self.consoles.err.print(inert(line, max_chars=500), style="red", markup=False,
                                highlight=False)
        if hint:
            self.consoles.err.print("  hint: " + inert(hint, max_chars=300), markup=False,
                                    highlight=False)


def _turn_summary(prepared: Prepared) -> str:
    plan = prepared.annotated.plan
    goal = plan.goals[0] if plan.goals else ""
    return inert(f"{goal}. {plan.notes_for_user}", max_chars=400)


def run(consoles: Consoles, *, use_templates: bool = True) -> int:
    """The REPL loop; returns the exit status (0 after /quit or Ctrl-D)."""
    from annactl.commands.stdin_text import need_terminal

    # fed from a pipe, prompt-toolkit would run each line as typed (``ok`` approving a plan
    # nobody saw) amid cursor codes
    need_terminal("the REPL reads what you type at a terminal",
                  otherwise='run annactl repl in a terminal, or annactl "REQUEST" without one')
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory

    from annactl.commands.flow import connect_flow
    from annactl.core.config import load_settings

    settings = load_settings()
    settings.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    session = ReplSession(consoles, settings, lambda: connect_flow(settings),
                          use_templates=use_templates)
    prompt: PromptSession[str] = PromptSession(
        history=FileHistory(str(settings.state_dir / "repl_history")),
        completer=SlashCompleter(lambda: session.known_ids), complete_while_typing=True)
    consoles.err.print("Anna REPL. /help for commands, Ctrl-R searches history, Ctrl-D leaves.",
                       style="dim", markup=False)
    while True:
        try:
            line = prompt.prompt("anna> ")
        except KeyboardInterrupt:
            continue  # Ctrl-C clears the line, as in a shell
        except EOFError:
            return 0
        if not session.handle(line):
            return 0

