"""The options and arguments annactl's Typer commands share (:mod:`annactl.app`,
:mod:`annactl.app_groups`), and the two helpers every command body starts with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

if TYPE_CHECKING:
    from annactl.ui.console import Consoles

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
DistroOpt = Annotated[
    Optional[str],  # noqa: UP045 - typer needs Optional here
    typer.Option("--distro", help="Distribution family (arch, debian, ...); default: this one."),
]
YesOpt = Annotated[bool, typer.Option("--yes", "-y",
                                      help="Approve without asking, up to MEDIUM risk.")]
KeepOpt = Annotated[bool, typer.Option(
    "--keep-on-verify-fail",
    help="Keep a step that exited 0 but failed its verification (default: roll back).")]
AllowHighOpt = Annotated[bool, typer.Option("--allow-high",
                                            help="With --yes: approve HIGH risk too.")]
NoTemplatesOpt = Annotated[bool, typer.Option("--no-templates",
                                              help="Always ask the model (no offline answers).")]
TextArg = Annotated[list[str], typer.Argument(
    metavar="REQUEST", show_default=False,
    help='What you want done, in your words (quote it: "install htop").')]


def consoles() -> Consoles:
    """The stdout and stderr consoles every command prints on."""
    from annactl.ui.console import make_consoles

    return make_consoles()


def request(words: list[str]) -> str:
    """A request's words as one text (a usage error when there are none)."""
    from anna_common.errors import UsageError

    text = " ".join(words).strip()
    if not text:
        raise UsageError("say what you want, e.g. annactl \"how is my system?\"")
    return text

ModeOpt = Annotated[str, typer.Option("--mode", help="annad: each host runs the plan through "
                                      "its own Anna; shell: plain Ansible tasks with rescue.")]
IdArg = Annotated[str, typer.Argument(metavar="ID", help="A queued plan id.")]


def no_json(as_json: bool, why: str, instead: str) -> None:
    """A command with no JSON form refuses ``--json`` with a coded error saying why
    (docs/usage.md, "JSON"), instead of click's bare "No such option"."""
    if as_json:
        from anna_common.errors import UsageError

        raise UsageError(f"--json does not apply: {why}", hint=instead)


def group_help(ctx: typer.Context, *, as_json: bool) -> None:
    """A group (or annactl itself) named without a command: its help on stdout, exit 0;
    with ``--json``, the same as one document (``status: help``, the commands and their
    one-line help). Returns when a command was named."""
    if ctx.invoked_subcommand is not None:
        return
    if not as_json:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)
    from annactl.ui.console import emit_json

    group: Any = ctx.command  # a click Group (Typer may vendor its own click)
    names = group.list_commands(ctx) if hasattr(group, "list_commands") else []
    commands = [{"name": name, "help": sub.get_short_help_str(limit=120)}
                for name in names if (sub := group.get_command(ctx, name)) is not None
                and not sub.hidden]
    emit_json(consoles(), {"code": "OK", "status": "help", "command": ctx.command_path,
                           "usage": ctx.get_usage(), "commands": commands})
    raise typer.Exit(0)
