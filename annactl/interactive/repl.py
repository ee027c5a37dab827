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

from prompt_toolkit.completion import Completer, Completion

from anna_common.errors import AnnaError, UsageError
from annactl.ui import confirm
from annactl.ui.console import inert

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from annactl.commands.ask import RunOptions
    from annactl.commands.flow import Flow
    from annactl.commands.prepared import Prepared
    from annactl.core.config import ClientSettings
    from annactl.planning.fix import FixLoop
    from annactl.ui.console import Consoles

SLASH_COMMANDS = {
    "/status": "the machine at a glance",
    "/history": "plans, newest first",
    "/show": "/show ID: a stored plan and its outcome",
    "/apply": "/apply [ID]: run the last plan shown, or a stored one",
    "/fix": "ask the model for a new plan after the last one failed (also: fix)",
    "/rollback": "/rollback ID: undo a plan",
    "/memory": "remembered preferences (/memory forget KEY)",
    "/help": "this list",
    "/quit": "leave (also Ctrl-D)",
}
"""Slash commands and their one-line help."""
APPLY_WORDS = frozenset({"ok", "apply", "yes"})
"""Typed alone, these run the last plan shown."""
MAX_TURNS = 4
"""Previous turns sent to the planner as context."""


class SlashCompleter(Completer):
    """Completes slash commands, and plan ids after ``/show``, ``/apply``, ``/rollback``."""

    def __init__(self, plan_ids: Callable[[], list[str]]) -> None:
        self.plan_ids = plan_ids

    def get_completions(self, document: Document,
                        complete_event: CompleteEvent) -> Iterable[Completion]:
        """Slash command names first; then ids."""
        text = document.text_before_cursor
        if not text.startswith("/"):
            return
        if " " not in text:
            for name, meta in SLASH_COMMANDS.items():
                if name.startswith(text):
                    yield Completion(name, start_position=-len(text), display_meta=meta)
            return
        command, _, partial = text.partition(" ")
        if command in {"/show", "/apply", "/rollback"}:
            for plan_id in self.plan_ids():
                if plan_id.startswith(partial):
                    yield Completion(plan_id, start_position=-len(partial))


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
        if text.lower().rstrip(".!") in APPLY_WORDS:
            self._apply_last(confirmed=True)
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

        try:
            prepared = plan_with_spinner(
                self.consoles, make, show_spinner=self.consoles.err.is_terminal,
                on_offline=lambda early: first.show(self.consoles, early))
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
            cmd_ask.run_prepared(self.flow, self.consoles, prepared, self._options(prepared))
            self._note_result()
            return
        cmd_ask.offline_note(self.consoles, prepared)
        if not prepared.annotated.steps:  # an answer: Anna's facts beside the model's prose
            self.consoles.out.print(render.notes_only(
                prepared.annotated, telemetry=prepared.answer_telemetry,
                contradictions=prepared.contradictions))
        else:
            self.consoles.out.print(render.plan_view(prepared.annotated, checks=prepared.checks,
                                                     warnings=prepared.warnings,
                                                     plan_id=prepared.plan_id,
                                                     contradictions=prepared.contradictions))
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

    def _apply_stored(self, plan_id: str) -> None:
        prepared = self.flow.stored(plan_id)
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
        approval = confirm.ask(req, prompter, already_confirmed=confirmed)
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
        from annactl.planning.memory import Memory, parse_remember

        found = parse_remember(text)
        if found is None:
            raise UsageError("I can remember your editor, AUR helper, shell, terminal, wallpaper "
                             "backend or directory, or language",
                             hint='e.g. "remember my editor is nvim"')
        key, value = found
        Memory(self.settings.state_dir).set(key, value)
        self.consoles.out.print(f"Remembered: {key} = {inert(value)}", markup=False)

    def _memory(self, arg: str) -> None:
        from annactl.planning.memory import Memory

        memory = Memory(self.settings.state_dir)
        if arg.startswith("forget "):
            key = arg[7:].strip()
            done = memory.forget(key)
            self.consoles.out.print(f"Forgot {key}." if done else f"{key} was not remembered.",
                                    markup=False)
            return
        prefs = memory.all()
        if not prefs:
            self.consoles.out.print("Nothing remembered yet.", markup=False)
        for key, value in prefs.items():
            self.consoles.out.print(f"{key} = {inert(value)}", markup=False, highlight=False)

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

