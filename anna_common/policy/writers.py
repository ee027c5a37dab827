"""Programs that write the files named as their operands, for the policy's path rules.

The risk rules find what ``cp``, ``tee``, ``sed -i`` or ``install`` write; these programs
write too, but take their target as a plain operand or change a whole tree, so a rule
``deny path=/etc/ssh/**`` must see them:

- ``patch FILE``, ``patch -o FILE``; with no file operand, the files the patch names,
  below ``-d DIR`` (or the working directory): the whole tree there;
- ``git checkout|switch|reset|restore|apply|stash|merge|pull|rebase|am|cherry-pick|revert|
  clean``: the work tree (``-C DIR``, ``--work-tree``, ``GIT_WORK_TREE``, else the working
  directory), all of it — Anna cannot tell a branch from a path, and a checkout of a
  branch rewrites every tracked file; ``--git-dir``/``GIT_DIR`` without a work tree:
  anywhere;
- editors run as scripts or interactively — ``ed``, ``red``, ``ex``, ``vi``, ``vim``,
  ``nvim``, ``view``, ``nano``, ``emacs`` — every file operand (option arguments that
  are commands, such as ``-c wq``, are not files);
- ``sponge FILE``.

A :class:`Target` is a path operand, or a whole tree (``tree``) below a base directory.
Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from anna_common.policy import options
from anna_common.shell.model import SimpleCommand
from anna_common.shell.words import Word

_GIT_WRITES = frozenset({"checkout", "switch", "reset", "restore", "apply", "stash", "merge",
                         "pull", "rebase", "am", "cherry-pick", "revert", "clean"})
"""git subcommands that rewrite files of the work tree."""
_GIT_GLOBAL_ARG = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                             "--exec-path", "--config-env", "--super-prefix"})
_EDITORS = frozenset({"ed", "red", "ex", "vi", "vim", "nvim", "view", "vim.basic",
                      "vim.tiny", "nano", "emacs"})
_EDITOR_ARG = frozenset({"-c", "--cmd", "-S", "-u", "-U", "-i", "-T", "-t", "-q", "-p",
                         "--eval", "--execute", "-l", "--load", "-f", "--funcall",
                         "--listen", "--server"})
"""Options whose argument is a command, a script read or a setting: not a file written."""
_PATCH_ARG = frozenset({"-i", "-o", "-d", "-p", "-r", "-F", "-D", "-z", "-B", "-Y", "-V",
                        "-g", "--input", "--output", "--directory", "--strip",
                        "--reject-file", "--fuzz", "--ifdef", "--suffix", "--prefix",
                        "--basename-prefix", "--version-control", "--get", "--backup",
                        "--reject-format", "--quoting-style"})


@dataclass(frozen=True, slots=True)
class Target:
    """Something a writer program writes."""

    word: Word | None
    """A path operand (relative ones are below ``base``), or None with ``tree``."""
    base: Word | None = None
    """The directory relative operands and ``tree`` are in (None: the working directory)."""
    tree: bool = False
    """Everything below ``base``."""
    anywhere: bool = False
    """Anna cannot tell where (``--git-dir`` without a work tree)."""


def targets(cmd: SimpleCommand) -> list[Target]:
    """What ``cmd`` writes as an operand writer (empty for every other program)."""
    program = cmd.program
    if program == "git":
        return _git(cmd)
    if program == "patch":
        return _patch(cmd)
    if program in _EDITORS:
        return [Target(w) for w in _operands(program, cmd.args, _EDITOR_ARG)
                if not w.text.startswith("+")]
    if program == "sponge":
        return [Target(w) for w in _operands(program, cmd.args, frozenset())]
    return []


def _long(program: str, text: str) -> str:
    """A long option as the program reads it (``--dir=x`` → ``--directory``)."""
    found = options.long_names(program, text, cautious=False)
    return found[0] if len(found) == 1 else text.split("=", 1)[0]


def _operands(program: str, words: list[Word], takes_arg: frozenset[str]) -> list[Word]:
    """The words that are not options or their arguments (``--`` ends the options)."""
    out: list[Word] = []
    skip = False
    ended = False
    for word in words:
        text = word.text
        if skip:
            skip = False
        elif ended or not text.startswith("-") or text == "-":
            out.append(word)
        elif text == "--":
            ended = True
        elif text.startswith("--"):
            skip = "=" not in text and _long(program, text) in takes_arg
        else:
            # a cluster's last letter may take the next word (``-sc wq``)
            skip = "-" + text[-1] in takes_arg
    return out


def _patch(cmd: SimpleCommand) -> list[Target]:
    base: Word | None = None
    found: list[Target] = []
    words = cmd.args
    for i, word in enumerate(words):
        text = word.text
        name = _long("patch", text) if text.startswith("--") else text[:2]
        value: Word | None = None
        if name in ("-o", "--output", "-d", "--directory"):
            if "=" in text and text.startswith("--"):
                value = word.after(text.index("=") + 1)
            elif len(text) > 2 and not text.startswith("--"):
                value = word.after(2)
            elif i + 1 < len(words):
                value = words[i + 1]
        if value is None:
            continue
        if name in ("-o", "--output"):
            if value.text != "-":
                found.append(Target(value))
        else:
            base = value
    operands = _operands("patch", words, _PATCH_ARG)
    if found:
        pass  # -o: the output is written, the operand is only read
    elif operands:
        found.append(Target(operands[0], base))  # the file patched
    else:
        found.append(Target(None, base, tree=True))  # the files the patch names
    return found


def _git(cmd: SimpleCommand) -> list[Target]:
    base: Word | None = None
    git_dir = False
    for variable, assigned in cmd.assignments:
        if variable == "GIT_WORK_TREE":
            base = assigned
        elif variable == "GIT_DIR":
            git_dir = True
    words = cmd.args
    i = 0
    while i < len(words):
        text = words[i].text
        if not text.startswith("-"):
            break
        name, has_value, _ = text.partition("=")
        value: Word | None = words[i].after(len(name) + 1) if has_value else (
            words[i + 1] if i + 1 < len(words) and name in _GIT_GLOBAL_ARG else None)
        if name == "-C" and value is not None:
            base = value if base is None or value.text.startswith("/") else base
        elif name == "--work-tree" and value is not None:
            base = value
        elif name == "--git-dir":
            git_dir = True
        i += 2 if (name in _GIT_GLOBAL_ARG and not has_value) else 1
    if i >= len(words) or words[i].text not in _GIT_WRITES:
        return []
    if git_dir and base is None:
        return [Target(None, anywhere=True)]
    return [Target(None, base, tree=True)]
