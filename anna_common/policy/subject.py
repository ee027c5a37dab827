"""What a policy rule is matched against: Anna's parsed view of one command.

Never the raw text. The command is parsed by :func:`anna_common.shell.grammar.analyse`, which
peels wrappers (``sudo``, ``env``, ``nice``, ``/usr/bin/X``, ``\\X``, quotes) and emits
every simple command it would run, nested ones included (``bash -c '…'``, ``eval``,
substitutions, functions, ``find -exec``). Shell code hidden in interpreter strings
(``os.system("…")``), traps and arithmetic is found by the same hooks the risk rules use
and parsed in turn. What cannot be seen through (a program or code only known at run
time, a script file, text that does not parse, a command over the analysis budget)
becomes an *opaque* part: a deny or ask rule on programs, arguments or paths matches it,
an allow rule never does. Literal interpreter code (``python -c``) becomes a *text* part
that matches a rule when it mentions the rule's program or holds a path in its area.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from anna_common.plan import PLAN_COMMANDS
from anna_common.policy import writers
from anna_common.risk import paths
from anna_common.risk.rules.base import AssessContext, Out
from anna_common.risk.rules.builtins import judge_arithmetic, prepare
from anna_common.risk.rules.code import judge_code
from anna_common.risk.writes import WriteTarget, dest_and_sources, options, write_targets
from anna_common.shell.grammar import Analysis, SimpleCommand, analyse
from anna_common.shell.words import Word

MAX_DEPTH = 4
"""Nesting of code found inside interpreter strings that is still followed."""
ANYWHERE = "**"
"""A path that may be anything (an unknown target)."""
_PATH_LITERAL = re.compile(r"(?<![\w.])(?:~|/)[^\s'\"`;|&<>(){}\[\],]*")
_WRITERS = frozenset({"rm", "rmdir", "unlink", "cp", "mv", "ln", "install", "chmod", "chown",
                      "chgrp", "chattr", "setfacl", "tee", "dd", "truncate", "shred", "touch",
                      "mkdir", "sed", "perl", "rsync", "tar", "unzip", "find"})
"""Programs whose targets, when they come from standard input (``xargs rm``), are writes."""
_ONE_FILE = frozenset({
    "cat", "tac", "head", "tail", "less", "more", "nl", "wc", "od", "xxd", "hexdump", "strings",
    "base64", "sed", "awk", "gawk", "mawk", "sort", "uniq", "cut", "paste", "cmp", "comm",
    "jq", "yq", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "stat", "file",
    "readlink", "realpath", "touch", "tee", "truncate", "shred", "chmod", "chown", "chgrp",
    "rm", "rmdir", "unlink", "cp", "ln", "install", "mkdir", "dd", "grep", "egrep", "fgrep",
    "diff", "test", "[", "[[", "echo", "printf", "basename", "dirname", "getfacl", "lsattr",
    "setfacl", "chattr", "iconv", "column", "fold", "fmt", "rev", "tr", "xz", "gzip", "bzip2",
    "zstd"})
"""Programs that act on each path they are named as that one file, unless a recursive
option says otherwise (:data:`_RECURSIVE`)."""
_RECURSIVE = frozenset({"-r", "-R", "--recursive", "-a", "--archive",
                        "--dereference-recursive"})
_INTO = frozenset({"copy", "link"})
"""Write kinds whose target may be a directory the file lands in under its own name."""


@dataclass(frozen=True, slots=True)
class Part:
    """One thing the command runs, as the policy sees it."""

    kind: str
    """``command`` (a parsed simple command), ``opaque`` (not seen through) or ``text``
    (literal interpreter code, matched by what it mentions)."""
    program: str | None
    """Basename of the program (``command``), else None."""
    names: tuple[str, ...] = ()
    """The program and every wrapper crossed to reach it (``("rm", "sudo", "env")``)."""
    args: tuple[str, ...] = ()
    """Arguments as evaluated (brace alternatives listed one by one)."""
    dynamic_args: bool = False
    """Some argument is only known at run time (``$X``, ``$(…)``)."""
    writes: tuple[str, ...] = ()
    """Paths it writes, resolved (``~`` is the owner's home); may be patterns."""
    paths: tuple[str, ...] = ()
    """Every path it names (writes, reads, redirections); may be patterns."""
    files: tuple[str, ...] = ()
    """Of :attr:`writes` and :attr:`paths`, those the command can only act on as that one
    file (a redirection, ``tee``, ``sed -i``, ``cp`` without ``-r``): a deny or ask rule
    matches them as the file, never as a tree below them (issue 34 item 7)."""
    landing: tuple[str, ...] = ()
    """Where a file copied or linked into a directory lands (``cp id_rsa DIR`` writes
    ``DIR/id_rsa``): matched by deny and ask rules as files too."""
    text: str = ""
    """For ``text``: the code; for ``opaque``: why it cannot be seen."""
    origin: str = "top"
    """Where it came from (``top``, ``sh -c``, ``eval``, ``python code`` …)."""


@dataclass(frozen=True, slots=True)
class Subject:
    """Everything one command runs, for :func:`anna_common.policy.decide.decide`."""

    command: str
    """The command as given (shown, never matched)."""
    parts: tuple[Part, ...]
    """What it runs."""
    home: str | None = None
    """The owner's home, so rules on ``/home/*/…`` and ``~/…`` see the same paths."""
    nocase: bool = False
    """``shopt -s nocaseglob``: paths are compared without case."""

    @property
    def opaque(self) -> bool:
        """Some part cannot be seen through."""
        return any(p.kind == "opaque" for p in self.parts)


def subject(command: str, context: AssessContext | None = None) -> Subject:
    """The policy's view of ``command`` (never raises: a failure is an opaque part)."""
    ctx = context or AssessContext()
    try:
        return _subject_cached(command, ctx)
    except RecursionError:
        return Subject(command, (Part("opaque", None, text="nests too deeply"),), ctx.home)
    except Exception as exc:  # the analyser failing is a reason to match more, not to crash
        return Subject(command, (Part("opaque", None, text=f"analysis failed "
                                      f"({type(exc).__name__})"),), ctx.home)


@lru_cache(maxsize=PLAN_COMMANDS)
def _subject_cached(command: str, ctx: AssessContext) -> Subject:
    collect = _Collector(ctx)
    collect.source(command, depth=0, origin="top")
    return Subject(command, tuple(collect.parts), ctx.home, collect.nocase)


class _Collector:
    """Walks one command and the code nested in it."""

    def __init__(self, ctx: AssessContext) -> None:
        self.ctx = ctx
        self.parts: list[Part] = []
        self.nocase = False
        self.cwds: set[str | None] = set()

    def source(self, text: str, *, depth: int, origin: str) -> None:
        if depth > MAX_DEPTH:
            self.parts.append(Part("opaque", None, text="code nested too deeply", origin=origin))
            return
        analysis = analyse(text, depth=depth)
        self._unseen(analysis, origin)
        if analysis.too_large:
            return
        nested: list[str] = []
        scratch = Out(self.ctx)
        scratch.nested = lambda code, _into: nested.append(code)
        prepare(analysis, scratch)
        judge_arithmetic(analysis, scratch)
        self.nocase = self.nocase or "nocaseglob" in scratch.flags
        for cmd in _all_commands(analysis.commands):
            self._command(cmd, analysis, scratch, nested)
        for code in nested:
            self.source(code, depth=depth + 1, origin="nested code")

    def _unseen(self, analysis: Analysis, origin: str) -> None:
        why = [*analysis.opaque, *analysis.too_large]
        if not analysis.parse_ok:
            why.append("does not parse as bash")
        for reason in dict.fromkeys(why):
            self.parts.append(Part("opaque", None, text=reason, origin=origin,
                                   writes=(ANYWHERE,), paths=(ANYWHERE,)))

    def _command(self, cmd: SimpleCommand, analysis: Analysis, scratch: Out,
                 nested: list[str]) -> None:
        self._track_cwd(cmd)
        if cmd.program is None:
            self.parts.append(Part("opaque", None, text="a program named at run time",
                                   origin=cmd.origin, writes=(ANYWHERE,), paths=(ANYWHERE,)))
            return
        targets = write_targets(cmd)
        writes = [p for t in targets for p in self._resolve(t.word)]
        files = [p for t in targets if _one_file(t) for p in self._resolve(t.word)]
        landing = self._landing(cmd, targets)
        trees = {p for t in targets if not _one_file(t) for p in self._resolve(t.word)}
        for target in writers.targets(cmd):
            written = self._written(target)
            writes += written
            if target.word is not None and not target.tree and not target.anywhere:
                files.extend(written)  # patch FILE, an editor's file, sponge FILE
            else:
                trees.update(written)
        named = [p for w in cmd.args if _path_like(w) for p in self._resolve(_value(w))]
        if cmd.program in _ONE_FILE and not options(cmd.args) & _RECURSIVE:
            files += named
        redirected = [p for r in cmd.redirects if r.target is not None and not (
            r.op == ">&" and r.target.text.isdigit()) for p in self._resolve(r.target)]
        named += redirected
        files += redirected
        if cmd.stdin_args:  # xargs: the operands come from standard input
            named.append(ANYWHERE)
            if cmd.program in _WRITERS:
                writes.append(ANYWHERE)
        args = tuple(v for w in cmd.args for v in w.values)
        names = (cmd.program, *cmd.wrappers)
        exact = tuple(dict.fromkeys(f for f in files if f not in trees and f != ANYWHERE))
        self.parts.append(Part("command", cmd.program, names, args,
                               any(not w.literal for w in cmd.args), tuple(writes),
                               tuple(dict.fromkeys(writes + named)), files=exact,
                               landing=tuple(landing), origin=cmd.origin))
        for code in cmd.code:
            self._code(cmd, code.language, code.text, code.how)
        if any(code.language != "sh" for code in cmd.code):
            # shell strings inside interpreter code (os.system("…")), found as risk finds them
            judge_code(cmd, analysis, scratch, lambda text, _into: nested.append(text))

    def _code(self, cmd: SimpleCommand, language: str, text: Word | None, how: str) -> None:
        if text is None or not text.literal or how == "script":
            self.parts.append(Part("opaque", None, text=f"{cmd.program} runs code Anna "
                                   "cannot see", origin=cmd.origin, writes=(ANYWHERE,),
                                   paths=(ANYWHERE,)))
        elif language != "sh":
            found = tuple(m.group(0) for m in _PATH_LITERAL.finditer(text.text))
            places = tuple(_text_path(p, self.ctx.home) for p in found)
            self.parts.append(Part("text", None, text=text.text, writes=places, paths=places,
                                   origin=f"{language} code"))

    def _landing(self, cmd: SimpleCommand, targets: list[WriteTarget]) -> list[str]:
        """``cp A B DIR``, ``ln -s A DIR``, ``install A DIR``: ``DIR/A``, ``DIR/B`` (a source
        named only at run time lands under any name: ``DIR/*``)."""
        if not any(t.how in _INTO and _one_file(t) for t in targets):
            return []
        _, sources = dest_and_sources(cmd.args, frozenset({"-S", "--suffix", "-m", "--mode",
                                                           "-o", "--owner", "-g", "--group"}))
        names = [w.text.rstrip("/").rsplit("/", 1)[-1] if w.literal else "*" for w in sources]
        return [f"{place.rstrip('/')}/{name or '*'}" for t in targets
                if t.how in _INTO and _one_file(t) for place in self._resolve(t.word)
                for name in names]

    def _track_cwd(self, cmd: SimpleCommand) -> None:
        if cmd.program in ("cd", "pushd", "popd"):
            word = cmd.args[0] if len(cmd.args) == 1 else None
            if word is not None and word.literal and word.text.startswith("/"):
                self.cwds.add(paths.resolve(word)[0].path)
            elif word is not None and word.literal and word.text.startswith("~"):
                self.cwds.add(paths.HOME + word.text[1:])
            else:
                self.cwds.add(None)  # somewhere Anna cannot tell

    def _written(self, target: writers.Target) -> list[str]:
        """What an operand writer (``patch``, ``git checkout``, ``ed``) writes, as paths."""
        if target.anywhere:
            return [ANYWHERE]
        if target.base is None:
            if target.word is None:
                return _relative("**", self.cwds)
            return self._resolve(target.word)
        out: list[str] = []
        for base in self._resolve(target.base):
            if base.startswith(ANYWHERE) or any(c in base for c in "*?["):
                out.append(ANYWHERE)  # a directory Anna cannot tell: anywhere below it
            elif target.word is None:
                out.append(base.rstrip("/") + "/**")
            elif target.word.text.startswith(("/", "~")) or not target.word.literal:
                out.extend(self._resolve(target.word))
            else:
                out.extend(p.path for p in paths.resolve(target.word, home=self.ctx.home,
                                                         cwd=base))
        return out

    def _resolve(self, word: Word) -> list[str]:
        """The word as paths: every working directory the command may be in counts."""
        out: list[str] = []
        for place in paths.resolve(word, home=self.ctx.home):
            path = place.path
            if path.startswith(paths.UNKNOWN):
                out.append(ANYWHERE + path[len(paths.UNKNOWN):])
            elif "{}" in path:  # find -exec … {}: whatever find found
                out.append(ANYWHERE)
            elif path.startswith(("/", paths.HOME)):
                out.append(path)
            else:
                out.extend(_relative(path, self.cwds))
        return out


def _one_file(target: WriteTarget) -> bool:
    """The write acts on that one path, never on a tree below it (issue 34 item 7)."""
    return not target.recursive and target.how not in ("mount", "extract")


def _relative(path: str, cwds: set[str | None]) -> list[str]:
    """A relative path under the daemon's working directory (``/``, or the owner's home for
    user steps) and under every directory the command changed to."""
    if None in cwds:
        return [f"{ANYWHERE}/{path}"]
    return [f"{base.rstrip('/')}/{path}" for base in ("/", paths.HOME, *sorted(
        c for c in cwds if c))]


def _text_path(found: str, home: str | None) -> str:
    """A path literal inside interpreter code: its value may be joined at run time, so it
    stands for itself and everything below it."""
    path = paths.HOME + found[1:] if found.startswith("~") else found
    return path.rstrip("/") + "*" if path not in ("/", paths.HOME) else ANYWHERE


def _path_like(word: Word) -> bool:
    text = word.text
    return (not word.literal and not text.startswith("-")) or text.startswith(
        ("/", "~", "./", "../")) or ("/" in text and not text.startswith("-")) or (
        "=" in text and "/" in text.split("=", 1)[1])


def _value(word: Word) -> Word:
    """``--config=/etc/x`` and ``of=/dev/sda`` name the path after the ``=``."""
    head, sep, rest = word.text.partition("=")
    if sep and word.literal and not head.startswith("/") and rest.startswith(("/", "~", ".")):
        return word.after(len(head) + 1)
    return word


def _all_commands(commands: list[SimpleCommand]) -> list[SimpleCommand]:
    """Every command and every command in its substitutions, each once, in the order found.

    A command's ``substitutions`` hold every command below it, not only its children, so a
    walk that descends into each of them again is exponential in the nesting
    (``echo $($($(…)))`` n deep: 2^(n+1)−1 visits). An explicit stack and a set of the
    commands already seen make it linear in the commands found, whatever their depth.
    """
    out: list[SimpleCommand] = []
    seen: set[int] = set()
    stack = list(reversed(commands))
    while stack:
        cmd = stack.pop()
        if id(cmd) in seen:
            continue
        seen.add(id(cmd))
        out.append(cmd)
        stack.extend(reversed(cmd.substitutions))
    return out
