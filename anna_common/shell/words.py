"""Evaluating one bash word from its tree-sitter node, the way bash would see it.

A word is built from segments: literal text (quoted or not), parameter
expansions and substitutions. Quote removal and backslash escapes follow the
bash manual; nothing here splits a string by hand. What cannot be known before
the command runs (``$VAR``, ``$(...)``, globs) is kept visible in the result so
the risk rules can fail closed on it.
"""

from __future__ import annotations

import codecs
import re
import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from anna_common.shell import brace as shellbrace

if TYPE_CHECKING:
    from collections.abc import Callable

    from tree_sitter import Node

MAX_BRACE_ALTERNATIVES = shellbrace.MAX_WORDS
"""Brace expansion of one word beyond this many results is not done: the word is too large."""


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of a word."""

    text: str
    """Literal text, or the source of the expansion for non-literal kinds."""
    quoted: bool
    """True when quoting or a backslash protects it from globbing and brace expansion."""
    kind: str = "literal"
    """``literal``, ``var`` (parameter expansion) or ``subst`` (command/process/arithmetic)."""
    name: str | None = None
    """For ``var``: the parameter name (``HOME``, ``1``, ``@``)."""


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word after quote removal, with what remains unknown marked."""

    text: str
    """The value with literal parts resolved and expansions left as written."""
    literal: bool
    """True when the value is fully known before the command runs."""
    glob: bool = False
    """True when an unquoted ``*``, ``?`` or ``[`` may trigger pathname expansion."""
    tilde: bool = False
    """True when an unquoted leading ``~`` will be replaced by a home directory."""
    variables: tuple[str, ...] = ()
    """Names of the parameters expanded in it."""
    substituted: bool = False
    """True when it holds a command, process or arithmetic substitution."""
    alternatives: tuple[str, ...] = ()
    """The words brace expansion produces (empty when there is no brace expansion)."""
    segments: tuple[Segment, ...] = field(default=(), repr=False, compare=False)
    """The pieces it was built from."""
    too_large: bool = False
    """True when its brace expansion is beyond the analysis budget (it is then HIGH)."""

    @property
    def values(self) -> tuple[str, ...]:
        """Every literal value this word can take after brace expansion."""
        return self.alternatives or (self.text,)

    def after(self, prefix_len: int) -> Word:
        """This word without its first ``prefix_len`` literal characters.

        ``of=/dev/sda`` after 3 characters is ``/dev/sda``. A ``~`` that then leads is a home
        only where bash expanded it: after an unquoted ``NAME=`` (``of=~/x``), never after
        an option name (``--file=~/x``, ``-o~/x`` stay as written; observed with bash 5.2).
        """
        segments: list[Segment] = []
        cut_off: list[Segment] = []
        skip = prefix_len
        for seg in self.segments or (Segment(self.text, True),):
            kept = seg
            if skip and seg.kind == "literal":
                cut = min(skip, len(seg.text))
                skip -= cut
                cut_off.append(Segment(seg.text[:cut], seg.quoted))
                if cut == len(seg.text):
                    continue
                kept = Segment(seg.text[cut:], seg.quoted, seg.kind, seg.name)
            segments.append(kept)
        word = _finish(segments)
        if word.tilde and not (all(not s.quoted for s in cut_off) and _ASSIGNMENT_LIKE.fullmatch(
                "".join(s.text for s in cut_off))):
            word = replace(word, tilde=False)
        return word

    @classmethod
    def unknown(cls, text: str) -> Word:
        """A word whose value is only known at run time (``{}`` of ``find -exec``, xargs input)."""
        return cls(text=text, literal=False, segments=(Segment(text, True, "subst"),))

    @classmethod
    def of(cls, text: str) -> Word:
        """A fully literal word (used for synthetic arguments)."""
        return cls(text=text, literal=True, segments=(Segment(text, True),))


_ASSIGNMENT_LIKE = re.compile(r"[A-Za-z_]\w*(?:\[[^]]*\])?\+?=")
"""A word bash treats as an assignment for tilde expansion (``of=``, ``a[1]=``, ``x+=``)."""

_STRING_ESCAPES = {'"', "\\", "$", "`"}


def _unescape_unquoted(raw: str) -> list[Segment]:
    """Bash's unquoted backslash: the next character is taken literally.

    ``\\<newline>`` vanishes (a line continuation).
    """
    out: list[Segment] = []
    buf: list[str] = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            if buf:
                out.append(Segment("".join(buf), False))
                buf = []
            nxt = raw[i + 1]
            if nxt != "\n":
                out.append(Segment(nxt, True))
            i += 2
            continue
        buf.append(ch)
        i += 1
    if buf:
        out.append(Segment("".join(buf), False))
    return out


def _unescape_double(raw: str) -> str:
    """Inside double quotes a backslash escapes only ``" \\ $ `` and newline."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw) and (
                raw[i + 1] in _STRING_ESCAPES or raw[i + 1] == "\n"):
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _decode_ansi_c(raw: str) -> str:
    """Decode ``$'...'`` escapes (``\\n``, ``\\x41``, ``\\101``, ``\\u00e9``).

    Text that does not decode stays as it is.
    """
    try:
        with warnings.catch_warnings():
            # "\e" and friends are bash escapes Python does not know; they stay as written
            warnings.simplefilter("ignore", DeprecationWarning)
            return codecs.decode(raw.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return raw


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _var_name(node: Node) -> str:
    for child in node.named_children:
        if child.type in ("variable_name", "special_variable_name"):
            return _text(child)
        if child.type == "subscript":
            return _var_name(child)
    return _text(node).lstrip("${").rstrip("}") or "?"


class WordBuilder:
    """Builds :class:`Word` values; reports substitutions to ``on_substitution``.

    ``on_substitution(node, origin)`` is called for every command or process
    substitution met inside a word so the caller can analyse the code in it; it returns
    the substitution's output when that is statically known (``$(echo rm)``), else None.
    """

    def __init__(self, on_substitution: Callable[[Node, str], str | None],
                 spend: Callable[[str, int], None] | None = None,
                 nest: Callable[[int], None] | None = None) -> None:
        self._on_substitution = on_substitution
        self._spend = spend or (lambda _kind, _units: None)
        self._nest = nest or (lambda _delta: None)
        """Enter/leave a level of a word (may raise: the walker's depth budget)."""
        self.arithmetic: list[str] = []
        """Text bash evaluates as arithmetic: ``$((...))``, subscripts, substring offsets."""
        self.too_large: list[str] = []
        """Words whose brace expansion is beyond the budget."""

    def build(self, node: Node) -> Word:
        """Evaluate a word-like node (word, string, concatenation, expansion, ...)."""
        self._spend("words", 1)
        segments = self._segments(node, quoted=False)
        word = _finish(segments)
        if word.alternatives:
            self._spend("expanded words", len(word.alternatives))
        if word.too_large:
            self.too_large.append(word.text[:60])
        return word

    # -- segments -------------------------------------------------------------

    def _segments(self, node: Node, *, quoted: bool) -> list[Segment]:
        self._nest(1)  # a word nests (strings in substitutions in strings): bound the recursion
        try:
            return self._segments_of(node, quoted=quoted)
        finally:
            self._nest(-1)

    def _segments_of(self, node: Node, *, quoted: bool) -> list[Segment]:
        kind = node.type
        if kind == "word":
            raw = _text(node)
            return [Segment(raw, True)] if quoted else _unescape_unquoted(raw)
        if kind == "raw_string":
            return [Segment(_text(node)[1:-1], True)]
        if kind == "ansi_c_string":
            return [Segment(_decode_ansi_c(_text(node)[2:-1]), True)]
        if kind in ("string", "translated_string"):
            return self._string(node)
        if kind in ("simple_expansion", "expansion"):
            for child in node.named_children:
                self._scan_substitutions(child)
            if kind == "expansion":
                self.arithmetic.extend(expansion_arithmetic(node))
            return [Segment(_text(node), quoted, "var", _var_name(node))]
        if kind == "command_substitution":
            static = self._on_substitution(node, "command_substitution")
            if static is not None and (quoted or not any(c.isspace() for c in static)):
                # $(echo rm) is just "rm": a disguise, not run-time knowledge
                return [Segment(static, True)]
            return [Segment(_text(node), quoted, "subst")]
        if kind == "process_substitution":
            self._on_substitution(node, "process_substitution")
            return [Segment(_text(node), quoted, "subst")]
        if kind == "arithmetic_expansion":
            self._scan_substitutions(node)
            raw = _text(node)
            self.arithmetic.append(raw[3:-2] if raw.startswith("$((") else raw[2:-1])
            return [Segment(_text(node), quoted, "subst")]
        if kind == "concatenation":
            return self._gapped(node, quoted=quoted)
        if kind == "string_content":
            return [Segment(_unescape_double(_text(node)), True)]
        # number, brace_expression, extglob_pattern, regex, ...: the source text as written
        return [Segment(_text(node), quoted)]

    def _string(self, node: Node) -> list[Segment]:
        """A double-quoted string; text between child nodes is literal content."""
        self._spend("word parts", node.child_count)
        inner: list[Segment] = []
        start = node.start_byte + 1 + (1 if node.type == "translated_string" else 0)
        end = node.end_byte - 1
        source = node.text or b""
        base = node.start_byte
        pos = start
        for child in node.children:
            if child.type in {'"', '$"'}:
                continue
            if child.start_byte > pos:
                gap = source[pos - base : child.start_byte - base].decode("utf-8", "replace")
                inner.append(Segment(_unescape_double(gap), True))
            inner.extend(self._segments(child, quoted=True))
            pos = max(pos, child.end_byte)
        if end > pos:
            gap = source[pos - base : end - base].decode("utf-8", "replace")
            inner.append(Segment(_unescape_double(gap), True))
        return inner or [Segment("", True)]

    def _gapped(self, node: Node, *, quoted: bool) -> list[Segment]:
        self._spend("word parts", node.child_count)
        out: list[Segment] = []
        source = node.text or b""
        base = node.start_byte
        pos = node.start_byte
        for child in node.children:
            if child.start_byte > pos:
                gap = source[pos - base : child.start_byte - base].decode("utf-8", "replace")
                out.extend(_unescape_unquoted(gap) if not quoted else [Segment(gap, True)])
            out.extend(self._segments(child, quoted=quoted))
            pos = max(pos, child.end_byte)
        return out

    def _scan_substitutions(self, node: Node) -> None:
        """Find substitutions nested anywhere below ``node``.

        For example ``${x:-$(cmd)}`` or ``$(( $(cmd) ))``.
        """
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in ("command_substitution", "process_substitution"):
                self._on_substitution(current, current.type)
                continue
            if current.type == "arithmetic_expansion" and current is not node:
                raw = _text(current)  # ${x:-$((a[$(cmd)]))}: arithmetic nested in a word
                self.arithmetic.append(raw[3:-2] if raw.startswith("$((") else raw[2:-1])
            elif current.type == "expansion":
                self.arithmetic.extend(expansion_arithmetic(current))
            stack.extend(current.children)


def expansion_arithmetic(node: Node) -> list[str]:
    """What bash evaluates as arithmetic in ``${...}``: a subscript (``${a[i+1]}``), substring
    offsets (``${x:off:len}``) and the name an indirection (``${!x}``) refers to."""
    found: list[str] = []
    children = node.children
    for index, child in enumerate(children):
        if child.type == "subscript":
            raw = _text(child)
            found.append(raw[raw.find("[") + 1 : raw.rfind("]")])
        elif child.type == ":":
            tail = b"".join(c.text or b"" for c in children[index + 1 :] if c.type != "}")
            found.append(tail.decode("utf-8", "replace"))
            break
        elif child.type == "!" and index == 1:
            rest = [c for c in children[index + 1 :] if c.is_named]
            if rest:
                found.append(_text(rest[0]))
    return found


def join_segments(segments: list[Segment]) -> Word:
    """The word made of ``segments``, its properties (literal, glob, tilde, braces) derived
    as for a word read from the source."""
    return _finish(segments)


def _finish(segments: list[Segment]) -> Word:
    text = "".join(s.text for s in segments)
    literal = all(s.kind == "literal" for s in segments)
    glob = any(
        s.kind == "literal" and not s.quoted and any(c in s.text for c in "*?[") for s in segments
    )
    tilde = bool(segments) and segments[0].kind == "literal" and not segments[0].quoted
    tilde = tilde and segments[0].text.startswith("~")
    variables = tuple(s.name for s in segments if s.kind == "var" and s.name)
    substituted = any(s.kind == "subst" for s in segments)
    alternatives, too_large = _brace_expand(segments) if literal else (
        (), _brace_too_large(segments))
    return Word(
        text=text,
        literal=literal,
        glob=glob,
        tilde=tilde,
        variables=variables,
        substituted=substituted,
        alternatives=alternatives,
        segments=tuple(segments),
        too_large=too_large,
    )


# -- brace expansion ------------------------------------------------------------------


def _tokens(segments: list[Segment]) -> list[str]:
    """Characters, with unquoted braces and commas marked as operators."""
    marks = {"{": shellbrace.OPEN, "}": shellbrace.CLOSE, ",": shellbrace.COMMA}
    toks: list[str] = []
    for seg in segments:
        if seg.quoted:
            toks.extend(seg.text)
        else:
            toks.extend(marks.get(ch, ch) for ch in seg.text)
    return toks


def _brace_too_large(segments: list[Segment]) -> bool:
    """``$D/x{a,b}{a,b}...``: bash still expands the braces around the unknown part; a word
    that would make too many is too large even though Anna does not expand it."""
    known = [s if s.kind == "literal" else Segment("?", True) for s in segments]
    return _brace_expand(known)[1]


def _brace_expand(segments: list[Segment]) -> tuple[tuple[str, ...], bool]:
    """(the words brace expansion makes, whether it was too large to expand)."""
    if not any(not s.quoted and s.kind == "literal" and "{" in s.text for s in segments):
        return (), False
    try:
        return shellbrace.expand(_tokens(segments)), False
    except shellbrace.TooLarge:
        return (), True
