"""Glob matching for the policy, by bounded automata: never a backtracking regex.

A policy rule names an area with a glob (``/etc/ssh/**``); a command names what it touches
with a path that may itself be a pattern (``/e?c/ss*/sshd_config``) or hold parts only
known at run time (``/etc/$X``, which Anna resolves to ``/etc/*``). A rule must match when
*some* path could be named by both, so the question is whether the two patterns
intersect, not whether one string matches the other.

Rule globs come from files a user writes (``~/.config/anna/policy.toml``) and are matched
inside the root daemon, so their cost must not depend on how they are written. A regex
built from ``/**/**/**/**/**/**/**/zz`` backtracks: one submit took 30 s and every other
client waited with it. Here every match is a simulation of the pattern's automaton:

- a literal path against a glob: the set of live pattern positions, as a bit mask,
  advanced one character at a time (``len(path) × len(pattern)`` at most, no backtracking);
- two patterns: reachability over (rule position, path position) pairs, each visited once,
  with :data:`MAX_STATES` as the bound (over it: they count as intersecting, the cautious
  answer for deny and ask).

:func:`glob_problem` (used by the parser) bounds the patterns themselves: at most
:data:`MAX_GLOB_CHARS` characters and :data:`MAX_GLOBSTARS` ``**`` components.

Rule side: ``*``, ``?`` and ``[...]`` stay inside one path component, ``**`` crosses
components and ``/**/`` may also be a single ``/``. Command side: every ``*`` may cross
``/`` (an unknown variable's value can hold slashes), which matches more, the cautious
side for a deny rule. :func:`flat_match` is for program and argument globs, where ``/`` is
an ordinary character (as ``fnmatch`` treats it).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

MAX_STATES = 250_000
"""Pairs of positions compared before two patterns count as intersecting (cautious)."""
MAX_GLOB_CHARS = 256
"""Longest path, program or argument glob a rule may hold."""
MAX_GLOBSTARS = 4
"""Most ``**`` components one path glob may hold."""
_SLASH = ord("/")


class Tok(NamedTuple):
    """One pattern token: a character, a one-character set, or a star."""

    kind: str
    """``char``, ``set`` (one character from ``ranges``, or not from them when
    ``negated``; ``?`` is the empty negated set), ``star`` (a run without ``/``) or
    ``globstar`` (any run)."""
    char: str = ""
    """For ``char``."""
    ranges: tuple[tuple[int, int], ...] = ()
    """For ``set``: inclusive code point ranges."""
    negated: bool = False
    """For ``set``: any character *outside* ``ranges``."""


_ANY = Tok("set", negated=True)
_CLASSES: dict[str, tuple[tuple[int, int], ...]] = {
    "alpha": ((65, 90), (97, 122)), "digit": ((48, 57),), "alnum": ((48, 57), (65, 90),
                                                                    (97, 122)),
    "upper": ((65, 90),), "lower": ((97, 122),), "space": ((9, 13), (32, 32)),
    "blank": ((9, 9), (32, 32)), "xdigit": ((48, 57), (65, 70), (97, 102)),
    "punct": ((33, 47), (58, 64), (91, 96), (123, 126)), "print": ((32, 126),),
    "graph": ((33, 126),), "cntrl": ((0, 31), (127, 127)),
    "word": ((48, 57), (65, 90), (95, 95), (97, 122)),
}


@lru_cache(maxsize=1024)  # rules' and commands' globs: bounded memory (issue 22)
def tokens(pattern: str, *, crossing: bool) -> tuple[Tok, ...]:
    """The pattern as tokens; ``crossing``: a single ``*`` also crosses ``/``."""
    out: list[Tok] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            double = pattern.startswith("**", i)
            kind = "globstar" if (double or crossing) else "star"
            if out and out[-1].kind in ("star", "globstar"):
                kind = "globstar" if "globstar" in (kind, out.pop().kind) else "star"
            out.append(Tok(kind))
            i += 2 if double else 1
            continue
        if ch == "?":
            out.append(_ANY)
        elif ch == "[":
            end, tok = _bracket(pattern, i)
            if tok is None:
                out.append(Tok("char", "["))
            else:
                out.append(tok)
                i = end
        elif ch == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(Tok("char", pattern[i]))
        else:
            out.append(Tok("char", ch))
        i += 1
    return tuple(out)


def _bracket(pattern: str, start: int) -> tuple[int, Tok | None]:
    """The index of the closing ``]`` and the set a ``[...]`` stands for (None: not a
    bracket expression, a literal ``[``). Parsed by hand: ranges, classes, escapes."""
    i = start + 1
    negated = i < len(pattern) and pattern[i] in "!^"
    i += negated
    ranges: list[tuple[int, int]] = []
    first = True
    while i < len(pattern):
        ch = pattern[i]
        if ch == "]" and not first:
            return i, Tok("set", ranges=tuple(ranges), negated=negated)
        first = False
        if pattern.startswith("[:", i):
            close = pattern.find(":]", i + 2)
            name = pattern[i + 2:close] if close > 0 else ""
            if name in _CLASSES:
                ranges.extend(_CLASSES[name])
                i = close + 2
                continue
        if ch == "\\" and i + 1 < len(pattern):
            i += 1
            ch = pattern[i]
        lo = ord(ch)
        if pattern.startswith("-", i + 1) and i + 2 < len(pattern) and pattern[i + 2] != "]":
            hi_ch = pattern[i + 2]
            i += 2
            if hi_ch == "\\" and i + 1 < len(pattern):
                i += 1
                hi_ch = pattern[i]
            if ord(hi_ch) >= lo:
                ranges.append((lo, ord(hi_ch)))
        else:
            ranges.append((lo, lo))
        i += 1
    return -1, None


def _in(tok: Tok, code: int) -> bool:
    return any(lo <= code <= hi for lo, hi in tok.ranges) != tok.negated


def _accepts(tok: Tok, ch: str, *, flat: bool) -> bool:
    """The token (one character or a star) can take ``ch``."""
    if tok.kind == "char":
        return tok.char == ch
    if tok.kind == "globstar" or (flat and tok.kind == "star"):
        return True
    if ch == "/" and not flat:
        return False
    return tok.kind == "star" or _in(tok, ord(ch))


def _one(a: Tok, b: Tok) -> bool:
    """Two one-character tokens can be the same character (never ``/`` for two sets)."""
    if a.kind == "char":
        return _accepts(b, a.char, flat=False)
    if b.kind == "char":
        return _accepts(a, b.char, flat=False)
    if a.negated and b.negated:
        return True  # the alphabet is larger than any two finite sets
    pos, other = (a, b) if not a.negated else (b, a)
    for lo, hi in pos.ranges:
        if other.negated:
            # the least code in [lo, hi] outside ``other`` is lo, just after one of its
            # ranges, or just after the slash: try those
            tries = {lo, _SLASH + 1, *(h + 1 for _, h in other.ranges)}
            if any(lo <= c <= hi and c != _SLASH and _in(other, c) for c in tries):
                return True
            continue
        for lo2, hi2 in other.ranges:
            first, last = max(lo, lo2), min(hi, hi2)
            if first <= last and (first, last) != (_SLASH, _SLASH):
                return True
    return False


def _eats(star: str, tok: Tok) -> bool:
    """A star token can consume the one character ``tok`` stands for."""
    if star == "globstar":
        return True
    if tok.kind == "char":
        return tok.char != "/"
    return tok.negated or any((lo, hi) != (_SLASH, _SLASH) for lo, hi in tok.ranges)


_WILD = re.compile(r"[*?\[\\]")


def literal_prefix(pattern: str) -> str:
    """The pattern up to its first wildcard or escape."""
    found = _WILD.search(pattern)
    return pattern if found is None else pattern[:found.start()]


class _Automaton:
    """A pattern's positions as bits; per character, the positions that can take it."""

    def __init__(self, toks: tuple[Tok, ...], *, flat: bool) -> None:
        self.toks = toks
        self.flat = flat
        self.stars = sum(1 << i for i, t in enumerate(toks) if t.kind in ("star", "globstar"))
        self.end = 1 << len(toks)
        self._masks: dict[str, tuple[int, int]] = {}

    def masks(self, ch: str) -> tuple[int, int]:
        """(one-character positions that take ``ch``, star positions that take it)."""
        found = self._masks.get(ch)
        if found is None:
            one = stay = 0
            for i, tok in enumerate(self.toks):
                if _accepts(tok, ch, flat=self.flat):
                    if tok.kind in ("star", "globstar"):
                        stay |= 1 << i
                    else:
                        one |= 1 << i
            found = self._masks[ch] = (one, stay)
            if len(self._masks) > 512:
                self._masks.clear()
        return found

    def close(self, live: int) -> int:
        """A live star may also match nothing: the position after it is live too."""
        while True:
            more = live | ((live & self.stars) << 1)
            if more == live:
                return live
            live = more

    def matches(self, text: str) -> bool:
        """The whole of ``text`` is matched (``len(text)`` steps, each a few int ops)."""
        live = self.close(1)
        for ch in text:
            one, stay = self.masks(ch)
            live = self.close(((live & one) << 1) | (live & stay))
            if not live:
                return False
        return bool(live & self.end)


@lru_cache(maxsize=1024)  # mostly the policy's rules
def _automaton(pattern: str, *, flat: bool) -> _Automaton:
    return _Automaton(tokens(pattern, crossing=flat), flat=flat)


def flat_match(pattern: str, text: str) -> bool:
    """``fnmatch`` semantics (``*``, ``?``, ``[...]``; ``/`` is an ordinary character),
    by automaton: the cost is at most ``len(text) × len(pattern)``."""
    return _automaton(pattern, flat=True).matches(text)


@lru_cache(maxsize=4096)  # rule x command path pairs: bounded memory (issue 22)
def intersects(rule: str, path: str) -> bool:
    """Some path matches both the rule's glob and the command's path (pattern or not)."""
    # the literal heads must agree as far as both go: most pairs end here, cheaply
    head_rule, head_path = literal_prefix(rule), literal_prefix(path)
    common = min(len(head_rule), len(head_path))
    if head_rule[:common] != head_path[:common]:
        return False
    if common == len(rule) == len(path):
        return True
    if not _WILD.search(path):
        return _automaton(rule, flat=False).matches(path)
    left = tokens(rule, crossing=False)
    right = tokens(path, crossing=True)
    if (len(left) + 1) * (len(right) + 1) > MAX_STATES:
        return True  # too large to compare: the cautious answer (deny/ask match more)
    # reachability of the end of both patterns over (rule token, path token) states;
    # iterative, so a 4 KiB path cannot exhaust the stack
    stack, seen = [(0, 0)], {(0, 0)}
    while stack:
        i, j = stack.pop()
        if i == len(left) and j == len(right):
            return True
        for state in _moves(left, right, i, j):
            if state not in seen:
                seen.add(state)
                stack.append(state)
    return False


def _moves(left: tuple[Tok, ...], right: tuple[Tok, ...], i: int, j: int
           ) -> list[tuple[int, int]]:
    """The states one step on from (i, j): a star may end or eat what the other side
    stands for; two one-character tokens advance together when they can agree."""
    a = left[i] if i < len(left) else None
    b = right[j] if j < len(right) else None
    if a is not None and a.kind in ("star", "globstar"):
        moves = [(i + 1, j)]
        if b is not None and (b.kind in ("star", "globstar") or _eats(a.kind, b)):
            moves.append((i, j + 1))
        return moves
    if b is not None and b.kind in ("star", "globstar"):
        moves = [(i, j + 1)]
        if a is not None and _eats(b.kind, a):
            moves.append((i + 1, j))
        return moves
    if a is not None and b is not None and _one(a, b):
        return [(i + 1, j + 1)]
    return []


def glob_problem(pattern: str) -> str | None:
    """What is wrong with a rule's path glob (None: nothing). Absolute or ``~/``, at most
    :data:`MAX_GLOB_CHARS` characters and :data:`MAX_GLOBSTARS` ``**``, every ``[``
    closed, ``**`` only as a whole component, no control characters."""
    if not pattern.startswith(("/", "~/")) and pattern != "~":
        return "must be absolute (/…) or in the home (~/…)"
    problem = size_problem(pattern)
    if problem is not None:
        return problem
    components = pattern.split("/")
    stars = sum(c == "**" for c in components)
    if stars > MAX_GLOBSTARS:
        return f"has {stars} '**' components; at most {MAX_GLOBSTARS}"
    for component in components:
        if "**" in component and component != "**":
            return "'**' only as a whole component (/a/**/b)"
        i = 0
        while i < len(component):
            if component[i] == "\\":
                i += 2
                continue
            if component[i] == "[" and _bracket(component, i)[1] is None:
                return "a '[' is not closed"
            i += 1
    return None


def size_problem(pattern: str) -> str | None:
    """A program, argument or path glob too long to hold, or with control characters."""
    if len(pattern) > MAX_GLOB_CHARS:
        return f"is {len(pattern)} characters long; at most {MAX_GLOB_CHARS}"
    if any(ord(c) < 32 or ord(c) == 127 for c in pattern):
        return "holds a control character"
    return None


def is_valid_glob(pattern: str) -> bool:
    """A rule's path glob is well formed (:func:`glob_problem` has nothing to say)."""
    return glob_problem(pattern) is None


@lru_cache(maxsize=1024)  # the policy's rules
def rule_variants(rule: str) -> tuple[str, ...]:
    """``/a/**/b`` also means ``/a/b``; ``/a/**`` also means ``/a`` itself."""
    found = [rule]
    for _ in range(MAX_GLOBSTARS):
        more = [v.replace("/**/", "/", 1) for v in found if "/**/" in v]
        found.extend(m for m in more if m not in found)
    found += [v[:-3] for v in found if v.endswith("/**") and len(v) > 3]
    return tuple(dict.fromkeys(found))


def under(rule: str, path: str) -> bool:
    """The rule's area holds ``path`` or something below it (``rm -r /etc`` reaches
    ``/etc/ssh/**``)."""
    return intersects(rule, path) or intersects(rule, path.rstrip("/") + "/**")
