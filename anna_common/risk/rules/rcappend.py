"""One line appended to the person's own shell rc file: judged by what the line is.

A write to ``~/.bashrc`` runs code at every shell start, so it is HIGH by where it lands
(:mod:`anna_common.risk.rules.locations`). The most common dotfile change there is one
``alias`` or one environment variable appended, and asking for a typed word for
``alias ll='ls -la'`` teaches people to type words without reading (issue 36.8). So when
the whole of what is appended is known before it runs and is exactly one such line, its
tier is the line's own:

- ``alias NAME='COMMAND'``: LOW when COMMAND is read-only or LOW, MEDIUM when it is
  MEDIUM; HIGH as before when NAME shadows a program or shell word Anna knows (``ls``,
  ``sudo``, ``cd``), or COMMAND is HIGH, banned, or talks to the network (a download).
- ``export NAME=VALUE`` (or ``NAME=VALUE``): LOW when VALUE is a plain word (no ``$``,
  quotes, slashes or spaces: it names no file and runs nothing) and NAME is no variable that
  changes how programs start, load code or find files (``PATH``, ``LD_*``,
  ``PROMPT_COMMAND``, ``HIST*``…).

Anything else (two lines, a function, a ``source``, a substitution, an unknown content, a
plain ``>`` that replaces the file) keeps the location's HIGH. The daemon's judge of the
observed change asks the same question of the line it sees appended
(``annad/capture/judge.py``), so what was approved LOW is also what is committed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol

from anna_common.plan import RiskLevel
from anna_common.risk.rules.base import Code

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.risk.rules.base import AssessContext, Out
    from anna_common.risk.writes import WriteTarget
    from anna_common.shell.grammar import Analysis, SimpleCommand

    Judge = Callable[[str, AssessContext], "Assessed"]
    """How an alias's command is judged (the classifier's own entry point)."""



class Assessed(Protocol):
    """What this rule reads of an assessment (:class:`anna_common.risk.assess.Assessment`,
    which is not imported: that module calls this one)."""

    @property
    def risk(self) -> RiskLevel:
        """The command's tier."""

    @property
    def banned(self) -> bool:
        """Hard-banned."""

    @property
    def codes(self) -> list[str]:
        """The reasons' codes."""


RC_FILES = frozenset({"~/.bashrc", "~/.bash_aliases", "~/.zshrc", "~/.profile",
                      "~/.bash_profile", "~/.config/fish/config.fish"})
"""The person's own rc files whose appended line is judged by what it is."""
MAX_LINE = 300
"""A longer line is not "one alias" any more: judged by where it lands."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_ALIAS_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
_PLAIN_VALUE = re.compile(r"[A-Za-z0-9_.,:@%+=-]{1,200}")
SHELL_WORDS = frozenset({
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
    "do", "done", "in", "function", "time", "coproc", "alias", "unalias", "builtin", "command",
    "exec", "eval", "source", "export", "unset", "set", "shopt", "trap", "cd", "pushd", "popd",
    "exit", "return", "logout", "sudo", "doas", "su", "pkexec", "history", "fc", "kill",
    "printf", "echo", "read", "test", "type", "which", "hash", "enable", "declare", "local",
    "readonly", "typeset", "let", "ulimit", "umask", "wait", "jobs", "fg", "bg", "disown"})
"""Shell keywords and builtins an alias must never take the name of."""
_STARTUP_PREFIXES = ("LD_", "HIST", "BASH", "PYTHON", "PERL", "RUBY", "NODE_", "GIT_", "SSH_",
                     "GPG", "GNUPG", "DBUS_", "XDG_", "ZSH", "PS", "PROMPT", "LESS", "SUDO_")
_STARTUP_NAMES = frozenset({"PATH", "IFS", "ENV", "HOME", "SHELL", "SHELLOPTS", "TMPDIR",
                            "CDPATH", "GLOBIGNORE", "FPATH", "MANPATH", "INPUTRC", "ZDOTDIR",
                            "PKG_CONFIG_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
                            "MAIL", "MAILPATH", "TERMINFO", "KRB5CCNAME", "OPENSSL_CONF"})
_NETWORK = frozenset({str(Code.NETWORK_READ), str(Code.NETWORK_TRANSFER)})


def judged(cmd: SimpleCommand, target: WriteTarget, analysis: Analysis, out: Out,
           assess: Judge) -> bool:
    """Judge an append of one known line to the person's own rc file by the line (the
    reason is added to ``out``); False (nothing added) when this rule does not apply.
    ``assess`` judges an alias's command (:func:`anna_common.risk.assess.assess`, passed
    in: that module calls this one)."""
    if target.how != "append" or not target.word.literal:
        return False
    places = out.paths(target.word)
    if len(places) != 1 or places[0].path not in RC_FILES:
        return False
    from anna_common.risk.rules.content import written_by

    texts = written_by(cmd, target.word, analysis, out)
    if not texts:
        return False
    verdicts = [line_verdict(text, lambda command: assess(command, out.ctx))
                for text in texts]
    if any(v is None for v in verdicts):
        return False
    risk = RiskLevel.max_of(*(v[0] for v in verdicts if v is not None))
    what = "; ".join(sorted({v[1] for v in verdicts if v is not None}))
    label = places[0].path
    out.add(Code.HOME_WRITE, risk, f"appends one line to {label}: {what}", target=label)
    return True


def line_verdict(text: str, assess: Callable[[str], Assessed]
                 ) -> tuple[RiskLevel, str] | None:
    """(tier, what it does) of one appended rc line, or None when it is not one plain
    alias or environment line Anna can read fully."""
    line = text[:-1] if text.endswith("\n") else text
    if not line.strip() or "\n" in line or "\r" in line or len(line) > MAX_LINE:
        return None
    from anna_common.shell.grammar import analyse

    analysis = analyse(line)
    if not analysis.parse_ok or analysis.opaque or analysis.functions or analysis.too_large:
        return None
    if not analysis.commands and len(analysis.assignments) == 1:  # NAME=VALUE alone
        name, word = analysis.assignments[0]
        return _environment(name, word.text) if word.literal else None
    if len(analysis.commands) != 1:
        return None
    cmd = analysis.commands[0]
    if cmd.redirects or cmd.stdin.kind != "inherit":
        return None
    if cmd.program == "alias" and not cmd.assignments:
        return _alias(cmd, assess)
    if cmd.program == "export" and not cmd.assignments and len(cmd.args) == 1:
        name, sep, value = cmd.args[0].text.partition("=")
        return _environment(name, value) if sep and cmd.args[0].literal else None
    return None


def _alias(cmd: SimpleCommand, assess: Callable[[str], Assessed]
           ) -> tuple[RiskLevel, str] | None:
    if len(cmd.args) != 1 or not cmd.args[0].literal or cmd.args[0].substituted:
        return None
    name, sep, value = cmd.args[0].text.partition("=")
    if not sep or not value.strip() or not _ALIAS_NAME.fullmatch(name) or _shadows(name):
        return None
    found = assess(value)
    if found.banned or found.risk == RiskLevel.HIGH or set(found.codes) & _NETWORK:
        return None
    risk = RiskLevel.MEDIUM if found.risk == RiskLevel.MEDIUM else RiskLevel.LOW
    return risk, f"alias {name} for {value[:80]} ({found.risk})"


def _shadows(name: str) -> bool:
    from anna_common.risk.rules.registry import RULES

    return name in SHELL_WORDS or name in RULES


def _environment(name: str, value: str) -> tuple[RiskLevel, str] | None:
    if not _NAME.fullmatch(name) or name.upper() in _STARTUP_NAMES or \
            name.upper().startswith(_STARTUP_PREFIXES) or not _PLAIN_VALUE.fullmatch(value):
        return None
    return RiskLevel.LOW, f"sets {name}={value} for your shells"
