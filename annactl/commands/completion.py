"""``annactl --install-completion [SHELL]`` and ``--show-completion [SHELL]``.

Typer's own options take no shell: they detect it from the parent processes, ignore a
shell typed after them (``--install-completion zsh`` installed bash's), and, when the
parent is no shell they know (a script, an IDE's terminal, ``sudo``), say "Shell None is
not supported" (issue 36.9). Here the shell named wins, detection is the fallback, and a
shell that cannot be told is a usage error that says how to name it.
"""

from __future__ import annotations

from anna_common.errors import UsageError
from annactl.ui.console import inert

SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")
"""The shells Typer writes completion for."""
OPTIONS = ("--install-completion", "--show-completion")
"""The two options this module answers."""
PROG = "annactl"
COMPLETE_VAR = "_ANNACTL_COMPLETE"
"""The variable the completion script sets (Typer's ``_{PROG}_COMPLETE``)."""


def run(args: list[str]) -> int | None:
    """Answer ``OPTION [SHELL]`` (None: ``args`` are something else)."""
    if not args or args[0] not in OPTIONS or len(args) > 2:
        return None
    from typer import _completion_shared as shared

    named = args[1] if len(args) == 2 else None
    if named is not None and named not in SHELLS:
        raise UsageError(f"no completion for the shell {inert(named, max_chars=40)!r}",
                         hint=f"{args[0]} {' | '.join(SHELLS[:4])}")
    shell = named or shared._get_shell_name()  # Typer's own detection (private)
    if shell not in SHELLS:
        raise UsageError("could not tell which shell you use",
                         hint=f"name it: annactl {args[0]} bash (or zsh, fish, powershell)")
    if args[0] == "--show-completion":
        print(shared.get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR,
                                           shell=shell))
        return 0
    done, path = shared.install(shell=shell, prog_name=PROG, complete_var=COMPLETE_VAR)
    print(f"{done} completion installed in {path}\n"
          "Completion will take effect once you restart the terminal")
    return 0
