"""The vocabulary of the content rules: a finding, a reader, and the limits.

Kept apart from the rules themselves so that the readers of each kind
(:mod:`~anna_common.risk.content.code`, :mod:`~anna_common.risk.content.grants`) and the
entry point (:mod:`~anna_common.risk.content.meaning`) share it without importing each other,
and the classifier's own entry point is reached through :func:`judge_command`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anna_common.risk.rules.base import AssessContext

MAX_CONTENT = 1 << 20
"""Bytes of a governing file Anna reads; a larger one is refused (no sudoers, unit or rc file
needs a mebibyte; reading more would cost the daemon time in proportion)."""
MAX_LINE = 16 * 1024
"""Longest line read; a longer one is refused (the patterns are per line)."""
MAX_DEPTH = 2
"""Content judged inside content (a tmpfiles.d line that writes a sudoers file)."""
CHUNK = 3500
"""Characters of shell code assessed at once (the classifier's own bound is 4096)."""

@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a file's content grants or runs that Anna refuses or raises."""

    rule: str
    """Stable name of the rule (``sudoers.disables``, ``tmpfiles.writes``…)."""
    code: str
    """The reason code (:class:`anna_common.risk.rules.base.Code` value)."""
    banned: bool
    """A hard ban (else HIGH)."""
    why: str
    """What it grants or runs, in words: never the content itself."""
    line: int = 0
    """1-based line of the file (0: the file as a whole)."""

    def sentence(self) -> str:
        """``line N: WHY [rule]``: what a refusal says."""
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.why} [{self.rule}]"


def guess_other_writable(path: str) -> bool:
    """Without the file system (the classifier): a temporary or relative path is taken to be
    writable by another user; the daemon's judge asks the real tree instead."""
    return not path.startswith("/") or path.startswith(("/tmp/", "/var/tmp/", "/dev/shm/")) \
        or path in ("/tmp", "/var/tmp", "/dev/shm")


@dataclass(frozen=True)
class Reader:
    """What the rules may ask while reading: the machine and who else can write a path."""

    ctx: AssessContext | None = None
    """The context commands found in the content are assessed in."""
    other_writable: Callable[[str], bool] = field(default=guess_other_writable)
    """Whether a uid other than root (and the file's owner) can change ``path``."""
    inner: Callable[[str, str, str, Reader], list[Finding]] | None = None
    """How content inside content is judged (a tmpfiles.d line's text): the entry point,
    :func:`anna_common.risk.content.meaning.judge_text`, filled in by it."""


CommandJudge = Callable[[str, "AssessContext | None"], tuple[bool, list[str]]]
_COMMAND_JUDGE: list[CommandJudge] = []


def set_command_judge(judge: CommandJudge) -> None:
    """The classifier registers itself (:mod:`anna_common.risk.assess`, at import): the
    commands found in content are judged by it, and it reads content through these rules,
    so neither imports the other's entry point."""
    _COMMAND_JUDGE[:] = [judge]


MAX_COMMANDS = 256
"""Commands (or pieces of shell code) judged in one file: each costs the classifier's time,
so a file holding more is refused rather than read slowly."""
_SPENT: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "content_commands", default=None)


class TooManyCommands(Exception):
    """A file holds more commands than :data:`MAX_COMMANDS`."""


def command_budget() -> contextvars.Token[list[int] | None]:
    """Start counting the commands judged for one file (the entry point calls it)."""
    return _SPENT.set([0])


def end_budget(token: contextvars.Token[list[int] | None]) -> None:
    """Stop counting (the entry point, when the file is judged)."""
    _SPENT.reset(token)


def judge_command(command: str, ctx: AssessContext | None) -> tuple[bool, list[str]]:
    """(banned, codes) of ``command`` by the classifier; raises :class:`TooManyCommands`
    past :data:`MAX_COMMANDS` in one file."""
    spent = _SPENT.get()
    if spent is not None:
        spent[0] += 1
        if spent[0] > MAX_COMMANDS:
            raise TooManyCommands
    if not _COMMAND_JUDGE:  # never silently "not banned": the classifier is not loaded
        raise RuntimeError("anna_common.risk.assess is not imported: no command judge")
    return _COMMAND_JUDGE[0](command, ctx)


