"""Whether two path patterns can name a common path (the policy's path matching).

A policy rule names an area with a glob (``/etc/ssh/**``); a command names what it touches
with a path that may itself be a pattern (``/e?c/ss*/sshd_config``) or hold parts only
known at run time (``/etc/$X``, which Anna resolves to ``/etc/*``). A rule must match when
*some* path could be named by both, so the question is whether the two patterns
intersect, not whether one string matches the other. Answered by a memoised walk over
both token lists: no filesystem access.

Rule side: ``*`` and ``?`` and ``[...]`` stay inside one path component, ``**`` crosses
components and ``/**/`` may also be a single ``/``. Command side: every ``*`` may cross
``/`` (an unknown variable's value can hold slashes), which matches more, the cautious
side for a deny rule.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache

Token = tuple[str, frozenset[str] | str]
"""Kinds: one character (``char``, ``set``), a run without ``/`` (``star``), any run
(``globstar``)."""
_PROBE = frozenset(string.printable) | {"é", "\u00a0"}
MAX_STATES = 250_000
"""Pairs of positions compared before two patterns count as intersecting (cautious)."""
"""Characters tried when two bracket expressions are compared."""


@lru_cache(maxsize=4096)
def tokens(pattern: str, *, crossing: bool) -> tuple[Token, ...]:
    """The pattern as tokens; ``crossing``: a single ``*`` also crosses ``/``."""
    out: list[Token] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            double = pattern.startswith("**", i)
            kind = "globstar" if (double or crossing) else "star"
            if out and out[-1][0] in ("star", "globstar"):
                kind = "globstar" if "globstar" in (kind, out.pop()[0]) else "star"
            out.append((kind, ""))
            i += 2 if double else 1
            continue
        if ch == "?":
            out.append(("set", frozenset(_PROBE - {"/"})))
        elif ch == "[":
            end, chars = _bracket(pattern, i)
            if end < 0:
                out.append(("char", "["))
            else:
                out.append(("set", chars))
                i = end
        elif ch == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(("char", pattern[i]))
        else:
            out.append(("char", ch))
        i += 1
    return tuple(out)


def _bracket(pattern: str, start: int) -> tuple[int, frozenset[str]]:
    """The closing index and the probe characters a ``[...]`` accepts (-1: no closing)."""
    close = pattern.find("]", start + 2)
    if close < 0:
        return -1, frozenset()
    body = pattern[start + 1:close]
    negate = body[:1] in ("!", "^")
    body = body[1:] if negate else body
    try:
        regex = re.compile("[" + ("^" if negate else "") + _bracket_regex(body) + "]")
    except re.error:
        return close, frozenset(_PROBE - {"/"})  # malformed: any character (matches more)
    return close, frozenset(c for c in _PROBE if c != "/" and regex.match(c))


def _bracket_regex(body: str) -> str:
    classes = {"[:alpha:]": "a-zA-Z", "[:digit:]": "0-9", "[:alnum:]": "a-zA-Z0-9",
               "[:upper:]": "A-Z", "[:lower:]": "a-z", "[:space:]": r"\s",
               "[:xdigit:]": "0-9a-fA-F", "[:punct:]": re.escape(string.punctuation)}
    for name, regex in classes.items():
        body = body.replace(name, regex)
    return body.replace("\\", "\\\\").replace("[", "\\[")


def _one(a: Token, b: Token) -> bool:
    """Two one-character tokens can be the same character."""
    if a[0] == "char" and b[0] == "char":
        return a[1] == b[1]
    if a[0] == "char":
        return a[1] in b[1]
    if b[0] == "char":
        return b[1] in a[1]
    return bool(set(a[1]) & set(b[1]))


def _eats(star: str, tok: Token) -> bool:
    """A star token can consume the one character ``tok`` stands for."""
    if star == "globstar":
        return True
    return tok[1] != "/" if tok[0] == "char" else bool(set(tok[1]) - {"/"})


_WILD = re.compile(r"[*?\[\\]")


def literal_prefix(pattern: str) -> str:
    """The pattern up to its first wildcard or escape."""
    found = _WILD.search(pattern)
    return pattern if found is None else pattern[:found.start()]


@lru_cache(maxsize=65536)
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
        return _rule_regex(rule).fullmatch(path) is not None
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


def _moves(left: tuple[Token, ...], right: tuple[Token, ...], i: int, j: int
           ) -> list[tuple[int, int]]:
    """The states one step on from (i, j): a star may end or eat what the other side
    stands for; two one-character tokens advance together when they can agree."""
    a = left[i] if i < len(left) else None
    b = right[j] if j < len(right) else None
    if a is not None and a[0] in ("star", "globstar"):
        moves = [(i + 1, j)]
        if b is not None and (b[0] in ("star", "globstar") or _eats(a[0], b)):
            moves.append((i, j + 1))
        return moves
    if b is not None and b[0] in ("star", "globstar"):
        moves = [(i, j + 1)]
        if a is not None and _eats(b[0], a):
            moves.append((i + 1, j))
        return moves
    if a is not None and b is not None and _one(a, b):
        return [(i + 1, j + 1)]
    return []


@lru_cache(maxsize=4096)
def _rule_regex(rule: str) -> re.Pattern[str]:
    """A rule's glob as a regex over literal paths (``*``/``?``/``[…]`` within a component,
    ``**`` across components)."""
    out: list[str] = []
    i = 0
    while i < len(rule):
        ch = rule[i]
        if rule.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[" and rule.find("]", i + 2) > 0:
            end = rule.find("]", i + 2)
            body = rule[i + 1:end]
            negate = body[:1] in ("!", "^")
            source = "[" + ("^/" if negate else "") + _bracket_regex(body[1:] if negate
                                                                   else body) + "]"
            try:
                re.compile(source)
            except re.error:
                source = "[^/]"  # malformed: any character (matches more)
            out.append(source)
            i = end
        elif ch == "\\" and i + 1 < len(rule):
            i += 1
            out.append(re.escape(rule[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def is_valid_glob(pattern: str) -> bool:
    """A rule's path glob is well formed: absolute or ``~/``, every ``[`` closed, ``**``
    only as a whole component, no control characters."""
    if not pattern.startswith(("/", "~/")) and pattern != "~":
        return False
    if any(ord(c) < 32 for c in pattern) or len(pattern) > 1024:
        return False
    for component in pattern.split("/"):
        if "**" in component and component != "**":
            return False
        i = 0
        while i < len(component):
            if component[i] == "\\":
                i += 2
                continue
            if component[i] == "[" and _bracket(component, i)[0] < 0:
                return False
            i += 1
    return True


@lru_cache(maxsize=4096)
def rule_variants(rule: str) -> tuple[str, ...]:
    """``/a/**/b`` also means ``/a/b``; ``/a/**`` also means ``/a`` itself (at most 8)."""
    found = [rule]
    for _ in range(3):
        more = [v.replace("/**/", "/", 1) for v in found if "/**/" in v]
        found.extend(m for m in more if m not in found)
    found += [v[:-3] for v in found if v.endswith("/**") and len(v) > 3]
    return tuple(dict.fromkeys(found))


def under(rule: str, path: str) -> bool:
    """The rule's area holds ``path`` or something below it (``rm -r /etc`` reaches
    ``/etc/ssh/**``)."""
    return intersects(rule, path) or intersects(rule, path.rstrip("/") + "/**")
