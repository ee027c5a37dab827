"""Which shell variables hold a value Anna knows before the command runs, and from where on.

``x=/tmp/a; rm -rf "$x"`` removes /tmp/a only if nothing else can have set ``x`` by the time
``rm`` runs. A value is known at a command when one literal assignment sets it, that
assignment runs for sure (not in a branch, loop, subshell, pipeline or background job) in the
same shell before the command, and nothing else writes the name anywhere: not ``read``,
``mapfile``, ``printf -v``, ``getopts``, ``wait -p``, a ``for``/``select`` loop, arithmetic,
``${x:=v}``, ``x+=v``, ``x[i]=v``, ``unset``, a second assignment, a name reference or code
Anna cannot see (``source``, ``eval "$code"``, a program named at run time). Every other name
something writes is unknown (:data:`~anna_common.risk.paths.UNKNOWN`): a path built from it
is judged as the worst place it could be, never as the text written.

Code run by another shell (``bash -c``, ``su -c``, a heredoc into ``sh``) sees only what was
exported, so nothing the outer command assigned is known there; what that code assigns
itself is known in it, by the same rules. ``eval CODE`` is judged the same way (nothing from
outside it is known in it: cautious).

An assignment's value is tilde-expanded as bash does (``x=~+/a`` is the working directory's
``a``, ``x=~-`` the previous directory, ``x=~root`` /root); see :func:`assigned_value`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anna_common.risk import paths, pathvalues
from anna_common.risk.rules.builtins import filled_variables, integer_names

if TYPE_CHECKING:
    from anna_common.shell.grammar import Analysis, SimpleCommand
    from anna_common.shell.words import Word

ALWAYS_CHANGING = frozenset({
    "PWD", "OLDPWD", "RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASH_REMATCH", "REPLY",
    "OPTARG", "OPTIND", "MAPFILE", "EPOCHREALTIME", "EPOCHSECONDS", "BASHPID", "COLUMNS",
    "LINES", "HISTCMD", "PIPESTATUS", "FUNCNAME", "BASH_COMMAND", "COPROC",
})
"""Variables bash itself sets as the command runs: an assignment to them does not last."""

_NAME = re.compile(r"[A-Za-z_]\w*")
_LOOP = re.compile(r"(?<![\w$-])(?:for|select|coproc)\s+([A-Za-z_]\w*)")
_DEFAULT_ASSIGN = re.compile(r"\$\{([A-Za-z_]\w*)(?:\[[^]]*\])?:?=")
_ARITH_ASSIGN = re.compile(
    r"([A-Za-z_]\w*)\s*(?:\[[^]]*\])?\s*(?:(?:[-+*/%&|^]|<<|>>)?=(?!=)|\+\+|--)"
    r"|(?:\+\+|--)\s*([A-Za-z_]\w*)")


_NAMING = frozenset({"unset", "declare", "typeset", "local", "export", "readonly", "read",
                     "mapfile", "readarray", "printf", "getopts", "wait", "let"})
"""Builtins whose arguments name the variables they set."""


@dataclass(frozen=True, slots=True)
class KnownValues:
    """What :func:`known_values` found in one analysis."""

    values: tuple[tuple[int, int, str, str], ...] = ()
    """(scope, where the assignment ends, name, value as :func:`assigned_value` gives it)."""
    written: frozenset[str] = frozenset()
    """Every name something in the command writes."""
    anything: bool = False
    """Something may write any variable (``source``, ``eval "$x"``, ``declare "$n=v"``)."""
    refs: dict[str, str] = field(default_factory=dict)
    """Name references: ``ref`` → the variable it names."""

    def at(self, cmd: SimpleCommand) -> dict[str, str]:
        """The values ``cmd``'s words see: known ones, and :data:`paths.UNKNOWN` for every
        name written but not known there (``HOME`` included, once anything may write it)."""
        seen = dict.fromkeys(self.written, paths.UNKNOWN)
        if self.anything:
            seen.update({"HOME": paths.UNKNOWN, "CDPATH": paths.UNKNOWN})
        for scope, end, name, value in self.values:
            if scope == cmd.scope and end <= cmd.start:
                seen[name] = value
        for ref, target in self.refs.items():
            seen[ref] = seen.get(target, paths.HOME if target == "HOME" else paths.UNKNOWN)
        return seen


def assigned_value(word: Word) -> str:
    """An assignment's value as bash stores it: a tilde prefix right after ``=`` expanded
    (``~`` → the home marker, ``~+`` → :data:`paths.CWD`, ``~-``/``~N`` → unknown,
    ``~root`` → /root); a quoted ``~`` stays a file name (``./~``)."""
    text = word.text
    if not text.startswith("~"):
        return text
    if not word.tilde:
        return "./" + text  # ``x="~"`` names a file called ~, not the home
    prefix, sep, rest = text[1:].partition("/")
    prefix, colon, more = prefix.partition(":")
    tail = (colon + more + sep + rest) if colon else (sep + rest)
    if prefix in ("+", "0", "+0"):
        return paths.CWD + tail
    return pathvalues.tilde_prefix("~" + prefix, None) + tail


def known_values(analysis: Analysis) -> KnownValues:
    """The variables of ``analysis`` whose value is known, and from which offset on."""
    writes: dict[str, int] = {}
    for name, _ in analysis.assignments:
        base = name.split("[", 1)[0]
        writes[base] = writes.get(base, 0) + (2 if "[" in name else 1)
    written = set(writes) | ALWAYS_CHANGING | set(analysis.appended)
    changed = {n for n, count in writes.items() if count > 1} | set(analysis.appended)
    anything = False
    assigned = {f"{name}={value.text}" for name, value in analysis.assignments}
    for cmd in analysis.commands:
        # ``x=v f``: a function, eval or source run with x=v, and it may keep it
        changed.update(name.split("[", 1)[0] for name, _ in cmd.assignments)
        names, unknowable = _written_by(cmd, assigned)
        changed.update(names)
        anything = anything or unknowable
    changed.update(_LOOP.findall(analysis.source))
    changed.update(_DEFAULT_ASSIGN.findall(analysis.source))
    changed.update(integer_names(analysis))
    for text in analysis.arithmetic:
        changed.update(a or b for a, b in _ARITH_ASSIGN.findall(text))
    refs = dict(analysis.namerefs)
    for target in refs.values():
        if not _NAME.fullmatch(target.split("[", 1)[0]):
            anything = True  # ``declare -n r=$y``: r writes a variable named at run time
    # ``read r`` with ``declare -n r=x`` fills x (``r=v`` is already recorded as ``x=v``)
    changed |= {refs[n].split("[", 1)[0] for n in changed if refs.get(n)} | set(refs)
    written |= changed
    values = tuple((scope, end, name, assigned_value(value))
                   for scope, end, name, value in analysis.definite
                   if name not in changed and name not in refs and value.literal)
    return KnownValues(values=() if anything else values, written=frozenset(written),
                       anything=anything, refs={r: t for r, t in refs.items() if t})


def _written_by(cmd: SimpleCommand, assigned: set[str]) -> tuple[set[str], bool]:
    """Names ``cmd`` writes besides plain assignments, and whether it may write any name."""
    prog = cmd.program
    if prog is None or prog in ("source", "."):
        return set(), True
    if prog == "eval" and not all(w.literal for w in cmd.args):
        return set(), True
    names = set(filled_variables(cmd))
    if prog == "printf":
        names.update(w.text[2:] for w in cmd.args if w.text.startswith("-v") and len(w.text) > 2)
    if prog == "wait":
        names.update(cmd.args[i + 1].text for i, w in enumerate(cmd.args[:-1])
                     if w.text == "-p")
    if prog in ("cd", "pushd", "popd"):
        names.update(("PWD", "OLDPWD", "DIRSTACK"))
    if prog in ("mapfile", "readarray") and any(w.text.startswith("-C") for w in cmd.args):
        return names, True  # its callback is shell code run in this shell
    if prog == "shopt" and any(w.text == "expand_aliases" for w in cmd.args):
        return names, True  # from here on an alias is shell code run in this shell
    if prog in _NAMING and any(not w.literal for w in cmd.args):
        return names, True  # ``read "$n"``, ``export $line``: any name at all
    if prog in ("declare", "typeset", "local", "export", "readonly"):
        for word in cmd.args:
            # ``declare "x=/"`` is no assignment node, yet it sets x; ``local x`` empties x
            name, eq, _ = word.text.partition("=")
            if word.text.startswith(("-", "+")) or word.text in assigned:
                continue
            if eq or prog in ("declare", "typeset", "local"):
                names.add(name)
    if prog == "unset":
        names.update(w.text.split("[", 1)[0] for w in cmd.args if not w.text.startswith("-"))
    if prog == "let":
        for word in cmd.args:
            names.update(a or b for a, b in _ARITH_ASSIGN.findall(word.text))
    return {n.split("[", 1)[0] for n in names}, False
