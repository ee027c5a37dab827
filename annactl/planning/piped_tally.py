"""Anna's own count of piped log lines, for when no model reads them.

``journalctl -b -p err | annactl "what is wrong?"`` with no model reachable used to end with
"no model read it" and nothing else. Anna cannot say what is wrong without a model, but it
can count what it was given, which is often the first thing a person does by eye: which
programs wrote the lines, and which messages repeat. This is a tally, not a diagnosis, and
is worded as one.

Only lines in the formats ``journalctl`` and the kernel log print are counted: the
``short`` family (``Nov 27 10:00:01 host prog[123]: message``, with ``short-iso`` and
``short-precise`` stamps) and ``dmesg`` (``[   12.345678] message``, the kernel's). When
fewer than half the lines read that way, the text is not a log and there is no tally.
Messages that differ only in their numbers (``error -71 (line 5)``, ``(line 6)``) count as
one kind, shown by its first line. The examples are untrusted text: masked like every
stored text here, and made inert by whoever prints them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from anna_common.redact import redact

TOP = 5
"""Kinds of message shown (the most frequent)."""
EXAMPLE_CHARS = 160
"""Longest example shown of a kind of message."""
_STAMP = (r"(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?"
          r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)")
_JOURNAL = re.compile(rf"^{_STAMP} \S+ (?P<prog>[^\s:\[]{{1,64}})(?:\[\d+\])?: ?(?P<msg>.*)$")
_DMESG = re.compile(r"^\[\s*\d+\.\d+\] (?P<msg>.*)$")
_NUMBERS = re.compile(r"\d+")


@dataclass(frozen=True)
class Kind:
    """One kind of message: who wrote it, how often, and its first line."""

    count: int
    """Lines of this kind."""
    program: str
    """The program (``kernel`` for dmesg lines), as the log names it (untrusted)."""
    example: str
    """The first line of this kind, masked and cut (untrusted)."""


@dataclass(frozen=True)
class Tally:
    """What Anna counted in the piped lines."""

    lines: int
    """Non-blank lines looked at."""
    log_lines: int
    """Of those, lines in a log format."""
    programs: int
    """Programs that wrote them."""
    kinds: int
    """Kinds of message (numbers aside)."""
    top: list[Kind]
    """The most frequent kinds, most first (at most :data:`TOP`)."""

    def to_dict(self) -> dict[str, object]:
        """The ``tally`` object of ``--json``."""
        return {"lines": self.lines, "log_lines": self.log_lines, "programs": self.programs,
                "kinds": self.kinds, "top": [{"count": k.count, "program": k.program,
                                              "example": k.example} for k in self.top]}


def tally(text: str, *, top: int = TOP) -> Tally | None:
    """Count ``text``'s log lines by program and kind of message; None when it is not a
    log (fewer than half its non-blank lines in a log format) or holds none."""
    counts: Counter[tuple[str, str]] = Counter()
    first: dict[tuple[str, str], str] = {}
    lines = 0
    for row in text.splitlines():
        if not row.strip() or row.startswith("-- "):  # journalctl's "-- Boot … --" markers
            continue
        lines += 1
        found = _JOURNAL.match(row) or _DMESG.match(row)
        if found is None:
            continue
        program = found.groupdict().get("prog") or "kernel"
        message = found.group("msg").strip()
        key = (program, _NUMBERS.sub("#", message)[:200])
        counts[key] += 1
        first.setdefault(key, message)
    log_lines = sum(counts.values())
    if not log_lines or log_lines * 2 < lines:
        return None
    ranked = sorted(counts.items(), key=lambda item: -item[1])[:top]  # stable: first seen
    return Tally(lines=lines, log_lines=log_lines, programs=len({p for p, _ in counts}),
                 kinds=len(counts),
                 top=[Kind(count, redact(key[0]), redact(first[key])[:EXAMPLE_CHARS])
                      for key, count in ranked])
