"""Abbreviated long options, expanded the way the program itself expands them.

GNU ``getopt_long`` (coreutils, util-linux, systemd, shadow, pacman, sudo), argp (tar), curl
and git's parse-options accept any unambiguous prefix of a long option: ``rm --recur --forc``
is ``rm --recursive --force``, ``pacman --remov`` is ``pacman --remove``. Every rule, ban and
policy entry is written with the full name, so the analysis expands each option word once,
when it builds the command (:mod:`anna_common.shell.grammar`, :mod:`anna_common.shell.unwrap`),
and everything downstream sees one spelling per meaning.

The rule is getopt's: an exact name wins; otherwise a prefix that starts exactly one name is
that name; a prefix that starts several is ambiguous and the program refuses it (nothing
runs), so it is left as written. Only the name part of ``--name=value`` is expanded; option
words after ``--`` are operands and are left alone.

The table is :data:`anna_common.shell.longopt_table.LONG_OPTIONS`; the policy imports
:func:`expand` and :func:`canonical_args` from here, so a ``deny`` on ``--remove`` covers
``--remov``.
"""

from __future__ import annotations

from anna_common.shell.longopt_table import LONG_OPTIONS
from anna_common.shell.words import Segment, Word, join_segments

__all__ = ["LONG_OPTIONS", "canonical_args", "expand", "expand_word", "known", "table_key"]

_GIT_VALUE_OPTS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                             "--exec-path", "--config-env", "--super-prefix"})
"""git's own options that take the next word as their value (before the subcommand)."""


def known(program: str | None) -> bool:
    """True when Anna knows ``program``'s long options (``git SUB`` for git subcommands)."""
    return program is not None and program in LONG_OPTIONS


def expand(program: str | None, text: str) -> str:
    """The full spelling of option word ``text`` for ``program``; ``text`` itself when it is
    not a long option, is exact, unknown, or an ambiguous prefix.

    >>> expand("rm", "--recur")
    '--recursive'
    >>> expand("chmod", "--recurs=x")
    '--recursive=x'
    """
    if program is None or not text.startswith("--") or len(text) == 2:
        return text
    names = LONG_OPTIONS.get(program)
    if names is None:
        return text
    name, eq, value = text[2:].partition("=")
    if not name or name in names:
        return text
    starts = [n for n in names if n.startswith(name)]
    if len(starts) != 1:
        return text  # unknown, or ambiguous: the program rejects it and runs nothing
    return f"--{starts[0]}{eq}{value}"


def expand_word(program: str | None, word: Word) -> Word:
    """``word`` with its option name expanded (see :func:`expand`), however it is quoted
    (``"--rec"``, ``--r''ec``); the value part of ``--name=value`` keeps its segments (it may
    be known only at run time)."""
    segments = word.segments or (Segment(word.text, True),)
    known = ""
    for seg in segments:
        if seg.kind != "literal":
            break
        known += seg.text
    if not known.startswith("--"):
        return word
    name, eq, _ = known.partition("=")
    if not eq and not word.literal:
        return word  # ``--re$X``: the name itself is only known at run time
    full = expand(program, name)
    if full == name:
        return word
    return join_segments([Segment(full, True), *word.after(len(name)).segments])


def table_key(program: str | None, args: list[Word]) -> tuple[str | None, int]:
    """The table entry the options of ``program args`` are read from, and the index of the
    first argument it applies to: ``git -C d push --forc`` is ``git push`` from index 3."""
    if program != "git":
        return program, 0
    i = 0
    while i < len(args):
        text = args[i].text
        if not args[i].literal:
            return None, len(args)
        if text in _GIT_VALUE_OPTS:
            i += 2
            continue
        if text.startswith("-"):
            i += 1
            continue
        return f"git {text}", i + 1
    return None, len(args)


def canonical_args(program: str | None, args: list[Word]) -> list[Word]:
    """``args`` with every abbreviated long option of ``program`` expanded, up to ``--``."""
    key, start = table_key(program, args)
    if not known(key):
        return args
    out = list(args[:start])
    for index in range(start, len(args)):
        word = args[index]
        if word.literal and word.text == "--":
            out.extend(args[index:])
            break
        out.append(expand_word(key, word))
    return out
