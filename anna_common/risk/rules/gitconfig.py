"""git configuration that runs commands: ``git -c core.pager='…' log`` is not a read.

Many git keys name a program git starts (``core.pager``, ``core.fsmonitor``,
``core.sshCommand``, ``diff.external``, ``alias.x=!cmd``, ``credential.helper``, filters,
merge drivers, ``include.path`` pulling in more of them). Rather than list every such key
(new ones appear), a key given on the command line (``-c``, ``--config-env``) or written with
``git config`` is judged by a short list of keys known to be inert; any other is HIGH.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out
from anna_common.risk.rules.everycommand import SAFE_PAGERS

if TYPE_CHECKING:
    from anna_common.shell.grammar import SimpleCommand

_INERT_PREFIXES = ("color.", "advice.", "column.", "i18n.", "log.", "blame.", "status.",
                   "user.name", "user.email", "init.defaultbranch", "pull.rebase", "pull.ff",
                   "core.quotepath", "core.autocrlf", "core.filemode", "core.ignorecase",
                   "grep.linenumber", "diff.noprefix", "diff.renames", "diff.colormoved",
                   "safe.directory", "push.default", "merge.ff", "fetch.prune", "help.autocorrect")
"""Keys that only change what git prints or how it stores, never what it runs."""


_READ_OPTIONS = frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch",
                           "--get-color", "--get-colorbool", "--show-origin", "--show-scope",
                           "--name-only", "get", "list"})


GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                            "--config-env", "--super-prefix", "--attr-source"})
"""git's own options that take the next word as their value."""


def runs_command(key: str, value: str | None) -> bool:
    """True when setting ``key`` (to ``value``, None when unknown) may make git run a program."""
    low = key.lower()
    if low == "core.pager" or low.startswith("pager."):
        return value is None or value.strip() not in SAFE_PAGERS
    return not low.startswith(_INERT_PREFIXES)


def command_line_config(cmd: SimpleCommand, out: Out) -> bool:
    """HIGH for ``git -c KEY=VALUE`` / ``--config-env=KEY=VAR`` / ``--exec-path=DIR`` that may
    run a program; True when found."""
    args = cmd.args
    skip = False
    for i, word in enumerate(args):
        text = word.text
        if skip:  # the value of -C, -c, --git-dir …
            skip = False
            continue
        if not text.startswith("-"):
            return False  # the subcommand: git's own options end here
        skip = text in GIT_VALUE_OPTIONS
        setting: str | None = None
        if text == "-c" and i + 1 < len(args):
            setting = args[i + 1].text if args[i + 1].literal else None
            if setting is None:
                return _high(out, "git -c is given a setting only known at run time")
        elif text.startswith("--config-env"):
            pair = text.split("=", 1)[1] if "=" in text else (
                args[i + 1].text if i + 1 < len(args) else "")
            if runs_command(pair.split("=", 1)[0], None):
                return _high(out, f"git --config-env sets {pair.split('=', 1)[0]} from the "
                             "environment; git may run it as a command")
        elif text.startswith("--exec-path="):
            return _high(out, "git --exec-path runs git's commands from another directory")
        if setting is not None:
            key, _, value = setting.partition("=")
            if runs_command(key, value):
                return _high(out, f"git -c {setting[:60]}: git may run it as a command")
    return False


def config_write(rest: list[str], out: Out) -> bool:
    """``git config [scope] KEY VALUE`` (or ``set``/``--add``) storing a key that may run a
    program: HIGH. Reads and inert keys: False (the caller judges them)."""
    if set(rest) & _READ_OPTIONS:
        return False
    words: list[str] = []
    skip = False
    for word in rest:
        if skip:
            skip = False
        elif word in ("-f", "--file", "--blob", "--type", "--default", "--comment"):
            skip = True  # an option's value, not the key
        elif not word.startswith("-") and word != "set":
            words.append(word)
    if len(words) < 2:
        return False
    key, value = words[0], " ".join(words[1:])
    if runs_command(key, value):
        return _high(out, f"git config {key} stores a setting git may run as a command")
    return False


def _high(out: Out, message: str) -> bool:
    out.high(Code.EMBEDDED_SHELL, message, target="git")
    return True
