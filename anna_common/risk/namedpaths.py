"""The paths a file tool with no write rule names, judged as written (see :func:`named_paths`).

A captured step is judged on what it really changed; a rollback command, a live step and a
per-user daemon's step run on the prediction alone, so a tool whose writes no rule spells
(``split``, ``patch``, the in-place compressors) is judged on every absolute or home path it
names: over-judging what it only reads, never under.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.risk.rules.locations import judge
from anna_common.risk.writes import WriteTarget
from anna_common.shell.argv import operands

if TYPE_CHECKING:
    from anna_common.risk.rules.base import Out
    from anna_common.shell.grammar import SimpleCommand

IN_PLACE = frozenset({"gzip", "xz", "zstd", "bzip2", "lz4", "lzma", "compress", "pigz",
                      "pbzip2", "brotli"})
"""Compressors: each file named is replaced (or joined) by its compressed twin in place."""


def named_paths(cmd: SimpleCommand, out: Out) -> list[str]:
    """A file tool with no write rule (``split``, ``patch``, ``xz``…) may change any path it
    names: each absolute or home-relative operand is judged as a write to it. What it only
    reads is over-judged, never under: a step that really runs is judged on what it did
    (the capture), but a rollback command, a live step and a per-user daemon's step run on
    this prediction alone."""
    written: list[str] = []
    for word in operands(cmd.args):
        if not word.text.startswith(("/", "~")):
            continue
        places = out.paths(word)
        if not places or all(harmless(p.path) for p in places):
            continue
        judge(WriteTarget(word, "edit", program=cmd.program), out)
        written.extend(p.path for p in places)
    return written


def harmless(path: str) -> bool:
    """A path writing to which changes nothing (the null device, the output streams)."""
    return path in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty") or path.startswith(
        "/dev/fd/")
