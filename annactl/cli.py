"""annactl's entry point: ``main()``, the bare-text shorthand, and the one error edge.

``annactl "TEXT"`` is shorthand for ``annactl ask "TEXT"``. Every error becomes
one line on stderr and an exit status from :mod:`annactl.core.exit_codes`. The
commands are declared in :mod:`annactl.app` (Typer), imported only when a
command has to be parsed, so ``annactl --version`` and ``annactl status`` start
fast (``bench/startup.py``).
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING

from annactl import __version__

if TYPE_CHECKING:
    from annactl.ui.jsonedge import WatchedStdout


def _report(error: BaseException) -> int:
    from anna_common.errors import AnnaError
    from annactl.core.exit_codes import ExitStatus, exit_status_for
    from annactl.ui.console import inert

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


def _usage_error(exc: BaseException) -> BaseException:
    """A click usage error as Anna's (click would print the usage block too)."""
    from anna_common.errors import UsageError

    message = getattr(exc, "format_message", lambda: str(exc))()
    ctx = getattr(exc, "ctx", None)
    where = f"annactl {ctx.info_name} --help" if ctx is not None and ctx.parent else \
        "annactl --help"
    return UsageError(message, hint=f"see {where}")


COMMANDS = {"assess", "validate", "ask", "plan", "apply", "status", "history", "show",
            "rollback", "confirm", "gc", "policy", "doctor", "repl", "tui", "memory",
            "export", "fleet", "queue", "recipe", "setup", "explain", "audit", "mcp", "models",
            "sessions", "shell-integration", "suggest", "--help", "-h"}
"""Known first arguments; anything else is a request for ``ask``."""


_WORD = re.compile(r"[a-z][a-z0-9_-]{0,30}")
"""One bare lowercase word: a mistyped command, never sent to the model as a request."""
ALIASES = {"version": "--version", "help": "--help", "list": "history", "log": "history",
           "undo": "rollback", "check": "doctor", "info": "status", "run": "apply",
           "chat": "repl", "shell": "repl", "ui": "tui"}
"""Words people try first, and the option or command they meant."""


def unknown_command(word: str) -> BaseException:
    """``annactl WORD`` where WORD is no command: say which one was probably meant."""
    import difflib

    from anna_common.errors import AnnaError, ErrorCode

    known = [*sorted(COMMANDS - {"-h"}), "--version"]
    guess = ALIASES.get(word) or next(iter(difflib.get_close_matches(word, known, n=1)), None)
    message = f"no such command: {word}" + (f"; did you mean {guess}?" if guess else "")
    return AnnaError(message, code=ErrorCode.UNKNOWN_COMMAND,
                     hint=f'to ask Anna, say more or use ask: annactl ask {word}; '
                     'every command: annactl --help')


def _fast_status(args: list[str]) -> int | None:
    """``status [--json]``, ``history [...]`` and ``show ID [--json]`` without Typer, whose
    option parsing imports pydantic (~50 ms).

    ``annactl status`` must start within 12x a bare interpreter (bench/startup.py); every
    other command needs pydantic anyway. Anything unusual (``--help``, typos) falls
    through to Typer and its usual messages.
    """
    if args[:1] in (["history"], ["show"]):
        from annactl.commands import listing

        parse = listing.parse_history_args if args[0] == "history" else listing.parse_show_args
        opts = parse(args[1:])
        if opts is None:
            return None
        from annactl.ui.console import make_consoles

        run = listing.history if args[0] == "history" else listing.show
        return int(run(make_consoles(), **opts))
    if args[:1] == ["apply"]:
        return _fast_apply(args[1:])
    if args[:1] == ["ask"]:
        return _fast_ask(args[1:])
    if not args or args[0] != "status" or not set(args[1:]) <= {"--json"}:
        return None
    from annactl.commands import status as status_cmd
    from annactl.ui.console import make_consoles

    return status_cmd.run(make_consoles(), as_json="--json" in args[1:])


APPLY_FLAGS = frozenset({"--yes", "-y", "--allow-high", "--json"})
"""The flags ``apply`` takes (anything else goes through Typer and its messages)."""


def _fast_apply(args: list[str]) -> int | None:
    """``apply TARGET [--yes] [--allow-high] [--json]`` without Typer (issue 12: apply of a
    trivial plan within 15x a bare interpreter)."""
    targets = [a for a in args if a not in APPLY_FLAGS]
    if len(targets) != 1 or (targets[0].startswith("-") and targets[0] != "-"):
        return None
    from annactl.commands import plans as cmd_plans
    from annactl.commands.ask import RunOptions
    from annactl.ui.console import make_consoles

    opts = RunOptions(yes="--yes" in args or "-y" in args, allow_high="--allow-high" in args,
                      as_json="--json" in args)
    return cmd_plans.apply(make_consoles(), targets[0], opts)


ASK_FLAGS = frozenset({"--yes", "-y", "--dry-run", "--json", "--no-templates", "--continue",
                       "-c"})
"""The flags ``ask`` takes without Typer (anything else goes through Typer and its messages)."""


def _fast_ask(args: list[str]) -> int | None:
    """``ask TEXT… [--yes] [--dry-run] [--json] [--no-templates] [--continue]`` (and the bare
    ``annactl "TEXT"``) without Typer, whose import is a fifth of answering "how is my
    system?" offline (issue 23.7, bench/startup.py)."""
    words = [a for a in args if not a.startswith("-")]
    flags = {a for a in args if a.startswith("-")}
    text = " ".join(words).strip()
    if not text or not flags <= ASK_FLAGS:
        return None
    import gc

    # Python's cycle collector, run every 700 allocations, walks the ever larger heap of
    # modules, classes and schemas being built: ~38M instructions, 3 % of the offline answer
    # (bench/startup.py). Planning creates little cyclic garbage and is bounded (the model
    # budget); the collector is on again once the plan is made (commands/ask.py).
    gc.disable()
    from annactl.commands import ask as cmd_ask
    from annactl.ui.console import make_consoles

    opts = cmd_ask.RunOptions(yes=bool(flags & {"--yes", "-y"}), dry_run="--dry-run" in flags,
                              as_json="--json" in flags)
    return int(cmd_ask.ask(make_consoles(), text, opts,
                           use_templates="--no-templates" not in flags,
                           resume=bool(flags & {"--continue", "-c"})))


def _ended(exc: BaseException, watched: WatchedStdout | None = None) -> int:
    """The exit status for whatever ended a command (Typer's own signals included); with
    ``--json`` (``watched``), a command that printed nothing on stdout gets the error's
    document there."""
    import typer
    from typer.exceptions import TyperException

    # Recent Typer vendors click, so its Exit, Abort and usage errors are its own classes;
    # older Typer raised click's (pyproject allows both).
    usage: tuple[type[BaseException], ...] = (TyperException,)
    try:
        import click

        usage = (TyperException, click.ClickException)
    except ImportError:
        pass
    if isinstance(exc, typer.Exit) or type(exc).__name__ == "Exit":
        return int(getattr(exc, "exit_code", 0) or 0)
    error: BaseException = exc
    if isinstance(exc, typer.Abort) or type(exc).__name__ == "Abort":
        error = KeyboardInterrupt()
    elif isinstance(exc, usage):
        error = _usage_error(exc)
    return _failed(error, watched)


def _failed(error: BaseException, watched: WatchedStdout | None) -> int:
    """Report ``error`` (stderr, exit status) and, with ``--json``, its stdout document."""
    if watched is not None:
        from annactl.ui.jsonedge import emit_error

        emit_error(watched, error)
    return _report(error)


def _flags_last(args: list[str]) -> list[str]:
    """``annactl --json "TEXT"`` as ``annactl "TEXT" --json``: ask's flags typed before the
    words go after them, so the words are routed (a request, a command, a typo) as if typed
    first instead of Typer's root refusing ``--json``."""
    lead = 0
    while lead < len(args) and args[lead] in ASK_FLAGS:
        lead += 1
    if 0 < lead < len(args) and not args[lead].startswith("-"):
        return args[lead:] + args[:lead]
    return args


CHOICE_OPTIONS = {"--model": "model", "-m": "model", "--profile": "profile"}
"""Options any command that asks a model takes, wherever they are typed (before ``--``)."""


def _take_choices(args: list[str]) -> list[str] | BaseException:
    """``-m NAME``/``--model NAME``/``--profile NAME`` (or ``--opt=NAME``) taken out of
    ``args`` and handed to :func:`annactl.core.quicksettings.choose`, so every command and
    every fast path (``ask``, the bare request) plans with them; the rest is returned (or the
    usage error of an option without its name)."""
    from annactl.core.quicksettings import choose

    rest: list[str] = []
    found: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest.extend(args[i:])
            break
        name, eq, value = arg.partition("=")
        if name in CHOICE_OPTIONS and (eq or name == arg):
            if not eq:
                i += 1
                value = args[i] if i < len(args) else ""
            if not value.strip() or value.startswith("-"):
                from anna_common.errors import UsageError

                return UsageError(f"{name} needs a name", hint="annactl models lists the "
                                 "server's models; profiles are [profiles.NAME] in config.toml")
            found[CHOICE_OPTIONS[name]] = value.strip()
        else:
            rest.append(arg)
        i += 1
    if found:
        choose(**found)
    return rest


def _json_last(args: list[str]) -> list[str]:
    """``--json`` anywhere before ``--`` goes last: ``annactl policy --json show`` as
    ``annactl policy show --json`` (a group given ``--json`` before its command would keep
    it for itself). Every command and group takes ``--json`` (docs/usage.md, "JSON")."""
    cut = args.index("--") if "--" in args else len(args)
    if "--json" not in args[:cut]:
        return args
    return [a for a in args[:cut] if a != "--json"] + ["--json"] + args[cut:]


def _asks_version(args: list[str]) -> bool:
    """``--version``, with ``--json`` before or after it (either order prints one document)."""
    lead = 0
    while lead < len(args) and args[lead] in ("--json", "--version"):
        lead += 1
    return "--version" in args[:lead]


def _mistyped(args: list[str]) -> str | None:
    """``annactl WORD [--OPTION…]`` where WORD is no command: the word (never a request)."""
    if not args or not _WORD.fullmatch(args[0]) or args[0] in COMMANDS:
        return None
    return args[0] if all(a.startswith("-") for a in args[1:]) else None


def _piped_without_question(args: list[str]) -> BaseException | None:
    """``… | annactl`` or ``… | annactl ask`` with no question: a usage error saying how to
    ask about the piped text (which is never read, so this never waits on the writer), or
    None. Piped text is context for a question, never the question itself: it is
    untrusted, and a request is what the person says."""
    if [a for a in args if a not in ("--json", "ask")] or args.count("ask") > 1:
        return None
    from annactl.commands.stdin_text import PIPED_EXAMPLE, piped_fd

    if not piped_fd(0):
        return None
    from anna_common.errors import UsageError

    return UsageError("text was piped in, but no question was asked about it",
                      hint=f"say what you want to know: {PIPED_EXAMPLE}")


PLUGINS_OFF = ("PYDANTIC_DISABLE_PLUGINS", "__all__")
"""Pydantic looks for plugins (``importlib.metadata`` entry points of every installed
distribution) when it builds its first validator: ~19M instructions, 2 % of answering "how is
my system?" offline (bench/startup.py). Anna uses none, and a plugin would see every value
validated (settings with the API key, telemetry, plans), so annactl turns them off unless
the variable is set already (docs/usage.md)."""


def main(argv: list[str] | None = None) -> int:
    """Console entry point."""
    os.environ.setdefault(*PLUGINS_OFF)
    args = list(sys.argv[1:] if argv is None else argv)
    if _asks_version(args):
        print(f'{{"code": "OK", "version": "{__version__}"}}' if "--json" in args
              else f"annactl {__version__}")
        return 0
    watched = None
    if "--json" in args:
        from annactl.ui.jsonedge import watch_stdout

        watched = watch_stdout()
    taken = _take_choices(args)
    if isinstance(taken, BaseException):
        return _failed(taken, watched)
    args = _json_last(_flags_last(taken))
    if args[:1] and args[0].endswith("-completion"):  # a named shell wins (issue 36.9)
        try:
            from annactl.commands.completion import run as completion

            done = completion(args)
        except Exception as exc:  # the one place errors end
            return _ended(exc, watched)
        if done is not None:
            return done
    if (word := _mistyped(args)) is not None:
        return _failed(unknown_command(word), watched)
    if (unasked := _piped_without_question(args)) is not None:
        return _failed(unasked, watched)
    if args and not args[0].startswith("-") and args[0] not in COMMANDS:
        args.insert(0, "ask")
    try:
        fast = _fast_status(args)
        if fast is not None:
            return fast
        from annactl.app import command

        # without standalone mode click *returns* the code of a typer.Exit instead of raising
        result = command().main(args=args, prog_name="annactl", standalone_mode=False)
        if isinstance(result, int):
            return result
    except (KeyboardInterrupt, Exception) as exc:  # the one place errors end
        return _ended(exc, watched)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
