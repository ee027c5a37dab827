"""Reading a package manager's options, and the programs they make it run.

Package managers run live as root (:mod:`annad.execution.livekinds`), and several run
programs their options name: apt's ``-o DPkg::Pre-Invoke::=CMD``, dpkg's ``--pre-invoke``,
rpm's ``--pipe`` and ``%(…)`` macros. :func:`scan` reads an argument vector the way the
manager does (``-oX``, ``-o X``, ``--option X``, ``--option=X``, short clusters, unique
prefixes where the manager's parser takes them), and :func:`foreign_programs` says which
program paths a command line runs from a place another user can write. The per-manager
tables and verdicts are :mod:`anna_common.risk.rules.pmhooks`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from anna_common.risk import paths
from anna_common.risk.rules.base import Code
from anna_common.shell.grammar import analyse
from anna_common.shell.interpreters import language_of
from anna_common.shell.words import Word

if TYPE_CHECKING:
    from anna_common.risk.rules.base import Out


@dataclass(frozen=True, slots=True)
class Grammar:
    """How one manager reads its options."""

    short: dict[str, str]
    """Short letters Anna reads, each to its long name (``o`` → ``--option``)."""
    valued: frozenset[str]
    """Long names that take a value (``--option``, ``--config-file``)."""
    known: frozenset[str] = frozenset()
    """Every long name the manager has, for prefixes (empty: it takes no prefixes)."""


@dataclass(frozen=True, slots=True)
class Given:
    """One option as the manager reads it."""

    name: str
    """Its long name (``--option``), or the word itself for an option Anna does not map."""
    value: Word | None
    """Its value (None for a flag, or a value missing at the end)."""


def scan(args: list[Word], grammar: Grammar) -> tuple[list[Given], bool]:
    """The options of ``args`` up to ``--``, and whether a word only known at run time could
    be an option (``apt-get $OPTS update``: its value can be ``-oDPkg::Pre-Invoke=…``)."""
    found: list[Given] = []
    unknown = False
    i = 0
    while i < len(args):
        word = args[i]
        text = word.text
        nxt = args[i + 1] if i + 1 < len(args) else None
        if word.literal and text == "--":
            break
        if not word.literal and (not word.segments or word.segments[0].kind != "literal"):
            unknown = True
        if not text.startswith("-") or text == "-":
            i += 1
            continue
        if text.startswith("--"):
            name, eq, _ = text.partition("=")
            name = _expand(name, grammar)
            if eq:
                found.append(Given(name, word.after(len(text.partition("=")[0]) + 1)))
            elif name in grammar.valued:
                found.append(Given(name, nxt))
                i += 1
            else:
                found.append(Given(name, None))
            i += 1
            continue
        i += 1 + _cluster(word, nxt, grammar, found)
    return found, unknown


def _cluster(word: Word, nxt: Word | None, grammar: Grammar, found: list[Given]) -> int:
    """Read ``-abc``; a letter that takes a value ends it (``-qoX`` is ``-q -o X``). Returns
    how many following words it consumed (0 or 1)."""
    text = word.text
    for pos, letter in enumerate(text[1:], start=2):
        name = grammar.short.get(letter, f"-{letter}")
        if name in grammar.valued:
            rest = word.after(pos)
            if rest.text:
                found.append(Given(name, rest))
                return 0
            found.append(Given(name, nxt))
            return 1
        found.append(Given(name, None))
    return 0


def _expand(name: str, grammar: Grammar) -> str:
    """A unique prefix as its full name, when the manager's parser takes prefixes. A prefix
    unique in Anna's list may be ambiguous to the manager (which then refuses it and runs
    nothing): reading it as the one name is the cautious side."""
    if not grammar.known or name in grammar.known:
        return name
    starts = [k for k in grammar.known if k.startswith(name)]
    return starts[0] if len(starts) == 1 and len(name) > 3 else name


_SHARED = ("/tmp", "/var/tmp", "/dev/shm", "/run/shm", "/run/user", "/home", "/var/mail",
           "/var/spool/mail", "/var/crash", "/var/lib/php/sessions")
"""Directories where another uid can make or replace a file (the homes, the sticky and
per-user temporary places)."""


def writable_by_others(path: str) -> bool:
    """``path`` lies where a user other than root can write (a home, a temporary directory).
    A path Anna cannot place (a variable's value, a relative path) is not claimed either way:
    its caller judges it HIGH."""
    return paths.in_home(path) or any(path == d or path.startswith(d + "/") for d in _SHARED)


def places(out: Out, text: str) -> list[str]:
    """Where a path value names (``~`` is the caller's home)."""
    if text.startswith("~"):
        return [paths.HOME + text[1:].rstrip("/")]
    return [p.path for p in out.paths(Word.of(text))]


def named_programs(out: Out, command: str) -> list[str]:
    """The program and script paths ``command`` (shell code a manager runs as root) names:
    its programs, and the script a shell or an interpreter in it is given (``sh /tmp/x``,
    ``python3 ~/hook.py``); a program found through ``PATH`` is not a path."""
    found: list[str] = []
    for cmd in analyse(command).commands:
        words = [cmd.name] if cmd.name is not None and "/" in cmd.name.text else []
        if cmd.program is not None and language_of(cmd.program) is not None:
            words += [w for w in cmd.args if not w.text.startswith("-")][:1]
        found.extend(place.path for word in words for place in out.paths(word))
    return found


def value_paths(out: Out, values: list[str]) -> list[str]:
    """Program or code paths given as values (a ``Dir::Bin`` value, a plugin directory, a
    ``PATH`` entry), resolved."""
    return [place for value in values if value for place in places(out, value)]


# ------------------------------------------------------------------------------ verdicts


def hook(out: Out, prog: str, option: str, command: str | None) -> None:
    """A command line the manager runs as root, live: HIGH; a program in it another user can
    write is banned; the command is judged as one of its own."""
    if command is None:
        out.high(Code.EMBEDDED_SHELL, f"{prog} {option}: runs a command only known at run "
                 "time as root", system=True, target=option)
        return
    out.high(Code.EMBEDDED_SHELL, f"{prog} {option}: runs {command[:60]} as root, live; "
             "Anna does not see what it does", system=True, target=option)
    named = named_programs(out, command)
    out.programs.extend(named)
    for path in named:
        if writable_by_others(path):
            banned(out, prog, option, path)
    if out.nested is not None:
        out.nested(command, out)


def program(out: Out, prog: str, option: str, values: list[str]) -> None:
    """Program or code paths the manager runs from (``Dir::Bin::dpkg``, a plugin path)."""
    out.high(Code.EMBEDDED_SHELL, f"{prog} {option}: runs programs from another place as root",
             system=True, target=option)
    named = value_paths(out, values)
    out.programs.extend(named)
    for path in named:
        if writable_by_others(path):
            banned(out, prog, option, path)


def banned(out: Out, prog: str, option: str, path: str) -> None:
    """A program root would run from where another user can write: a hard ban."""
    out.ban(Code.BAN_UNTRUSTED_CODE, f"{prog} {option}: runs {path} as root, and another user "
            "can write it", target=path)


def config(out: Out, prog: str, opt: Given, why: str) -> None:
    """Another configuration file: HIGH (it names repositories, hooks, trust)."""
    shown = opt.value.text[:60] if opt.value is not None else "?"
    out.high(Code.UNTRUSTED_BUILD, f"{prog} {opt.name} {shown}: {why}", system=True,
             target=opt.name)


def root_option(out: Out, prog: str, opt: Given, own: tuple[str, ...]) -> None:
    """Another root, database or cache than the system's own (``own``): HIGH."""
    value = opt.value
    if value is not None and value.literal and (value.text.rstrip("/") or "/") in own:
        return
    shown = value.text[:60] if value is not None else "?"
    out.high(Code.UNTRUSTED_BUILD, f"{prog} {opt.name} {shown}: acts on another root, "
             "database or cache", system=True, target=opt.name)


def trust(out: Out, prog: str, option: str, why: str) -> None:
    """Weaker trust (no signatures, forced past checks, a new repository): HIGH."""
    out.high(Code.UNTRUSTED_BUILD, f"{prog} {option}: {why}", system=True, target=option)


def unknown_option(out: Out, prog: str) -> None:
    """A word only known at run time, which can be any option: HIGH."""
    out.high(Code.UNKNOWN_TARGET, f"{prog} is given an option only known at run time; it can "
             "be one that runs a program as root", system=True, target=prog)
