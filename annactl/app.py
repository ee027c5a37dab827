"""The Typer declarations of every annactl command (options and help only).

The bodies live in ``annactl/commands/`` and ``annactl/interactive/``; the shared options
are in :mod:`annactl.app_options`, the command groups in :mod:`annactl.app_groups`. This
module is imported only once a command has to be parsed: ``annactl --version``, ``status``,
``history``, ``show`` and ``apply ID`` never pay for Typer (or the pydantic it brings in
for option coercion); see :func:`annactl.cli.main`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
import typer.main
from typer.core import TyperArgument

from annactl.app_groups import audit_app, export, fleet_app, policy_app, queue_app, recipe_app
from annactl.app_options import (
    AllowHighOpt,
    DistroOpt,
    JsonOpt,
    KeepOpt,
    NoTemplatesOpt,
    TextArg,
    YesOpt,
    group_help,
    no_json,
)
from annactl.app_options import consoles as _consoles
from annactl.app_options import request as _request
from annactl.app_shell import models, sessions_app, shell_integration, suggest

HELP = """Anna: a careful system-administration assistant. The model plans; Anna decides.

\b
Say what you want, in quotes (the same as annactl ask "REQUEST"):
  annactl "why is my disk full?"
  annactl ask --dry-run "install htop"   show the plan, run only its checks
  annactl history; annactl rollback ID    what ran, and undoing it
  annactl -m MODEL "…"                    ask another model (annactl models lists them;
                                          --profile NAME: a profile in config.toml)

What you are asked depends on Anna's own risk for each step: INFO runs without asking,
LOW and MEDIUM ask once, HIGH asks you to type what it touches, banned never runs.
"""

app = typer.Typer(
    add_completion=True,
    no_args_is_help=False,  # annactl alone: help on stdout, exit 0 (_root)
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help=HELP,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback(invoke_without_command=True)
def _root(ctx: typer.Context, version: Annotated[bool, typer.Option(
        "--version", help="Print annactl's version and exit.", is_eager=True)] = False,
          as_json: JsonOpt = False) -> None:
    if version:  # annactl.cli.main answers --version first; this keeps --help truthful
        from annactl import __version__

        typer.echo(f"annactl {__version__}")
        raise typer.Exit(0)
    group_help(ctx, as_json=as_json)

@app.command()
def assess(
    command: Annotated[Optional[str], typer.Argument(help="The shell command.")] = None,  # noqa: UP045
    as_json: JsonOpt = False,
    jsonl: Annotated[bool, typer.Option("--jsonl", help="Read JSON lines on stdin.")] = False,
    distro: DistroOpt = None,
) -> None:
    """Anna's own risk assessment of a shell command."""
    from anna_common.errors import UsageError
    from annactl.commands import contract as cmd_contract

    if jsonl:
        # bytes in: a line that is not UTF-8 is reported, never a crash of the whole stream
        raise typer.Exit(cmd_contract.assess_stream(sys.stdin.buffer, sys.stdout,
                                                    distro=distro))
    if command is None:
        raise UsageError("give a command to assess, or --jsonl to read JSON lines on stdin")
    raise typer.Exit(cmd_contract.assess_one(command, distro=distro, as_json=as_json,
                                             consoles=_consoles()))


@app.command()
def explain(
    command: Annotated[str, typer.Argument(help="The shell command, in quotes.")],
    as_json: JsonOpt = False,
    distro: DistroOpt = None,
    no_model: Annotated[bool, typer.Option(
        "--no-model", help="Anna's analysis only; do not ask a model for its words.")] = False,
) -> None:
    """What a command runs, reads and writes, its risk and why (nothing is run); then a
    model's words, labelled as such, when one answers."""
    from annactl.commands import explain as cmd_explain

    raise typer.Exit(cmd_explain.explain(_consoles(), command, as_json=as_json, distro=distro,
                                         use_model=not no_model))


@app.command()
def validate(
    source: Annotated[str, typer.Argument(metavar="FILE|-", help="Plan JSON file, or -.")],
    as_json: JsonOpt = False,
    distro: DistroOpt = None,
) -> None:
    """Validate an ActionPlan JSON file (exit 3 when invalid)."""
    from annactl.commands import contract as cmd_contract

    raise typer.Exit(cmd_contract.validate_file(source, distro=distro, as_json=as_json,
                                                consoles=_consoles()))


@app.command()
def ask(
    text: TextArg,
    yes: YesOpt = False,
    allow_high: AllowHighOpt = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Show the plan; run only read-only checks.")] = False,
    as_json: JsonOpt = False,
    no_templates: NoTemplatesOpt = False,
    fix: Annotated[bool, typer.Option(
        "--fix", help="If the plan misses its goals, ask the model for a fix (a new plan, "
                      "approved again; with --yes up to MEDIUM, at most 2 rounds).")] = False,
    keep_on_verify_fail: KeepOpt = False,
    resume: Annotated[bool, typer.Option(
        "--continue", "-c", help="Carry the latest conversation's turns to the model (as the "
        "REPL does); annactl sessions lists them.")] = False,
    session: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--session", metavar="NAME", help="Keep this request in conversation NAME, with its "
        "earlier turns as context.")] = None,
) -> None:
    """Plan a request, confirm by its risk, execute, evaluate, report (also: annactl "REQUEST")."""
    from annactl.commands import ask as cmd_ask

    opts = cmd_ask.RunOptions(yes=yes, allow_high=allow_high, dry_run=dry_run, as_json=as_json,
                              fix=fix, keep_on_verify_fail=keep_on_verify_fail)
    raise typer.Exit(cmd_ask.ask(_consoles(), _request(text), opts,
                                 use_templates=not no_templates, session=session,
                                 resume=resume))


@app.command()
def plan(
    text: TextArg,
    as_json: JsonOpt = False,
    telemetry_file: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--telemetry-file", help="Plan against a saved telemetry snapshot.")] = None,
    no_templates: NoTemplatesOpt = False,
) -> None:
    """Plan and store a request without running it (run it later with apply ID)."""
    from annactl.commands import plans as cmd_plans

    raise typer.Exit(cmd_plans.plan(_consoles(), _request(text), as_json=as_json,
                                    telemetry_file=telemetry_file,
                                    use_templates=not no_templates))


@app.command()
def apply(
    target: Annotated[str, typer.Argument(metavar="FILE.json|ID",
                                          help="A plan file (validated like a model reply), "
                                          "- for stdin, or a stored plan id.")],
    yes: YesOpt = False,
    allow_high: AllowHighOpt = False,
    as_json: JsonOpt = False,
    keep_on_verify_fail: KeepOpt = False,
    skip: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--skip", metavar="STEP_ID", help="Leave this step out (repeatable): the rest is a "
        "new plan, judged and previewed again before you approve it.")] = None,
    edit: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--edit", metavar="STEP_ID=COMMAND", help="Replace a step's command (repeatable): a "
        "new plan, judged and previewed again before you approve it.")] = None,
) -> None:
    """Confirm and execute a plan file or a stored plan (or a copy minus --skip steps, or
    with --edit commands)."""
    from annactl.commands import ask as cmd_ask
    from annactl.commands import plans as cmd_plans

    opts = cmd_ask.RunOptions(yes=yes, allow_high=allow_high, as_json=as_json,
                              keep_on_verify_fail=keep_on_verify_fail)
    raise typer.Exit(cmd_plans.apply(_consoles(), target, opts, skip=skip or [],
                                     edits=edit or []))


@app.command()
def show(plan_id: Annotated[str, typer.Argument(metavar="ID")], as_json: JsonOpt = False) -> None:
    """Show a stored plan, its steps' states and its outcome."""
    from annactl.commands import listing

    raise typer.Exit(listing.show(_consoles(), plan_id, as_json=as_json))


@app.command()
def history(
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N",
                                       help="Show N plans (default 20).")] = 20,
    before: Annotated[Optional[str], typer.Option(  # noqa: UP045 - Typer
        "--before", metavar="ID", help="Only plans older than plan ID (the next page).")
    ] = None,
    show_all: Annotated[bool, typer.Option("--all", help="Every plan.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """List plans, newest first, a page at a time."""
    from annactl.commands import listing

    raise typer.Exit(listing.history(_consoles(), as_json=as_json,
                                       limit=0 if show_all else limit, before=before))


@app.command()
def rollback(plan_id: Annotated[str, typer.Argument(metavar="ID")],
             yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
             allow_high: AllowHighOpt = False,
             as_json: JsonOpt = False) -> None:
    """Undo a plan (after success, failure or a daemon crash)."""
    from annactl.commands import plans as cmd_plans

    raise typer.Exit(cmd_plans.rollback(_consoles(), plan_id, yes=yes, as_json=as_json,
                                        allow_high=allow_high))


@app.command(name="confirm")
def confirm_cmd(plan_id: Annotated[str, typer.Argument(metavar="ID")],
                as_json: JsonOpt = False) -> None:
    """Keep a plan the lock-out guard armed (run it from a new session)."""
    from annactl.commands.confirm import confirm_plan
    from annactl.commands.failures import json_failures

    consoles = _consoles()
    with json_failures(consoles, as_json=as_json):  # --json: a refusal is a JSON document too
        status = confirm_plan(consoles, plan_id, as_json=as_json)
    raise typer.Exit(status)


@app.command()
def gc(plan_ids: Annotated[Optional[list[str]], typer.Argument(  # noqa: UP045 - Typer
           metavar="[ID]...", help="Only these plans (asks: they may still be rollbackable).")
       ] = None,
       dry_run: Annotated[bool, typer.Option("--dry-run", help="Only say what would go.")
                          ] = False,
       include_rollbackable: Annotated[bool, typer.Option(
           "--include-rollbackable", help="Also plans that can still be rolled back (asks).")
       ] = False,
       yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
       as_json: JsonOpt = False) -> None:
    """Remove plan backups the retention policy allows (and, when asked, others)."""
    from annactl.commands import gc as cmd_gc

    raise typer.Exit(cmd_gc.gc(_consoles(), list(plan_ids or []), dry_run=dry_run,
                               include_rollbackable=include_rollbackable, yes=yes,
                               as_json=as_json))


app.add_typer(policy_app, name="policy")
app.add_typer(sessions_app, name="sessions")
app.command(name="models")(models)
app.command(name="shell-integration")(shell_integration)
app.command(name="suggest")(suggest)


@app.command()
def memory(action: Annotated[str, typer.Argument(help="show, set or forget.")] = "show",
           args: Annotated[Optional[list[str]], typer.Argument(  # noqa: UP045 - Typer
               metavar="[KEY [VALUE]]", help="The setting (and its value for set).")] = None,
           as_json: JsonOpt = False) -> None:
    """Remembered settings (editor, AUR helper, shell, wallpaper directory…) the model gets."""
    from annactl.commands import memory as memory_cmd

    raise typer.Exit(memory_cmd.run(_consoles(), action, list(args or []), as_json=as_json))


@app.command()
def status(as_json: JsonOpt = False) -> None:
    """CPU, memory, disks, load, failed units, desktop, packages. No model involved."""
    from annactl.commands import status as status_cmd

    raise typer.Exit(status_cmd.run(_consoles(), as_json=as_json))


@app.command()
def mcp(as_json: JsonOpt = False) -> None:
    """Serve Anna's tools to another agent over MCP on stdio (Claude Code, goose...):
    look, explain, run read-only checks, propose; a person approves every change."""
    no_json(as_json, "mcp speaks JSON-RPC on stdio, many messages, not one document",
            "run annactl mcp without --json")
    from annactl.mcp.command import run

    raise typer.Exit(run())


@app.command()
def doctor(as_json: JsonOpt = False) -> None:
    """Check the daemon, the model server, the model, structured output, pacman, config."""
    from annactl.commands import doctor as doctor_cmd

    raise typer.Exit(doctor_cmd.run(_consoles(), as_json=as_json))


@app.command()
def setup(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only show the commands.")
                       ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Install and start the system daemon (asks first; sudo when not root), for packages
    and system services."""
    from annactl.commands import setup as setup_cmd

    raise typer.Exit(setup_cmd.run(_consoles(), yes=yes, dry_run=dry_run, as_json=as_json))


@app.command()
def repl(no_templates: NoTemplatesOpt = False, as_json: JsonOpt = False) -> None:
    """An interactive session: history, Ctrl-R search, slash commands, plans in context."""
    no_json(as_json, "the REPL is a conversation typed at a terminal; it has no JSON form",
            'one request at a time: annactl ask --json "REQUEST"')
    from annactl.interactive import repl as repl_cmd

    raise typer.Exit(repl_cmd.run(_consoles(), use_templates=not no_templates))


@app.command()
def tui(
    text: Annotated[Optional[list[str]], typer.Argument(  # noqa: UP045
        metavar="[REQUEST]", help="A request to plan.")] = None,
    plan_file: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--plan-file", help="A plan JSON file.")] = None,
    plan_id: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--plan", help="A stored plan id.")] = None,
    no_templates: NoTemplatesOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """The approval screen: details, approve (HIGH asks for a word), progress, rollback.
    Without arguments: the approval queue (plans unattended recipes left waiting)."""
    no_json(as_json, "the TUI is a screen at a terminal; it has no JSON form",
            'annactl plan --json "REQUEST", annactl show --json ID, annactl queue --json')
    from annactl.interactive import launch as cmd_tui

    raise typer.Exit(cmd_tui.run(_consoles(), text=" ".join(text or []).strip() or None,
                                 plan_file=plan_file, plan_id=plan_id,
                                 use_templates=not no_templates))


class _WordsArgument(TyperArgument):
    """A request's words in help: ``REQUEST...``, not ``{TEXT}...`` and ``<list[str]>``."""

    def _usage_display_name(self) -> str:
        return f"{self.display_name_raw}..."

    def _rich_display_name(self) -> str:
        return f"{self.display_name_raw}..."

    def display_type_rich(self, ctx: Any) -> str | None:
        """No Python type in the help of a plain words argument."""
        del ctx
        return None


def command() -> Any:
    """The click command behind :data:`app`, its word-list arguments shown as words."""
    built = typer.main.get_command(app)
    commands = getattr(built, "commands", {})
    for sub in commands.values():
        for param in sub.params:
            if isinstance(param, TyperArgument) and param.nargs == -1:
                param.__class__ = _WordsArgument
    return built


app.command(name="export")(export)
app.add_typer(fleet_app, name="fleet")
app.add_typer(queue_app, name="queue")
app.add_typer(recipe_app, name="recipe")
app.add_typer(audit_app, name="audit")
