"""Shared vocabulary of the risk rules: the assessment context, reason codes, the collector."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from anna_common.plan import RiskLevel
from anna_common.risk import pathglob
from anna_common.risk.context import AssessContext as AssessContext  # noqa: PLC0414 (moved; re-exported)
from anna_common.risk.paths import Resolved, resolve
from anna_common.shell.words import Word

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from anna_common.shell.grammar import SimpleCommand

    _T = TypeVar("_T")


MAX_CWD_PLACES = 256
"""Places from earlier working directories (see :attr:`Out.earlier_cwds`) all the relative
paths of one command may be judged in: ``cd /x1; …; cd /x50; rm -f a0 … a94`` asked for
4,750 and took half a second (issue 38 item 4)."""


class Code(StrEnum):
    """Stable reason codes in an :class:`~anna_common.risk.assess.Assessment`. Append-only."""

    # hard bans
    BAN_RECURSIVE_DELETE = "BAN_RECURSIVE_DELETE"
    BAN_BOOT_WITHOUT_EVIDENCE = "BAN_BOOT_WITHOUT_EVIDENCE"
    BAN_DISK_WRITE = "BAN_DISK_WRITE"
    BAN_SECURITY_DISABLE = "BAN_SECURITY_DISABLE"
    BAN_UNTRUSTED_CODE = "BAN_UNTRUSTED_CODE"
    BAN_FORK_BOMB = "BAN_FORK_BOMB"
    BAN_IDENTITY_OVERWRITE = "BAN_IDENTITY_OVERWRITE"
    BAN_SYSTEM_PERMISSIONS = "BAN_SYSTEM_PERMISSIONS"
    # INFO
    READ_ONLY = "READ_ONLY"
    # LOW
    USER_CONFIG = "USER_CONFIG"
    HOME_WRITE = "HOME_WRITE"
    TEMP_WRITE = "TEMP_WRITE"
    PROCESS_SIGNAL = "PROCESS_SIGNAL"
    # MEDIUM
    UNKNOWN_PROGRAM = "UNKNOWN_PROGRAM"
    SYSTEM_WRITE = "SYSTEM_WRITE"
    ETC_WRITE = "ETC_WRITE"
    PACKAGE_CHANGE = "PACKAGE_CHANGE"
    SERVICE_CHANGE = "SERVICE_CHANGE"
    NETWORK_READ = "NETWORK_READ"
    SYSTEM_SETTING = "SYSTEM_SETTING"
    RECURSIVE_DELETE = "RECURSIVE_DELETE"
    INTERPRETER_CODE = "INTERPRETER_CODE"
    NOT_NATIVE = "NOT_NATIVE"
    CONTAINER = "CONTAINER"
    # HIGH
    OPAQUE = "OPAQUE"
    PARSE_ERROR = "PARSE_ERROR"
    DYNAMIC_PROGRAM = "DYNAMIC_PROGRAM"
    DYNAMIC_CODE = "DYNAMIC_CODE"
    SCRIPT_FILE = "SCRIPT_FILE"
    INTERACTIVE_SHELL = "INTERACTIVE_SHELL"
    INTERACTIVE_PROGRAM = "INTERACTIVE_PROGRAM"
    EMBEDDED_SHELL = "EMBEDDED_SHELL"
    BOOTLOADER = "BOOTLOADER"
    DISK_TOOL = "DISK_TOOL"
    NETWORK_CONFIG = "NETWORK_CONFIG"
    NETWORK_TRANSFER = "NETWORK_TRANSFER"
    REMOTE_ACCESS = "REMOTE_ACCESS"
    FIREWALL_CHANGE = "FIREWALL_CHANGE"
    SECURITY_CONFIG = "SECURITY_CONFIG"
    MOUNT = "MOUNT"
    SWAP = "SWAP"
    KERNEL = "KERNEL"
    USER_ACCOUNT = "USER_ACCOUNT"
    KILL_CRITICAL = "KILL_CRITICAL"
    POWER = "POWER"
    PARTIAL_UPGRADE = "PARTIAL_UPGRADE"
    FORCE_REMOVE = "FORCE_REMOVE"
    CRITICAL_PACKAGE = "CRITICAL_PACKAGE"
    UNTRUSTED_BUILD = "UNTRUSTED_BUILD"
    CRITICAL_SERVICE = "CRITICAL_SERVICE"
    SYSTEM_PERMISSIONS = "SYSTEM_PERMISSIONS"
    SETUID = "SETUID"
    SECRET_READ = "SECRET_READ"  # noqa: S105 - a finding code naming secret reads, not a secret
    PERSISTENCE = "PERSISTENCE"
    HISTORY_TAMPER = "HISTORY_TAMPER"
    LIBRARY_PRELOAD = "LIBRARY_PRELOAD"
    DESTRUCTIVE_GIT = "DESTRUCTIVE_GIT"
    DESTRUCTIVE_BACKUP = "DESTRUCTIVE_BACKUP"
    PRIVILEGE = "PRIVILEGE"
    SYSTEM_BINARY = "SYSTEM_BINARY"
    UNKNOWN_TARGET = "UNKNOWN_TARGET"
    UNCAPTURED_WRITE = "uncaptured_write"
    """HIGH: code (an interpreter one-liner, a script) may write files the daemon cannot
    snapshot, so a rollback cannot restore them. Lower-case by agreement with the daemon's
    rollback, which keys on this exact value."""
    UNVERIFIED_UNDO = "unverified_undo"
    """Set by the daemon, not a rule: the step acts on the running system through a program
    Anna records no state of, so its undo (the plan's rollback command) cannot be checked and
    a rollback of it ends ``rollback_unverified``. Raises nothing by itself."""
    SHELL_STATE = "SHELL_STATE"
    """LOW/MEDIUM: a builtin changes the shell's state (variables, aliases, hashed paths)."""
    ARITHMETIC_EVAL = "ARITHMETIC_EVAL"
    """MEDIUM: bash evaluates non-literal text as arithmetic; ``$(...)`` in it would run."""
    TOO_LARGE = "TOO_LARGE"
    """HIGH: the command is beyond the analysis budget (size, expansion, nesting)."""
    BAN_ANNA_CONFIG = "BAN_ANNA_CONFIG"
    """Banned: a plan writes Anna's own configuration (``/etc/anna/**``, annad's unit and
    drop-ins): the administrator or annactl changes it, never a plan."""


RUNS_LIVE = "runs live; Anna cannot undo it"
"""The words of every step whose effects Anna can neither capture nor put back (a container
with host access, a file step on a daemon that cannot capture): HIGH, no claimed undo."""


UNVERIFIED_UNDO_WORDS = "Anna cannot check this step's undo"
"""The words a step with :attr:`Code.UNVERIFIED_UNDO` carries before it is approved."""


HELP = frozenset({"--help", "-h", "--version", "-V", "-?", "--usage", "help", "version"})


def help_only(cmd: SimpleCommand) -> bool:
    """Only asks for help or the version (``grub-install --help``)."""
    return bool(cmd.args) and all(w.literal and w.text in HELP for w in cmd.args)


HISTORY_VARS = frozenset({"HISTFILE", "HISTSIZE", "HISTFILESIZE", "HISTCONTROL", "HISTIGNORE"})
"""Shell variables that decide what the shell history records."""


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason for a risk level."""

    code: Code
    """Stable code."""
    risk: RiskLevel
    """The floor this reason sets."""
    message: str
    """One human sentence."""
    banned: bool = False
    """A hard ban: the step can never be approved."""
    target: str | None = None
    """What it touches (a path, unit, package): the HIGH confirmation word."""


@dataclass(slots=True)
class Out:
    """Collects reasons for one command string while rules run."""

    ctx: AssessContext
    """Machine facts."""
    reasons: list[Reason] = field(default_factory=list)
    """Everything found so far."""
    system: bool = False
    """Some part needs root."""
    cwd: str | None = None
    """Working directory after the last ``cd`` (``$?`` when that ``cd`` cannot be followed);
    None before any ``cd``: the step's own working directory."""
    earlier_cwds: set[str] = field(default_factory=set)
    """Every working directory the command may still be in besides :attr:`cwd`. A ``cd`` in
    a subshell, a pipeline or nested code does not outlive it, and Anna does not follow
    which does: so a ``cd`` never forgets where the command was, and a relative path is
    judged in each place (``cd /etc; (cd ~); rm shadow`` removes /etc/shadow)."""
    known: dict[str, str] = field(default_factory=dict)
    """Literal shell variables assigned earlier in the same command."""
    readonly_marks: int = 0
    """How many simple commands a rule proved read-only."""
    programs: list[str] = field(default_factory=list)
    """Program and code paths a live program is told to run as root (a package manager's
    hook, ``Dir::Bin::dpkg``, a plugin path): the daemon checks who can write them before
    the step runs (:func:`anna_common.risk.rules.pmhooks.hook_programs`)."""
    tainted: frozenset[str] = frozenset()
    """Variables whose values are not plain numbers or names (see
    :mod:`anna_common.shell.arith`)."""
    flags: set[str] = field(default_factory=set)
    """Shell options the command turns on that change how later text is read
    (``expand_aliases``)."""
    glob_words: set[tuple[int, str]] = field(default_factory=set)
    """(word, pattern) pairs already counted against the wildcard budget."""
    glob_spent: int = 0
    """Protected-path candidates handed out for wildcards so far (bounded per command)."""
    scanned: int = 0
    """Reasons already looked through by :meth:`too_large_reported`."""
    too_large: bool = False
    """A TOO_LARGE reason is among the first :attr:`scanned` reasons."""
    cwd_spent: int = 0
    """Places relative paths were given from earlier working directories so far (bounded
    per command: :data:`MAX_CWD_PLACES`)."""
    nested_runs: int = 0
    """Embedded code strings judged so far (bounded: analysis cost is capped)."""
    nested: Callable[[str, Out], None] | None = None
    """Judges shell code found inside another construct (an arithmetic subscript, a callback)."""
    memo: dict[tuple[object, ...], object] = field(default_factory=dict)
    """What a rule computed for this command string, keyed by everything it depends on: a
    result asked for each of many targets is computed once (issue 38 item 4)."""

    def add(
        self,
        code: Code,
        risk: RiskLevel,
        message: str,
        *,
        target: str | None = None,
        system: bool = False,
    ) -> None:
        """Record a reason with its risk floor."""
        self.reasons.append(Reason(code, risk, message, False, target))
        if system:
            self.system = True

    def ban(self, code: Code, message: str, *, target: str | None = None) -> None:
        """Record a hard ban."""
        self.reasons.append(Reason(code, RiskLevel.HIGH, message, True, target))

    def high(self, code: Code, message: str, *, target: str | None = None,
             system: bool = False) -> None:
        """Shorthand for a HIGH reason."""
        self.add(code, RiskLevel.HIGH, message, target=target, system=system)

    def medium(self, code: Code, message: str, *, target: str | None = None,
               system: bool = False) -> None:
        """Shorthand for a MEDIUM reason."""
        self.add(code, RiskLevel.MEDIUM, message, target=target, system=system)

    def low(self, code: Code, message: str, *, target: str | None = None,
            system: bool = False) -> None:
        """Shorthand for a LOW reason."""
        self.add(code, RiskLevel.LOW, message, target=target, system=system)

    def read_only(self) -> None:
        """A rule proved the current simple command read-only."""
        self.readonly_marks += 1

    def once(self, key: tuple[object, ...], compute: Callable[..., _T], *args: object) -> _T:
        """``compute(*args)``, remembered for this assessment under ``key``, which must name
        everything the result depends on (the machine facts are the same throughout)."""
        if key in self.memo:
            return self.memo[key]  # type: ignore[return-value]
        found = self.memo[key] = compute(*args)
        return found

    def too_large_reported(self) -> bool:
        """Whether a reason already says the command is too large to analyse. Asked for each
        word past a budget: the reasons are looked through once, not once per word (rules
        only append reasons, or reword one in place)."""
        if not self.too_large:
            reasons = self.reasons
            self.too_large = any(reasons[i].code == Code.TOO_LARGE
                                 for i in range(self.scanned, len(reasons)))
            self.scanned = len(reasons)
        return self.too_large

    def paths(self, word: Word) -> list[Resolved]:
        """Resolve a path word against home, cwd and known variables.

        A wildcard is also every protected path it can match (``/e?c/shadow`` is
        ``/etc/shadow`` too), so it gets that path's verdict.
        """
        places = self._here(word)
        if self.earlier_cwds:
            places = self._elsewhere(word, places)
        if not word.glob:
            return places
        extra: list[Resolved] = []
        for place in places:
            if place.glob:
                extra.extend(self._glob_candidates(place.path, word))
        return places + extra

    def _here(self, word: Word) -> list[Resolved]:
        """Where ``word`` lands from the working directory: every rule asks, so a literal
        word (its places do not depend on variables) is resolved once per assessment, and an
        absolute one once for both passes (as written and from ``/``)."""
        if not word.literal:
            return resolve(word, home=self.ctx.home, cwd=self.cwd, known=self.known)
        key = ("here", id(word), self.cwd)
        kept = self.memo.get(key)
        if not isinstance(kept, tuple):  # (word, places): the word keeps its id unique
            anywhere = ("here", id(word), "/") if all(v.startswith("/") for v in word.values) \
                else key
            kept = self.memo.get(anywhere)
            if not isinstance(kept, tuple):
                kept = (word, resolve(word, home=self.ctx.home, cwd=self.cwd))
            self.memo[key] = self.memo[anywhere] = kept
        return list(kept[1])

    def _elsewhere(self, word: Word, places: list[Resolved]) -> list[Resolved]:
        """``places`` and where ``word`` lands from each earlier working directory, worked out
        once per word and places (every rule asks) and within the command's budget: past
        :data:`MAX_CWD_PLACES` the command is HIGH and a word is judged where it is now."""
        key = ("elsewhere", id(word), self.cwd, frozenset(self.earlier_cwds), id(self.known))
        kept = self.memo.get(key)
        if isinstance(kept, tuple):  # (word, known, places): they keep their ids unique
            return list(kept[2])
        here = places
        places = list(places)
        seen = set(places)
        for earlier in sorted(self.earlier_cwds):
            more = [p for p in resolve(word, home=self.ctx.home, cwd=earlier,
                                       known=self.known) if p not in seen]
            places += more
            seen.update(more)
            self.cwd_spent += len(more)
            if self.cwd_spent > MAX_CWD_PLACES:
                if not self.too_large_reported():
                    self.high(Code.TOO_LARGE, f"too large to analyse: {word.text[:60]} and the "
                              "other relative paths land in more places (after cd) than Anna "
                              "judges in one command", target="cd")
                places = list(here)
                break
        self.memo[key] = (word, self.known, places)
        return list(places)

    def _glob_candidates(self, pattern: str, word: Word) -> list[Resolved]:
        """Protected paths ``pattern`` can match, within the command's budget (issue 8: the
        cost of judging them all is bounded; past it the command is HIGH)."""
        if self.glob_spent > pathglob.MAX_PER_COMMAND:
            return []  # already over budget (and HIGH): expanding more would only cost time
        # expanded once per assessment for each pattern and the options that change what
        # it matches (``shopt -s dotglob`` between two ``~/*``: the second also matches ~/.ssh)
        dotglob, nocase = "dotglob" in self.flags, "nocaseglob" in self.flags
        expanded = self.once(("glob", pattern, dotglob, nocase), _expand, pattern, dotglob,
                             nocase)
        if expanded is None:  # one pattern alone is too much: HIGH below, never quietly less
            self.glob_spent = pathglob.MAX_PER_COMMAND + 1
        found = list(expanded or ())
        # every word's candidates are judged: the budget counts them per word (the same word
        # asked again by another rule is free; the same pattern in another word is not)
        if (id(word), pattern) not in self.glob_words:
            self.glob_words.add((id(word), pattern))
            self.glob_spent += len(found)
        if self.glob_spent > pathglob.MAX_PER_COMMAND:
            text = word.text
            if not self.too_large_reported():
                self.high(Code.TOO_LARGE, f"too large to analyse: {text[:60]} and the other "
                          "wildcards can match more protected paths than Anna judges in one "
                          "command", target=text[:60])
            return []
        return found


def _expand(pattern: str, dotglob: bool, nocase: bool) -> tuple[Resolved, ...] | None:
    """The protected paths ``pattern`` can match (see :func:`pathglob.expand`), as places."""
    more = pathglob.expand(pattern, dotglob=dotglob, nocase=nocase)
    return None if more is None else tuple(Resolved(m, pathglob.is_glob(m)) for m in more)
