"""Where bash evaluates text as arithmetic, and whether that text is a plain literal.

Bash runs ``$(...)`` found inside arithmetic and array subscripts *when it evaluates them*,
even when the text came from single quotes, a variable or a file:
``let 'x[$(id > /tmp/p)]=1'`` runs ``id``, and so does ``[[ $x -eq 1 ]]`` when ``x`` holds
``a[$(id)]``. The analyser therefore records every arithmetic context (``(( ))``,
``$(( ))``, ``for ((;;))``, subscripts, substring offsets, the operands of ``[[ a -eq b ]]``)
and the variables that were given values Anna cannot vouch for; :func:`plain` tells a
harmless literal (``1 + 2``, ``i < 3``, ``a[0]``) from text that may run code.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tree_sitter import Node

ARITH_TEST_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
"""``[[ ]]`` operators whose operands bash evaluates as arithmetic."""

_TOKEN = re.compile(
    r"\s+|\d[\w#]*|[A-Za-z_]\w*|\$\{[A-Za-z_]\w*\}|\$[A-Za-z_]\w*|\$[#?$!]"
    r"|\*\*|[-+*/%<>=!&|^~?:,()\[\]@]"
)
_NAME = re.compile(r"[A-Za-z_]\w*")
_PLAIN_VALUE = re.compile(r"^[-+]?(?:\d[\w#]*|[A-Za-z_]\w*)?$")


def plain(text: str, tainted: Iterable[str] = ()) -> bool:
    """True when arithmetic ``text`` only holds numbers, operators and names of variables
    whose values are known to be plain (no substitution, no quoting, no run-time text)."""
    bad = set(tainted)
    body = text.replace('"', "")
    pos = 0
    for match in _TOKEN.finditer(body):
        if match.start() != pos:
            return False
        pos = match.end()
        name = _NAME.search(match.group())
        if name is not None and not match.group()[0].isdigit() and name.group() in bad:
            return False
    return pos == len(body)


def plain_value(text: str) -> bool:
    """A value that is safe to evaluate as arithmetic later: a number or a name."""
    return bool(_PLAIN_VALUE.match(text))


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def statement_arithmetic(node: Node) -> list[str]:
    """Arithmetic text of ``(( ))``, ``for (( ;; ))`` and ``[[ ]]`` statements."""
    kind = node.type
    if kind == "compound_statement":
        if node.children and node.children[0].type == "((":
            return [_text(node)[2:-2]]
        return []
    if kind == "c_style_for_statement":
        inner = [c for c in node.children if c.is_named and c.type != "do_group"]
        return [_text(c) for c in inner]
    if kind != "test_command":
        return []
    found: list[str] = []
    stack = list(node.named_children)
    while stack:
        current = stack.pop()
        ops = [c for c in current.children if c.type == "test_operator"]
        arith = current.type == "binary_expression" and ops and _text(ops[0]) in ARITH_TEST_OPS
        exists = current.type == "unary_expression" and ops and _text(ops[0]) == "-v"
        if arith or exists:
            found.extend(_text(c) for c in current.named_children if c.type != "test_operator")
        elif current.type in ("binary_expression", "unary_expression",
                              "parenthesized_expression", "negated_expression"):
            stack.extend(current.named_children)
    return [unquote(t) for t in found]


def unquote(text: str) -> str:
    """Quote removal for a context that evaluates the text afterwards (quotes hide nothing)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def loop_taint(node: Node) -> list[str]:
    """``for x in VALUES``: the loop variable when a value is not a plain number or name."""
    name = ""
    values: list[str] = []
    after_in = False
    for child in node.children:
        if child.type == "variable_name" and not name:
            name = _text(child)
        elif child.type == "in":
            after_in = True
        elif after_in and child.is_named and child.type != "do_group":
            values.append(unquote(_text(child)))
    if not name:
        return []
    if not after_in or not all(plain_value(v) for v in values):
        return [name]  # "for x; do" iterates over the positional parameters: unknown
    return []


def subscript_index(name: str) -> str | None:
    """``a[i+1]`` → ``i+1``; None for a name without a subscript."""
    if "[" not in name or not name.endswith("]"):
        return None
    return name[name.find("[") + 1 : -1]


def has_code(text: str) -> bool:
    """Text that holds a command substitution (``$(...)``, backticks, ``<(...)``)."""
    return "$(" in text or "`" in text or "<(" in text or ">(" in text
