"""Shells and interpreters: how each is handed code (``-c``, ``-e``, a script, stdin)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from anna_common.shell.words import Word

SHELLS = frozenset({
    "sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "ash", "fish", "csh", "tcsh", "yash",
    "rc", "posh", "rbash", "oksh", "loksh", "elvish", "nu", "xonsh", "ion", "pwsh", "hush",
    "sash", "esh", "scsh", "es",
})
"""Programs that are shells: given code, they run it; given nothing, they are interactive."""


_SHELL_VALUE_OPTS = {"-o", "+o", "-O", "+O", "--rcfile", "--init-file", "-C", "--command"}


_PYTHON = re.compile(r"^(?:python|pypy)(?:\d+(?:\.\d+)?)?$")


INTERPRETER_CODE_OPTS: dict[str, tuple[str, ...]] = {
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
    "bun": ("-e", "--eval", "-p", "--print"),
    "php": ("-r",),
    "lua": ("-e",),
    "luajit": ("-e",),
    "Rscript": ("-e",),
    "julia": ("-e", "--eval", "-E"),
    "expect": ("-c",),
    "tclsh": (),
    "wish": (),
    "irb": (),
    "jjs": (),
    "jshell": (),
    "octave": ("--eval",),
    "octave-cli": ("--eval",),
    "gdb": ("-ex", "--eval-command"),
    "dc": ("-e", "--expression"),
    "m4": (),
    "jrunscript": ("-e",),
    "java": (),
    "R": ("-e",),
    "guile": ("-c",),
    "ghci": ("-e",),
    "osascript": ("-e",),
    "racket": ("-e", "--eval"),
    "clojure": ("-e", "--eval"),
    "elixir": ("-e", "--eval"),
    "erl": ("-eval",),
    "deno": (),
    "qjs": ("-e", "--eval"),
    "scala": ("-e",),
    "kotlin": (),
    "groovy": ("-e",),
    "pwsh": ("-c", "-Command"),
}
"""Interpreters and the options that hand them code on the command line."""


AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
"""awk implementations: the first operand is a program."""


def language_of(program: str) -> str | None:
    """The code language a program interprets, or None when it is not an interpreter."""
    if program in SHELLS:
        return "sh"
    if _PYTHON.match(program):
        return "python"
    if program in AWKS:
        return "awk"
    if program in INTERPRETER_CODE_OPTS:
        return program
    return None


@dataclass(frozen=True, slots=True)
class ShellCall:
    """How a shell was asked to run: code, a script file, or standard input."""

    mode: str
    """``code`` (-c), ``script`` (a file operand) or ``stdin``."""
    code: Word | None = None
    """The -c string or the script operand."""


def shell_call(args: list[Word]) -> ShellCall:
    """Parse a shell's arguments (``bash -lc 'CODE'``, ``sh script.sh``, ``sh -s``)."""
    i = 0
    want_code = False
    read_stdin = False
    while i < len(args):
        word = args[i]
        text = word.text
        if not word.literal or not text or text[0] not in "-+" or text in ("-", "--"):
            break
        if text in _SHELL_VALUE_OPTS:
            i += 2
            continue
        if text.startswith("--"):
            i += 1
            continue
        if "c" in text[1:]:
            want_code = True
        if "s" in text[1:]:
            read_stdin = True
        i += 1
    if i < len(args) and args[i].text == "--":
        i += 1
    if want_code:
        return ShellCall("code", args[i] if i < len(args) else None)
    if read_stdin or i >= len(args) or args[i].text == "-":
        return ShellCall("stdin")
    return ShellCall("script", args[i])


def interpreter_code(program: str, args: list[Word]) -> tuple[str, Word | None]:
    """How an interpreter gets its code, as ``(how, WORD)``.

    ``("code", WORD)``, ``("script", WORD)`` or ``("stdin", None)``;
    ``("module", WORD)`` for ``python -m``.
    """
    if _PYTHON.match(program):
        return _python_code(args)
    if program in AWKS:
        return _awk_code(args)
    code_opts = INTERPRETER_CODE_OPTS.get(program, ())
    codes: list[Word] = []
    i = 0
    while i < len(args):
        text = args[i].text
        if program in ("perl", "ruby") and re.fullmatch(r"-[a-zA-Z]*[eE]", text) and \
                i + 1 < len(args):
            codes.append(args[i + 1])  # "perl -ne CODE", "ruby -lne CODE": -e ends a cluster
            i += 2
            continue
        if text in code_opts and i + 1 < len(args):
            codes.append(args[i + 1])
            i += 2
            continue
        attached = next((o for o in code_opts if len(o) == 2 and text.startswith(o) and
                         len(text) > 2 and not text.startswith("--")), None)
        if attached and program in ("perl", "ruby"):
            codes.append(Word.of(text[2:]) if args[i].literal else args[i])
            i += 1
            continue
        if text == "--" or not text.startswith("-") or text == "-":
            break
        i += 1
    if codes:
        if all(c.literal for c in codes):
            return "code", Word.of("\n".join(c.text for c in codes))
        return "code", Word.unknown("\n".join(c.text for c in codes))
    if i < len(args) and args[i].text not in ("-", "--"):
        return "script", args[i]
    return "stdin", None


def _python_code(args: list[Word]) -> tuple[str, Word | None]:
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "-c":
            return ("code", args[i + 1]) if i + 1 < len(args) else ("stdin", None)
        if text.startswith("-c") and len(text) > 2:
            return "code", Word.of(text[2:])
        if re.fullmatch(r"-[bBdEhiIOPqsSuvx]+c", text):  # ``-Ic CODE``: flags, then -c
            return ("code", args[i + 1]) if i + 1 < len(args) else ("stdin", None)
        if text == "-m":
            return ("module", args[i + 1]) if i + 1 < len(args) else ("stdin", None)
        if text in ("-W", "-X", "--check-hash-based-pycs"):
            i += 2
            continue
        if text == "-" or not text.startswith("-"):
            break
        i += 1
    if i < len(args) and args[i].text != "-":
        return "script", args[i]
    return "stdin", None


_AWK_FOREIGN = frozenset({"-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load"})


def _awk_code(args: list[Word]) -> tuple[str, Word | None]:
    i = 0
    while i < len(args):
        text = args[i].text
        if text in _AWK_FOREIGN:
            # -f/-E read the program from a file; gawk's -i/--include and -l/--load pull in
            # other code ("-i inplace" rewrites every input file): none of it is visible
            return ("script", args[i + 1]) if i + 1 < len(args) else ("stdin", None)
        if text.startswith(("--file=", "--exec=", "--include=", "--load=")) or (
                len(text) > 2 and text[:2] in ("-f", "-E", "-i", "-l")):
            return "script", args[i]
        if text in ("-e", "--source") and i + 1 < len(args):
            return "code", args[i + 1]
        if text in ("-F", "-v", "--assign", "--field-separator"):
            i += 2
            continue
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            break
        i += 1
    if i < len(args):
        return "code", args[i]
    return "stdin", None
