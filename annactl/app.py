"""The Typer declarations of every annactl command (options and help only).

The bodies live in ``annactl/cmd_*.py``, ``status.py``, ``doctor.py``, ``repl.py`` and
``tui/``. This module is imported only once a command has to be parsed: ``annactl
--version`` and ``annactl status`` never pay for Typer (or the pydantic it brings in for
option coercion); see :func:`annactl.cli.main`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

if TYPE_CHECKING:
    from annactl.ui.console import Consoles

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help="Anna: a careful system-administration assistant. The model plans; Anna decides.",
)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
DistroOpt = Annotated[
    Optional[str],  # noqa: UP045 - typer needs Optional here
    typer.Option("--distro", help="Distribution family (arch, debian, ...); default: this one."),
]
YesOpt = Annotated[bool, typer.Option("--yes", "-y",
                                      help="Approve without asking, up to MEDIUM risk.")]
AllowHighOpt = Annotated[bool, typer.Option("--allow-high",
                                            help="With --yes: approve HIGH risk too.")]
NoTemplatesOpt = Annotated[bool, typer.Option("--no-templates",
                                              help="Always ask the model (no offline answers).")]
TextArg = Annotated[list[str], typer.Argument(metavar="TEXT", help="What you want done.")]


def _consoles() -> Consoles:
    from annactl.ui.console import make_consoles

    return make_consoles()


def _request(words: list[str]) -> str:
    from anna_common.errors import UsageError

    text = " ".join(words).strip()
    if not text:
        raise UsageError("say what you want, e.g. annactl \"how is my system?\"")
    return text


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
        raise typer.Exit(cmd_contract.assess_stream(sys.stdin, sys.stdout, distro=distro))
    if command is None:
        raise UsageError("give a command to assess, or --jsonl to read JSON lines on stdin")
    raise typer.Exit(cmd_contract.assess_one(command, distro=distro, as_json=as_json,
                                             consoles=_consoles()))


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
) -> None:
    """Plan a request, confirm by its risk, execute, report (also: annactl "TEXT")."""
    from annactl.commands import ask as cmd_ask

    opts = cmd_ask.RunOptions(yes=yes, allow_high=allow_high, dry_run=dry_run, as_json=as_json)
    raise typer.Exit(cmd_ask.ask(_consoles(), _request(text), opts,
                                 use_templates=not no_templates))


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
) -> None:
    """Confirm and execute a plan file or a stored plan."""
    from annactl.commands import ask as cmd_ask
    from annactl.commands import plans as cmd_plans

    opts = cmd_ask.RunOptions(yes=yes, allow_high=allow_high, as_json=as_json)
    raise typer.Exit(cmd_plans.apply(_consoles(), target, opts))


@app.command()
def show(plan_id: Annotated[str, typer.Argument(metavar="ID")], as_json: JsonOpt = False) -> None:
    """Show a stored plan, its steps' states and its outcome."""
    from annactl.commands import plans as cmd_plans

    raise typer.Exit(cmd_plans.show(_consoles(), plan_id, as_json=as_json))


@app.command()
def history(as_json: JsonOpt = False) -> None:
    """List plans, newest first."""
    from annactl.commands import plans as cmd_plans

    raise typer.Exit(cmd_plans.history(_consoles(), as_json=as_json))


@app.command()
def rollback(plan_id: Annotated[str, typer.Argument(metavar="ID")],
             yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
             allow_high: AllowHighOpt = False,
             as_json: JsonOpt = False) -> None:
    """Undo a plan (after success, failure or a daemon crash)."""
    from annactl.commands import plans as cmd_plans

    raise typer.Exit(cmd_plans.rollback(_consoles(), plan_id, yes=yes, as_json=as_json,
                                        allow_high=allow_high))


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
def doctor(as_json: JsonOpt = False) -> None:
    """Check the daemon, the model server, the model, structured output, pacman, config."""
    from annactl.commands import doctor as doctor_cmd

    raise typer.Exit(doctor_cmd.run(_consoles(), as_json=as_json))


@app.command()
def repl(no_templates: NoTemplatesOpt = False) -> None:
    """An interactive session: history, Ctrl-R search, slash commands, plans in context."""
    from annactl.interactive import repl as repl_cmd

    raise typer.Exit(repl_cmd.run(_consoles(), use_templates=not no_templates))


@app.command()
def tui(
    text: Annotated[Optional[list[str]], typer.Argument(  # noqa: UP045
        metavar="[TEXT]", help="A request to plan.")] = None,
    plan_file: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--plan-file", help="A plan JSON file.")] = None,
    plan_id: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--plan", help="A stored plan id.")] = None,
    no_templates: NoTemplatesOpt = False,
) -> None:
    """The approval screen: details, approve (HIGH asks for a word), progress, rollback."""
    from annactl.interactive import launch as cmd_tui

    raise typer.Exit(cmd_tui.run(_consoles(), text=" ".join(text or []).strip() or None,
                                 plan_file=plan_file, plan_id=plan_id,
                                 use_templates=not no_templates))
