"""annactl's command line (Typer). Heavy imports happen inside the command that needs them.

``annactl "TEXT"`` is shorthand for ``annactl ask "TEXT"``. Every error becomes
one line on stderr and an exit status from :mod:`annactl.exit_codes`.
"""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from annactl import __version__

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


def _consoles():  # type: ignore[no-untyped-def]
    from annactl.console import make_consoles

    return make_consoles()


@app.command()
def assess(
    command: Annotated[Optional[str], typer.Argument(help="The shell command.")] = None,  # noqa: UP045
    as_json: JsonOpt = False,
    jsonl: Annotated[bool, typer.Option("--jsonl", help="Read JSON lines on stdin.")] = False,
    distro: DistroOpt = None,
) -> None:
    """Anna's own risk assessment of a shell command."""
    from anna_common.errors import UsageError
    from annactl import cmd_contract

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
    from annactl import cmd_contract

    raise typer.Exit(cmd_contract.validate_file(source, distro=distro, as_json=as_json,
                                                consoles=_consoles()))


def _report(error: BaseException) -> int:
    from anna_common.errors import AnnaError
    from annactl.console import inert
    from annactl.exit_codes import ExitStatus, exit_status_for

    status = exit_status_for(error)
    if isinstance(error, AnnaError):
        line = f"annactl: {error.code}: {inert(error.message)}"
        if error.hint:
            line += f"\n  hint: {inert(error.hint)}"
    elif status == ExitStatus.INTERRUPTED:
        line = "annactl: interrupted"
    else:
        line = f"annactl: internal error: {type(error).__name__}: {inert(error)}"
    print(line, file=sys.stderr)
    return int(status)


COMMANDS = {"assess", "validate", "ask", "plan", "apply", "status", "history", "show",
            "rollback", "doctor", "repl", "tui", "--help", "-h"}
"""Known first arguments; anything else is a request for ``ask``."""


def main(argv: list[str] | None = None) -> int:
    """Console entry point."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--version"]:
        print(f"annactl {__version__}")
        return 0
    if args and not args[0].startswith("-") and args[0] not in COMMANDS:
        args.insert(0, "ask")
    try:
        # without standalone mode click *returns* the code of a typer.Exit instead of raising
        result = app(args=args, prog_name="annactl", standalone_mode=False)
        if isinstance(result, int):
            return result
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except (KeyboardInterrupt, Exception) as exc:  # noqa: BLE001 - the one place errors end
        import click

        if isinstance(exc, click.exceptions.Exit):
            return int(exc.exit_code or 0)
        if isinstance(exc, click.exceptions.Abort):
            return _report(KeyboardInterrupt())
        if isinstance(exc, click.ClickException):
            exc.show()
            return 2
        return _report(exc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
