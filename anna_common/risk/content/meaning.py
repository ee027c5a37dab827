"""What a file's content grants or runs, judged against the seed's bans.

One entry point, :func:`judge_text`, for both places that know a file's new content: the
command classifier (what ``echo … | tee FILE`` or a heredoc writes, when the text is in the
command) and the daemon's judge of a captured step (the file the step really left, whichever
program wrote it). NEVER means never: a sudoers grant of everything is banned whether it
arrives through ``tee``, ``python3 -c open().write``, ``cp``, ``tar`` or ``patch``.

Each kind (:mod:`anna_common.risk.content.kinds`) is read in its own grammar:

- security settings (sudoers, sshd, PAM, SELinux, pacman, sysctl, the kernel command line):
  :mod:`anna_common.risk.content.settings`, line by line;
- code (shell start-up files, cron scripts, generators; cron lines; units' ``Exec*=``;
  udev ``RUN``; autostart ``Exec=``; logrotate scripts; git's command keys; apt hooks;
  ``.pth`` import lines): the commands are assessed by the classifier itself
  (:func:`anna_common.risk.assess.assess`) and a banned one is banned here;
- grants and search paths (``/etc/environment``, ``ld.so.preload``/``ld.so.conf``,
  ``sudo.conf``, polkit, tmpfiles.d lines, which write other files and are judged as those
  writes): :mod:`anna_common.risk.content.grants`.

A finding names the rule and the line, never the content (it may be a secret). The work is
linear in the text and bounded: past :data:`MAX_CONTENT` bytes or :data:`MAX_LINE` on one
line the file is refused as unreadable, not read slowly.
"""

from __future__ import annotations

import contextvars
import dataclasses

from anna_common.risk.content import code, grants
from anna_common.risk.content.base import (
    MAX_COMMANDS,
    MAX_CONTENT,
    MAX_DEPTH,
    MAX_LINE,
    Finding,
    Reader,
    TooManyCommands,
    command_budget,
    end_budget,
)
from anna_common.risk.content.settings import WHAT, disabling

_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("content_depth", default=0)


def judge_text(kind: str, path: str, text: str, reader: Reader | None = None
               ) -> list[Finding]:
    """What ``text``, as the new content of ``path`` (a file of ``kind``), grants or runs."""
    reader = reader or Reader()
    if reader.inner is None:
        reader = dataclasses.replace(reader, inner=judge_text)
    depth = _DEPTH.get()
    if depth > MAX_DEPTH:
        return []
    if kind == "anna":
        return [Finding("anna.own-config", "BAN_ANNA_CONFIG", True,
                        "it is Anna's own configuration: only the administrator or annactl "
                        "changes it, never a plan")]
    if len(text) > MAX_CONTENT:
        return [Finding("content.too-large", "BAN_SECURITY_DISABLE", True,
                        f"more than {MAX_CONTENT} bytes: too large for Anna to read what it "
                        "grants or runs")]
    lines = text.split("\n")
    long = next((i for i, line in enumerate(lines, 1) if len(line) > MAX_LINE), None)
    if long is not None:
        return [Finding("content.line-too-long", "BAN_SECURITY_DISABLE", True,
                        f"a line longer than {MAX_LINE} characters: Anna cannot read what it "
                        "grants or runs", long)]
    token = _DEPTH.set(depth + 1)
    budget = command_budget() if depth == 0 else None
    try:
        return _by_kind(kind, path, text, lines, reader)
    except TooManyCommands:
        return [Finding("content.too-many-commands", "BAN_UNTRUSTED_CODE", True,
                        f"more than {MAX_COMMANDS} commands in one file: too many for Anna to "
                        "judge each")]
    finally:
        if budget is not None:
            end_budget(budget)
        _DEPTH.reset(token)


def _by_kind(kind: str, path: str, text: str, lines: list[str], reader: Reader
             ) -> list[Finding]:
    if kind in WHAT:
        return _settings(kind, path, lines) + grants.settings_extra(kind, lines, reader)
    handler = code.HANDLERS.get(kind) or grants.HANDLERS.get(kind)
    if handler is None:
        return []
    return handler(path, text, lines, reader)


def _settings(kind: str, path: str, lines: list[str]) -> list[Finding]:
    """The settings that switch a security mechanism off, line by line (each pattern is
    bounded by its line, so the work stays linear however the file is built)."""
    found: list[Finding] = []
    for number, line in enumerate(lines, 1):
        if disabling(kind, [line], path):
            found.append(Finding(f"{kind}.disables", "BAN_SECURITY_DISABLE", True,
                                 WHAT[kind], number))
            break
    return found


def banned(findings: list[Finding]) -> list[Finding]:
    """The hard bans among ``findings``."""
    return [f for f in findings if f.banned]


__all__ = ["MAX_CONTENT", "Finding", "Reader", "banned", "judge_text"]
