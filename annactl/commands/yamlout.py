"""A small YAML writer for the playbooks Anna exports: every untrusted string is inert.

Plan text (commands, descriptions, ids, goals) comes from a model or a file: it is
untrusted. Two things could go wrong when it lands in a playbook:

* YAML injection: a newline, a quote or a ``: `` in a command must not end the scalar
  and start new keys or tasks. Every string is written as a double-quoted scalar in
  which only printable characters other than ``"`` and ``\\`` appear as themselves;
  everything else (line breaks of every kind, control and format characters, NEL,
  U+2028/U+2029, a BOM) is an escape sequence, so a scalar is always one line that ends
  at its closing quote.
* Templating: Ansible renders ``{{ }}`` and ``{% %}`` in task arguments. Every
  untrusted string carries the ``!unsafe`` tag, which tells Ansible never to template
  it (nor anything it is copied into). Only :class:`Template` strings — Anna's own
  expressions, never built from plan text — are written without it.

Keys are Anna's own and must be plain identifiers (checked). No PyYAML is needed to
write, so the base install does not depend on it.
"""

from __future__ import annotations

import re
from typing import Any

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_INDENT = "  "


class Template(str):
    """A string Anna wrote itself that Ansible *should* template (``when:``, ``{{ var }}``).

    Never build one from plan text: such text must stay a plain ``str`` (tagged
    ``!unsafe``)."""

    __slots__ = ()


class YamlError(ValueError):
    """The data cannot be written safely (a lone surrogate, an odd key)."""


def _printable(ch: str) -> bool:
    """Characters written as themselves: YAML's printable set minus line breaks (NEL,
    LS, PS fold or end lines inside a scalar), the BOM and everything Python calls
    unprintable (format characters such as bidi overrides)."""
    if ch in '"\\':
        return False
    return ch.isprintable() and ch not in "\x85\u2028\u2029\ufeff"


def _escape(ch: str) -> str:
    code = ord(ch)
    if 0xD800 <= code <= 0xDFFF:
        raise YamlError("the plan contains a lone surrogate, which no file can hold")
    named = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}
    if ch in named:
        return named[ch]
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def quote(text: str) -> str:
    """``text`` as a one-line double-quoted YAML scalar (no tag)."""
    return '"' + "".join(ch if _printable(ch) else _escape(ch) for ch in text) + '"'


def scalar(value: Any) -> str:
    """One scalar: strings ``!unsafe`` unless :class:`Template`; bools, ints, null."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Template):
        return quote(str(value))
    if isinstance(value, str):
        return "!unsafe " + quote(value)
    raise YamlError(f"cannot write a {type(value).__name__} as YAML")


def _key(key: object) -> str:
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise YamlError(f"not a plain key: {key!r}")
    return key


def _lines(value: Any, depth: int) -> list[str]:
    pad = _INDENT * depth
    if isinstance(value, dict):
        if not value:
            return [pad + "{}"]
        out: list[str] = []
        for key, item in value.items():
            out.extend(_entry(pad + _key(key) + ":", item, depth))
        return out
    if isinstance(value, list):
        if not value:
            return [pad + "[]"]
        out = []
        for item in value:
            out.extend(_item(pad, item, depth))
        return out
    return [pad + scalar(value)]


def _entry(head: str, item: Any, depth: int) -> list[str]:
    if isinstance(item, dict | list) and item:
        return [head, *_lines(item, depth + 1)]
    if isinstance(item, dict | list):
        return [head + (" {}" if isinstance(item, dict) else " []")]
    return [head + " " + scalar(item)]


def _item(pad: str, item: Any, depth: int) -> list[str]:
    if isinstance(item, dict) and item:
        inner = _lines(item, depth + 1)
        # "- key: value" on the first line, the rest aligned under it
        first = inner[0][len(pad) + len(_INDENT):]
        return [pad + "- " + first, *inner[1:]]
    if isinstance(item, list) and item:
        return [pad + "-", *_lines(item, depth + 1)]
    return [pad + "- " + (scalar(item) if not isinstance(item, dict | list) else
                          ("{}" if isinstance(item, dict) else "[]"))]


def dump(document: Any, *, header: str = "") -> str:
    """A whole YAML document (``---`` first; ``header`` as comment lines, made inert)."""
    comments = [f"# {quote(line)[1:-1]}" for line in header.splitlines()]
    return "\n".join(["---", *comments, *_lines(document, 0)]) + "\n"
