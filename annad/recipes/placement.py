"""Where a recipe placeholder may stand: as a word (or part of one) bash reads unquoted.

A value is filled in as one shell-quoted word (``shlex.quote``: ``'$(id)'``). That quoting
holds only where bash reads quotes: inside double quotes the single quotes are literal and
``"{msg}"`` becomes ``"'$(id)'"``, which runs ``id``; inside single quotes, ``$'...'``, an
unquoted heredoc, arithmetic or a comment it breaks or means something else. So the
template is parsed with the real bash grammar (a sentinel word in each placeholder's
place) and a placeholder in any of those contexts is refused when the recipe is loaded.
A command substitution starts fresh quoting: ``"$(printf %s {msg})"`` is allowed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.shell.grammar import bash_parser

if TYPE_CHECKING:
    from tree_sitter import Node

_QUOTING = {"string": "double quotes", "raw_string": "single quotes",
            "ansi_c_string": "$'...' quotes", "translated_string": '$"..." quotes',
            "heredoc_body": "a here-document", "heredoc_content": "a here-document",
            "comment": "a comment", "arithmetic_expansion": "arithmetic",
            "arithmetic_expression": "arithmetic", "compound_statement_arithmetic": "arithmetic",
            "regex": "a [[ =~ ]] pattern", "test_command": "a [[ ]] test"}
"""Node types in which a shell-quoted value does not stay one literal word."""
_FRESH = frozenset({"command_substitution", "process_substitution"})
"""Node types that start a new quoting context."""


def misplaced(template: str, placeholders: list[tuple[int, int]]) -> str | None:
    """Why one of the placeholders (``(start, end)`` character spans in ``template``) stands
    where its quoted value would not be one literal word; None when all are words."""
    if not placeholders:
        return None
    sentinel = _sentinel(template)
    pieces: list[str] = []
    starts: list[int] = []
    last = 0
    for start, end in placeholders:
        pieces.append(template[last:start])
        starts.append(len("".join(pieces).encode("utf-8")))
        pieces.append(sentinel)
        last = end
    pieces.append(template[last:])
    source = "".join(pieces).encode("utf-8")
    tree = bash_parser().parse(source)
    for offset in starts:
        node = tree.root_node.descendant_for_byte_range(offset, offset + len(sentinel))
        why = _context(node)
        if why is not None:
            return why
    return None


def _context(node: Node | None) -> str | None:
    while node is not None:
        if node.type in _FRESH:
            return None
        if node.type in _QUOTING:
            return _QUOTING[node.type]
        if node.type == "compound_statement" and node.children and \
                node.children[0].type == "((":
            return "arithmetic"  # ``(( {v} ))``
        if node.type == "command" and _name(node) in ("let", "eval"):
            return f"the words of {_name(node)} (evaluated again)"
        if node.type == "ERROR":
            return "text bash cannot parse"
        node = node.parent
    return None


def _sentinel(template: str) -> str:
    """A plain word that occurs nowhere in ``template``."""
    n = 0
    while f"ANNAPARAM{n}X" in template:
        n += 1
    return f"ANNAPARAM{n}X"


def _name(command: Node) -> str:
    name = command.child_by_field_name("name")
    return (name.text or b"").decode("utf-8", "replace") if name is not None else ""
