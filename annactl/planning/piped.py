"""Text piped into ``annactl ask``: untrusted context for one request, bounded and redacted.

``journalctl -b -p err | annactl ask "what is wrong?"`` gives the model the journal as a
``piped`` document of the request packet (:mod:`annactl.planning.packet`). Like every
document it is data, never instructions: it is rendered into the *user* message inside a
``<piped trust="untrusted">`` block as escaped JSON (so no line of it can close the block
or pose as Anna's words), and never into the system message, which stays byte-identical
across requests.

Bounds (what happens past them is said in the text itself, never silently):

* at most :data:`MAX_READ_BYTES` are read from stdin; past that Anna stops reading and
  the document ends with a marker saying so;
* the model gets at most :data:`MAX_CHARS` characters: the first quarter and the last
  three quarters, cut at line ends, with a marker in between naming how many lines and
  characters were left out (logs put the newest lines last; a file's head names it);
* secrets are masked before anything is cut or sent (:func:`anna_common.redact.redact`,
  the policy of every stored text), so a token in a log never reaches a model;
* terminal escape sequences and other control characters are removed (they are colour
  codes from ``systemctl status`` and the like, meaningless to a model).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from anna_common.redact import redact, redact_private_keys

MAX_READ_BYTES = 1024 * 1024
"""Bytes read from stdin at most (the rest is left unread, and the text says so)."""
MAX_CHARS = 6000
"""Characters of piped text the model gets at most (with the 8,192-token context of a
small local model, the system message, telemetry and reply keep their room)."""
HEAD_SHARE = 0.25
"""The share of :data:`MAX_CHARS` kept from the start; the rest comes from the end."""
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.?")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Piped:
    """What was read from stdin, and the bounded, redacted text the model gets."""

    text: str
    """The text sent (redacted, cut with markers)."""
    lines: int
    """Lines read."""
    size: int
    """Bytes read."""
    left_out_lines: int = 0
    """Lines between the head and the tail that were not sent."""
    unread: bool = False
    """Anna stopped reading at :data:`MAX_READ_BYTES`; more was waiting."""
    still_open: bool = False
    """The writer had not closed stdin when Anna stopped waiting for it."""
    whole: str = field(default="", repr=False, compare=False)
    """Every line read, cleaned but not masked or cut: only for Anna's own count
    (:mod:`annactl.planning.piped_tally`), which masks what it shows; never sent."""

    @property
    def truncated(self) -> bool:
        """Part of what was piped is not in :attr:`text`."""
        return bool(self.left_out_lines or self.unread or self.still_open)

    def to_dict(self) -> dict[str, Any]:
        """The ``piped`` object of ``--json`` (the figures, never the text)."""
        return {"lines": self.lines, "bytes": self.size, "chars_sent": len(self.text),
                "truncated": self.truncated, "left_out_lines": self.left_out_lines,
                "unread": self.unread, "still_open": self.still_open}

    def summary(self) -> str:
        """``read 42 lines (3.1 KB) from stdin`` and how it was cut, for a note."""
        words = f"read {self.lines} line{'s' if self.lines != 1 else ''} ({_size(self.size)}) " \
                "from stdin"
        if self.unread:
            words += f", stopped reading after {_size(MAX_READ_BYTES)}"
        if self.still_open:
            words += ", stdin was still open (used what had arrived)"
        if self.left_out_lines:
            words += f"; {self.left_out_lines} lines in the middle were left out"
        return words


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / 1024 / 1024:.1f} MB"


def clean(text: str) -> str:
    """``text`` without terminal escape sequences and control characters (tabs, newlines
    stay); carriage returns end lines, as a terminal would show them."""
    text = _ESCAPES.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return _CONTROL.sub("", text)


def bounded(raw: bytes, *, unread: bool = False, still_open: bool = False,
            limit: int = MAX_CHARS) -> Piped | None:
    """The :class:`Piped` for ``raw`` (None when nothing but blank space was piped)."""
    text = clean(raw.decode("utf-8", "replace"))
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if unread and "\n" in text:  # the last line was cut by the size bound: not sent
        text = text[:text.rindex("\n")]
    if not text.strip():
        return None
    # a private key spans lines, so it is masked in the whole text before any cut; every
    # other secret sits on a line (or just after a name ending the line before), so only
    # the lines kept are masked, with CONTEXT lines around them (a megabyte would take
    # seconds to mask whole)
    rows = redact_private_keys(text.rstrip("\n")).split("\n")
    sent, left_out = _head_and_tail(rows, limit)
    if unread:
        sent += f"\n[… Anna stopped reading here, after {MAX_READ_BYTES:,} bytes …]"
    if still_open:
        sent += "\n[… stdin was still open; Anna used what had arrived …]"
    return Piped(text=sent, lines=lines, size=len(raw), left_out_lines=left_out, whole=text,
                 unread=unread, still_open=still_open)


CONTEXT = 3
"""Lines masked beside a kept piece and then dropped (``password:`` on the line before)."""
_MARGIN = 512
"""Characters masked beyond a piece cut inside a line (a secret across the cut)."""


def _masked_rows(rows: list[str], start: int, end: int) -> list[str]:
    """``rows[start:end]`` masked, with :data:`CONTEXT` rows on both sides as context
    (masking keeps the line count: only private keys span lines, masked already)."""
    before = min(CONTEXT, start)
    window = rows[start - before:end + CONTEXT]
    masked = redact("\n".join(window)).split("\n")
    return masked[before:before + end - start]


def _head_and_tail(rows: list[str], limit: int) -> tuple[str, int]:
    """At most about ``limit`` characters of ``rows``, masked: whole lines from the start
    and the end around a marker (cut inside a line only when lines are enormous), and how
    many lines were left out."""
    total = sum(len(r) + 1 for r in rows) - 1
    if total <= limit:
        return "\n".join(_masked_rows(rows, 0, len(rows))), 0
    head_room = int(limit * HEAD_SHARE)
    head = _fitting(rows, head_room)
    tail = _fitting(rows[head:][::-1], limit - head_room - 80)
    if not head and not tail:  # enormous lines at both ends: cut inside them
        return _cut_inside("\n".join(rows), limit)
    left = rows[head:len(rows) - tail]
    marker = (f"[… Anna left out {len(left)} lines ({sum(len(r) + 1 for r in left):,} "
              "characters) here …]")
    kept = [*_masked_rows(rows, 0, head), marker,
            *_masked_rows(rows, len(rows) - tail, len(rows))]
    return "\n".join(kept), len(left)


def _fitting(rows: list[str], room: int) -> int:
    """How many of ``rows``, from the first, fit in ``room`` characters."""
    used = count = 0
    for row in rows:
        if used + len(row) + 1 > room:
            break
        used += len(row) + 1
        count += 1
    return count


def _cut_inside(text: str, limit: int) -> tuple[str, int]:
    """The start and end of ``text`` around a marker; each piece is masked with a margin
    beyond the cut, so a secret across it is masked, not half shown."""
    keep = limit - 80
    head_len, tail_len = keep // 4, keep - keep // 4
    middle = text[head_len:len(text) - tail_len]
    head = redact(text[:head_len + _MARGIN])[:head_len]
    tail = redact(text[-(tail_len + _MARGIN):])[-tail_len:]
    return (f"{head}\n[… Anna left out {len(middle):,} characters here …]\n{tail}",
            middle.count("\n"))
