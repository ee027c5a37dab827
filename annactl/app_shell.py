"""The commands that serve the shell around annactl (issue 36): ``models`` (what the model
server has), ``sessions`` (conversations kept between commands), ``shell-integration`` (a key
binding that turns a typed request into a command line) and ``suggest`` (that line).
Declarations only; the bodies are in ``annactl/commands/``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from annactl.app_options import JsonOpt, NoTemplatesOpt, TextArg, consoles, request

sessions_app = typer.Typer(
    invoke_without_command=True,
    help="Conversations kept between commands (annactl ask --continue, --session NAME).")


def _state_dir() -> Path:
    from annactl.core.config import load_settings

    return load_settings().state_dir


@sessions_app.callback()
def sessions_list(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Without a subcommand: every conversation, newest first."""
    if ctx.invoked_subcommand is not None:
        return
    from annactl.commands import sessions

    raise typer.Exit(sessions.list_all(consoles(), _state_dir(), as_json=as_json))


@sessions_app.command("show")
def sessions_show(name: Annotated[str, typer.Argument(metavar="NAME")],
                  as_json: JsonOpt = False) -> None:
    """A conversation's turns, the ones the model gets marked."""
    from annactl.commands import sessions

    raise typer.Exit(sessions.show(consoles(), _state_dir(), name, as_json=as_json))


@sessions_app.command("forget")
def sessions_forget(
    names: Annotated[Optional[list[str]], typer.Argument(metavar="[NAME]...")] = None,  # noqa: UP045
    every: Annotated[bool, typer.Option("--all", help="Every conversation.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Delete conversations (the model never gets their turns again)."""
    from annactl.commands import sessions

    raise typer.Exit(sessions.forget(consoles(), _state_dir(), list(names or []),
                                     every=every, as_json=as_json))


def shell_integration(
    shell: Annotated[str, typer.Argument(metavar="bash|zsh|fish", help="Your shell.")],
    as_json: JsonOpt = False,
) -> None:
    """Print a key binding (Alt-a) that turns the request typed on your prompt into a command
    line to edit and run, with Anna's risk beside it. Install: eval "$(annactl
    shell-integration bash)" in ~/.bashrc (zsh the same; fish: ... fish | source)."""
    from annactl.commands import shell_widget

    raise typer.Exit(shell_widget.run(consoles(), shell, as_json=as_json))


def suggest(text: TextArg, no_templates: NoTemplatesOpt = False,
            as_json: JsonOpt = False) -> None:
    """Plan a request and print it as one command line with Anna's risk as a comment (what
    the shell widget puts on your prompt); nothing is run."""
    from annactl.commands import suggest as suggest_cmd

    raise typer.Exit(suggest_cmd.suggest(consoles(), request(text),
                                         use_templates=not no_templates, as_json=as_json))


def models(as_json: JsonOpt = False) -> None:
    """What the model server has and which model Anna asks (-m NAME or --profile NAME on any
    command changes it for that command)."""
    from annactl.commands import models as models_cmd

    raise typer.Exit(models_cmd.run(consoles(), as_json=as_json))
