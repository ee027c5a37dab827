"""Everyday programs: the read-only allowlist, file tools, git, archives, editors, schedulers.

A command is INFO only when every program in it is on the parsed allowlist
below (with read-only arguments) and nothing is written. File tools (``cp``,
``rm``, ``sed -i``, ...) take their risk from where they write
(:mod:`anna_common.risk.rules.locations`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out
from anna_common.risk.rules.builtins import BUILTIN_RULES
from anna_common.risk.rules.gitconfig import GIT_VALUE_OPTIONS, command_line_config, config_write
from anna_common.risk.rules.network import lookup
from anna_common.risk.rules.readonly import READ_ONLY, read_only
from anna_common.risk.writes import operands, options

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell.grammar import SimpleCommand



def date(cmd: SimpleCommand, out: Out) -> None:
    """date prints the time; -s/--set changes the system clock.

    TLS, logs and logins depend on the clock, so setting it is a system change.
    """
    if any(w.text in ("-s", "--set") or w.text.startswith("--set=") for w in cmd.args):
        out.high(Code.SYSTEM_SETTING, "date sets the system clock", system=True, target="clock")
    else:
        out.read_only()


def getent(cmd: SimpleCommand, out: Out) -> None:
    """getent reads name databases; shadow and gshadow hold password hashes."""
    if any(w.text in ("shadow", "gshadow") for w in cmd.args):
        out.high(Code.SECRET_READ, "getent reads password hashes", target="shadow", system=True)
    elif any(w.text.startswith(("hosts", "ahosts")) for w in cmd.args[:1]):
        lookup(cmd, out)  # a name lookup, as dig's: one computed at run time can carry data out
    else:
        out.read_only()


def find(cmd: SimpleCommand, out: Out) -> None:
    """find reads; -delete, -exec and -fprint are judged through their targets and commands."""
    if any(w.text in ("-ok", "-okdir") for w in cmd.args):
        out.high(Code.INTERACTIVE_PROGRAM, "find -ok asks on a terminal for every file")
        return
    out.read_only()


def parallel(cmd: SimpleCommand, out: Out) -> None:
    """GNU parallel (and rush, xe) build and run command lines from their input: not analysed."""
    out.high(Code.OPAQUE, f"{cmd.program} runs command lines it builds from its input, which "
             "Anna does not analyse", target=cmd.program)


def fd(cmd: SimpleCommand, out: Out) -> None:
    """fd/fdfind search; -x/-X run a command per match (not analysed: HIGH)."""
    if options(cmd.args) & {"-x", "--exec", "-X", "--exec-batch"}:
        out.high(Code.OPAQUE, f"{cmd.program} -x runs commands Anna does not analyse")
    else:
        out.read_only()


_SED_SAFE = re.compile(
    r"""^\s*(?:
        (?:\d+|\$|/(?:[^/\\]|\\.)*/)?(?:\s*,\s*(?:\d+|\$|/(?:[^/\\]|\\.)*/))?\s*!?\s*
        (?:[pdqQnNgGhHxl=]|s(.)(?:(?!\1)[^\\]|\\.)*\1(?:(?!\1)[^\\]|\\.)*\1[gpiIm0-9]*
           |y(.)(?:(?!\2).)*\2(?:(?!\2).)*\2|\{|\}|\#[^\n]*|)
        \s*[;\n]?\s*)+$""",
    re.VERBOSE,
)


def sed_script_safe(script: str) -> bool:
    """True when a sed script only substitutes, prints and deletes (no ``e``, ``w``, ``r``)."""
    return bool(_SED_SAFE.match(script)) if len(script) < 2000 else False


def sed(cmd: SimpleCommand, out: Out) -> None:
    """sed: scripts that execute (``e``) or write files (``w``) are not read-only."""
    scripts: list[str] = []
    args = cmd.args
    for i, word in enumerate(args):
        if word.text in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1].text)
        elif word.text.startswith("--expression="):
            scripts.append(word.text.split("=", 1)[1])
        elif word.text in ("-f", "--file"):
            out.medium(Code.SCRIPT_FILE, "sed runs a script file Anna cannot see")
            return
    if not scripts:
        ops = operands(args, frozenset({"-l", "--line-length"}))
        scripts = [ops[0].text] if ops else []
    if any(not w.literal for w in args[:1]) or not all(sed_script_safe(s) for s in scripts):
        out.high(Code.OPAQUE, "sed script may execute commands or write files", target="sed")
        return
    out.read_only()  # in-place edits are judged through write targets


_GIT_READ = frozenset({"status", "log", "diff", "show", "rev-parse", "describe", "ls-files",
                       "ls-tree", "ls-remote", "blame", "shortlog", "grep", "cat-file",
                       "whatchanged", "reflog", "version", "--version", "help", "rev-list",
                       "name-rev", "merge-base", "count-objects", "fsck", "verify-commit",
                       "var", "for-each-ref", "show-ref", "check-ignore", "annotate"})


def git(cmd: SimpleCommand, out: Out) -> None:
    """git: history and status read; hard resets, cleans and force pushes destroy work."""
    if command_line_config(cmd, out):
        return
    words = [w.text for w in cmd.args]
    i = 0
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in GIT_VALUE_OPTIONS else 1
    verb = words[i] if i < len(words) else ""
    rest = set(words[i + 1 :])
    if verb == "config" and config_write(words[i + 1:], out):
        return
    if (verb == "grep" and any(r.startswith(("-O", "--open-files-in-pager")) for r in rest)) or (
            verb == "difftool" and any(r.startswith(("-x", "--extcmd")) for r in rest)):
        out.high(Code.EMBEDDED_SHELL, f"git {verb} is handed a command to run", target="git")
        return
    destructive = (
        (verb == "reset" and "--hard" in rest)
        or (verb == "clean" and any(r.startswith("-") and "f" in r for r in rest)
            and not any(r.startswith("-") and "n" in r for r in rest))
        or (verb == "push" and (rest & {"-f", "--mirror", "--delete", "-d"} or
                                any(r.startswith(("--force", "+")) for r in rest)))
        or (verb == "branch" and ("-D" in rest or (rest & {"-d", "--delete"} and
                                                   rest & {"-f", "--force"})))
        or (verb == "checkout" and ("--" in rest or "-f" in rest or "." in rest))
        or (verb == "restore" and not rest & {"--staged"})
        or (verb == "stash" and rest & {"drop", "clear"})
        or (verb == "reflog" and rest & {"expire", "delete"})
        or (verb in ("filter-branch", "filter-repo", "update-ref") and (verb != "update-ref" or
                                                                        "-d" in rest))
        or (verb == "gc" and any(r.startswith("--prune") for r in rest))
    )
    if destructive:
        out.high(Code.DESTRUCTIVE_GIT, f"git {verb} discards work that cannot be recovered",
                 target=f"git {verb}")
        return
    if verb in _GIT_READ or (verb == "branch" and not rest & {"-d", "-m", "-M", "-c", "-C",
                                                             "--delete", "--move", "--copy"}
                             and not [r for r in rest if not r.startswith("-")]) or (
            verb == "remote" and (not rest or rest <= {"-v", "--verbose", "show", "get-url"})) or (
            verb == "config" and rest & {"--get", "--list", "-l", "--get-all", "--get-regexp"}) or (
            verb == "stash" and rest & {"list", "show"}) or (verb == "tag" and not rest) or (
            verb == "worktree" and "list" in rest) or (verb == "submodule" and "status" in rest):
        out.read_only()
        return
    if verb in ("clone", "fetch", "pull", "push", "submodule"):
        out.low(Code.NETWORK_READ, f"git {verb} talks to a remote repository", target=verb)
        return
    out.low(Code.HOME_WRITE, f"git {verb} changes a repository", target=verb)


GENERAL_RULES: dict[str, Callable[[SimpleCommand, Out], None]] = {
    **dict.fromkeys(sorted(READ_ONLY), read_only),
    "date": date,
    "find": find,
    **dict.fromkeys(("fd", "fdfind"), fd),
    **dict.fromkeys(("parallel", "rush", "xe"), parallel),
    "sed": sed,
    **BUILTIN_RULES,
    "getent": getent,
    "git": git,
}
"""Rules for everyday programs."""
