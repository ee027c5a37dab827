"""Bash brace expansion with its cost known before any work is done.

``touch ~/x{a,b}{a,b}...`` twenty times over is a million words: expanding it first and
counting after cost the daemon 28 s of CPU per submission. Here the braces are matched with
one stack pass, the number of words is computed from the structure (a product over a word's
parts, a sum over a group's alternatives, a sequence's length from its bounds), and only a
word under :data:`MAX_WORDS` is expanded. Anything larger is reported as too large to
analyse, which the risk rules turn into HIGH.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

MAX_WORDS = 256
"""Brace expansion of one word beyond this many results is not done: the word is too large."""
MAX_NESTING = 16
"""Braces nested deeper than this are not analysed: the word is too large."""

OPEN, CLOSE, COMMA = "\x00{", "\x00}", "\x00,"
"""Unquoted brace and comma tokens (quoted ones are plain characters)."""

_INT_SEQ = re.compile(r"^([-+]?\d{1,18})\.\.([-+]?\d{1,18})(?:\.\.([-+]?\d{1,18}))?$")
_CHAR_SEQ = re.compile(r"^([A-Za-z])\.\.([A-Za-z])(?:\.\.([-+]?\d{1,18}))?$")


class TooLarge(Exception):
    """The expansion would exceed the budget."""


@dataclass(frozen=True, slots=True)
class _Group:
    alternatives: tuple[tuple[object, ...], ...]


@dataclass(frozen=True, slots=True)
class _Range:
    start: int
    stop: int
    step: int
    chars: bool
    width: int

    def count(self) -> int:
        return abs(self.stop - self.start) // self.step + 1

    def values(self) -> list[str]:
        sign = 1 if self.stop >= self.start else -1
        out = []
        for n in range(self.start, self.stop + sign, sign * self.step):
            out.append(chr(n) if self.chars else str(n).zfill(self.width) if n >= 0 else
                       "-" + str(-n).zfill(max(self.width - 1, 0)))
        return out


def _match(toks: list[str]) -> dict[int, int]:
    """Opening index → closing index of each balanced unquoted brace pair."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for i, tok in enumerate(toks):
        if tok == OPEN:
            stack.append(i)
            if len(stack) > MAX_NESTING:
                raise TooLarge
        elif tok == CLOSE and stack:
            pairs[stack.pop()] = i
    return pairs


def _plain(toks: Iterable[str]) -> str:
    return "".join({OPEN: "{", CLOSE: "}", COMMA: ","}.get(t, t) for t in toks)


def _sequence(text: str) -> _Range | None:
    """``1..10``, ``01..10..2``, ``a..z``: a bash sequence expression, else None."""
    match = _INT_SEQ.match(text)
    chars = False
    if match is None:
        match = _CHAR_SEQ.match(text)
        chars = match is not None
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if chars:
        return _Range(ord(first), ord(last), step, True, 0)
    padded = (first.lstrip("-+").startswith("0") and len(first.lstrip("-+")) > 1) or (
        last.lstrip("-+").startswith("0") and len(last.lstrip("-+")) > 1)
    width = max(len(first), len(last)) if padded else 0
    return _Range(int(first), int(last), step, False, width)


class _Parser:
    def __init__(self, toks: list[str]) -> None:
        self.toks = toks
        self.pairs = _match(toks)

    def seq(self, start: int, end: int) -> tuple[object, ...]:
        """Items of ``toks[start:end]``: characters, groups and ranges."""
        items: list[object] = []
        i = start
        while i < end:
            tok = self.toks[i]
            close = self.pairs.get(i) if tok == OPEN else None
            if close is not None and close < end:
                item = self._group(i, close)
                if item is not None:
                    items.append(item)
                    i = close + 1
                    continue
            items.append(_plain((tok,)))
            i += 1
        return tuple(items)

    def _group(self, open_at: int, close_at: int) -> object | None:
        commas: list[int] = []
        i = open_at + 1
        while i < close_at:
            inner = self.pairs.get(i) if self.toks[i] == OPEN else None
            if inner is not None and inner < close_at:
                i = inner + 1
                continue
            if self.toks[i] == COMMA:
                commas.append(i)
            i += 1
        if commas:
            bounds = [open_at, *commas, close_at]
            return _Group(tuple(self.seq(a + 1, b) for a, b in itertools.pairwise(bounds)))
        return _sequence(_plain(self.toks[open_at + 1 : close_at]))


def _count(items: tuple[object, ...], cap: int) -> int:
    """How many words ``items`` expands to, stopping once it exceeds ``cap``."""
    total = 1
    for item in items:
        if isinstance(item, _Group):
            n = 0
            for alt in item.alternatives:
                n += _count(alt, cap)
                if n > cap:
                    break
        elif isinstance(item, _Range):
            n = item.count()
        else:
            continue
        total *= n
        if total > cap:
            return cap + 1
    return total


def _words(items: tuple[object, ...]) -> list[str]:
    results = [""]
    for item in items:
        if isinstance(item, _Group):
            options = [w for alt in item.alternatives for w in _words(alt)]
        elif isinstance(item, _Range):
            options = item.values()
        else:
            results = [r + str(item) for r in results]
            continue
        results = [r + o for r in results for o in options]
    return results


def expand(toks: list[str]) -> tuple[str, ...]:
    """The words brace expansion makes of ``toks`` (empty when there is none).

    Raises :class:`TooLarge` when the result would exceed :data:`MAX_WORDS` or the braces
    nest deeper than :data:`MAX_NESTING`; the cost of finding that out is linear in the
    length of the word.
    """
    parser = _Parser(toks)
    items = parser.seq(0, len(toks))
    if not any(isinstance(i, _Group | _Range) for i in items):
        return ()
    if _count(items, MAX_WORDS) > MAX_WORDS:
        raise TooLarge
    # even a single result counts: /e{t..t}c is /etc
    return tuple(_words(items))
