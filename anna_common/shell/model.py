"""What the bash analysis produces: simple commands, redirections, stdin sources, analyses."""

from __future__ import annotations

from dataclasses import dataclass, field

from anna_common.shell.words import Word

_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})

MAX_SOURCE = 4096
"""Characters of one command beyond which it is not parsed (a plan's command is at most 4096
bytes)."""
LIMITS = {"words": 200, "word parts": 1024, "commands": 200, "expanded words": 256,
          "nested code blocks": 64, "arithmetic characters": 16 * 1024}
"""Work allowed for one command string, nested code included."""
MAX_LEVELS = 100
"""Syntax levels (statements, words, substitutions, nested code) the walk may be inside at
once. The walk recurses once per level of the input, so this bounds its stack: a command
nested deeper (``$($($(…)))``, ``((((…))))``, 400 ``&&`` in a row) is too complex to analyse
and judged HIGH, never a RecursionError."""


class OverBudget(Exception):
    """The analysis would exceed its budget; the message says which."""


@dataclass(slots=True)
class Budget:
    """What one analysis may still spend; shared with the code nested in it."""

    spent: dict[str, int] = field(default_factory=dict)
    """Units spent per kind (see :data:`LIMITS`)."""
    level: int = 0
    """Syntax levels the walk is inside now (see :data:`MAX_LEVELS`)."""
    scopes: int = 0
    """Code strings analysed so far; each is its own scope (see :attr:`SimpleCommand.scope`)."""

    def new_scope(self) -> int:
        """A number for one more code string (``bash -c CODE``, ``eval CODE``)."""
        self.scopes += 1
        return self.scopes

    def spend(self, kind: str, units: int = 1) -> None:
        """Spend ``units`` of ``kind``; raise :class:`OverBudget` past the limit."""
        total = self.spent.get(kind, 0) + units
        self.spent[kind] = total
        if total > LIMITS[kind]:
            raise OverBudget(f"more than {LIMITS[kind]} {kind}")

    def nest(self, delta: int) -> None:
        """Enter (``+1``) or leave (``-1``) a syntax level; raise :class:`OverBudget` past
        :data:`MAX_LEVELS`."""
        self.level += delta
        if self.level > MAX_LEVELS:
            raise OverBudget(f"nested more than {MAX_LEVELS} levels deep (too complex to "
                             "analyse)")



@dataclass(frozen=True, slots=True)
class Redirect:
    """One redirection: ``2>>/var/log/x``, ``<file``, ``<<EOF``, ``<<<text``."""

    op: str
    """The operator as written (``>``, ``>>``, ``&>``, ``<``, ``<<``, ``<<<``, ``>&``)."""
    fd: int | None
    """The file descriptor written before the operator, if any."""
    target: Word | None
    """The file (or fd, for ``>&2``); the text for here-strings; None for heredocs."""

    @property
    def writes(self) -> bool:
        """True when the target is opened for writing (duplicating an fd number does not)."""
        if self.op not in _WRITE_OPS or self.target is None:
            return False
        return not (self.op == ">&" and self.target.literal and self.target.text.isdigit())


@dataclass(slots=True)
class Stdin:
    """Where a command's standard input comes from."""

    kind: str = "inherit"
    """``inherit``, ``pipe``, ``heredoc``, ``herestring``, ``file``, or ``args`` (``xargs``:
    what it reads becomes arguments; the command itself reads nothing)."""
    producers: list[SimpleCommand] = field(default_factory=list)
    """For ``pipe`` and ``args``: the commands of the previous pipeline stage."""
    text: Word | None = None
    """For ``heredoc``/``herestring``: the body; for ``file``: the path."""
    expands: bool = False
    """For ``heredoc``: whether the body undergoes expansion (unquoted delimiter)."""


@dataclass(slots=True)
class EmbeddedCode:
    """Code handed to a shell or interpreter."""

    language: str
    """``sh``, ``python``, ``perl``, ``awk``, ... (see
    :func:`anna_common.shell.unwrap.language_of`)."""
    how: str
    """``code`` (on the command line), ``stdin``, ``script`` (a file), ``module`` (python -m)."""
    text: Word | None
    """The code, or the script path; None when it comes from an unseen stdin."""


@dataclass(slots=True)
class SimpleCommand:
    """One program invocation, after wrappers are peeled off."""

    program: str | None
    """Basename of the program (``rm`` for ``/usr/bin/rm``, ``\\rm``, ``r''m``); None if dynamic."""
    name: Word | None
    """The program word as evaluated."""
    args: list[Word]
    """Arguments, evaluated."""
    redirects: list[Redirect] = field(default_factory=list)
    """Redirections that apply to it."""
    assignments: list[tuple[str, Word]] = field(default_factory=list)
    """``NAME=value`` prefixes (and ``env`` assignments)."""
    wrappers: list[str] = field(default_factory=list)
    """Wrappers crossed, outermost first (``["sudo", "env"]``)."""
    privileged: bool = False
    """Crossed ``sudo``/``doas``/``pkexec``/``su``/... ."""
    stdin: Stdin = field(default_factory=Stdin)
    """Where standard input comes from."""
    origin: str = "top"
    """``top``, ``command_substitution``, ``process_substitution``, ``sh -c``, ``eval``,
    ``heredoc``, ``find -exec``, ``function NAME``, ... (its pipe position is in ``stdin``)."""
    start: int = 0
    """Where it starts in the code string it was read from (see :attr:`scope`), so a rule can
    tell which assignments ran before it."""
    scope: int = 0
    """Which code string it was read from: 0 the command itself, another number each string
    of nested code (``bash -c CODE``, ``eval CODE``)."""
    depth: int = 0
    """Nesting depth of the code it came from (0 for the command itself)."""
    code: list[EmbeddedCode] = field(default_factory=list)
    """Code it runs (shells, eval, interpreters)."""
    substitutions: list[SimpleCommand] = field(default_factory=list)
    """Commands inside substitutions in its words (``sh -c "$(curl x)"`` → curl)."""
    interactive_shell: bool = False
    """It opens an interactive shell (``sh`` with a terminal, ``sudo -i``, ``su``)."""
    stdin_args: bool = False
    """Some arguments come from standard input (``xargs``)."""
    wrapper_options: dict[str, set[str]] = field(default_factory=dict)
    """Options given to each wrapper crossed (``{"systemd-run": {"--on-calendar"}}``)."""
    background: bool = False
    """Followed by ``&``."""
    found_below: list[Word] = field(default_factory=list)
    """Where the run-time words (``{}`` of ``find -exec``, ``xargs`` input fed by ``find`` or
    ``ls``) come from: the start points they are found below. Empty when unknown."""

    @property
    def argv(self) -> list[str]:
        """The program and arguments as text (expansions left as written)."""
        head = [self.name.text] if self.name is not None else []
        return head + [w.text for w in self.args]


@dataclass(slots=True)
class Analysis:
    """Everything :func:`analyse` found in one command string."""

    source: str
    """The command as given."""
    parse_ok: bool = True
    """False when the grammar reported an error anywhere."""
    commands: list[SimpleCommand] = field(default_factory=list)
    """Every simple command, nested ones included, in source order per level."""
    opaque: list[str] = field(default_factory=list)
    """Why parts of it cannot be seen through (empty when fully understood)."""
    assignments: list[tuple[str, Word]] = field(default_factory=list)
    """Shell variable assignments (``HISTFILE=/dev/null``, ``export PATH=...``)."""
    functions: list[str] = field(default_factory=list)
    """Names of shell functions it defines."""
    arithmetic: list[str] = field(default_factory=list)
    """Text bash evaluates as arithmetic (``(( ))``, ``$(( ))``, subscripts, ``[[ a -eq b ]]``
    operands, substring offsets); code in it runs even inside single quotes."""
    tainted: list[str] = field(default_factory=list)
    """Variables given a value that is not a plain number or name (``for x in $(cat f)``)."""
    too_large: list[str] = field(default_factory=list)
    """Parts beyond the analysis budget (a brace expansion of too many words)."""
    namerefs: dict[str, str] = field(default_factory=dict)
    """Name references (``declare -n ref=target``): ``ref`` → ``target`` (``""`` until the
    first assignment names it)."""
    definite: list[tuple[int, int, str, Word]] = field(default_factory=list)
    """Assignments that run for sure, once, in order, in the shell that reads their code
    string: (scope, where the assignment ends, name, value). Every other assignment may or
    may not have run."""
    appended: list[str] = field(default_factory=list)
    """Variables appended to (``x+=v``): their value is not the text assigned."""

    def merge(self, inner: Analysis) -> None:
        """Take in what a nested analysis found (its commands are emitted separately)."""
        self.parse_ok = self.parse_ok and inner.parse_ok
        self.opaque.extend(inner.opaque)
        self.assignments.extend(inner.assignments)
        self.functions.extend(inner.functions)
        self.arithmetic.extend(inner.arithmetic)
        self.tainted.extend(inner.tainted)
        self.too_large.extend(inner.too_large)
        self.namerefs.update(inner.namerefs)
        self.appended.extend(inner.appended)
        self.definite.extend(inner.definite)


def stdin_from(redirects: list[Redirect]) -> Stdin | None:
    """Where redirections make a command's standard input come from (None: unchanged)."""
    for red in redirects:
        if red.op in ("<<", "<<-"):
            return Stdin("heredoc", text=red.target, expands=bool(red.target and
                                                                     not red.target.literal))
        if red.op == "<<<":
            return Stdin("herestring", text=red.target)
        if red.op == "<" and red.fd in (None, 0):
            return Stdin("file", text=red.target)
    return None
