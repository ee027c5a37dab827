"""Which parts of a command certainly ran when the whole command exited 0.

Verification (``annad.execution.verify``) derives a postcondition only for a call that ran for
sure: ``pacman -S foo || true`` and ``pacman -S foo; echo done`` both exit 0 whether or
not pacman did its job, and that is exactly what a postcondition must catch. A call that
only *may* have run (the right side of ``||``, anything inside ``if``/``while``/``case``,
a function body, the second half of ``a && b`` when the pair itself may have failed) gets
no postcondition: it did not necessarily run, so its absence proves nothing.

Pure parsing (tree-sitter-bash), no I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.shell.grammar import SimpleCommand, analyse, bash_parser

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tree_sitter import Node

MAX_SOURCE = 16 * 1024
"""Longer commands get no postconditions (the analysis budget of a step is elsewhere)."""

_SEQUENCES = frozenset({"program", "subshell", "compound_statement"})


def certain_commands(source: str) -> list[SimpleCommand]:
    """The simple commands of ``source`` that ran whenever ``source`` exited 0, each
    analysed (wrappers such as ``sudo`` and ``env`` peeled off). Nested code (``sh -c``,
    ``eval``, substitutions) is left out: what it ran is not certain from here."""
    if len(source) > MAX_SOURCE:
        return []
    data = source.encode("utf-8")
    tree = bash_parser().parse(data)
    if tree.root_node.has_error:
        return []  # a command the grammar does not understand: derive nothing
    found: list[SimpleCommand] = []
    for node in _ran(tree.root_node, certain=True):
        text = data[node.start_byte:node.end_byte].decode("utf-8", "replace")
        found += [c for c in analyse(text).commands if c.depth == 0 and c.origin == "top"]
    return found


def _ran(node: Node, *, certain: bool) -> Iterator[Node]:
    """Command nodes that surely ran; ``certain``: this node surely exited 0 too."""
    kind = node.type
    if kind == "command":
        yield node
    elif kind in _SEQUENCES:
        statements = [c for c in node.named_children if c.type != "comment"]
        for position, child in enumerate(statements):
            after = child.next_sibling
            if after is not None and after.type == "&":
                continue  # in the background: it may still be running when the step ends
            # the exit status of a sequence is its last statement's
            yield from _ran(child, certain=certain and position == len(statements) - 1)
    elif kind == "list":
        yield from _list(node, certain=certain)
    elif kind == "pipeline":
        for child in node.named_children:
            yield from _ran(child, certain=False)
    elif kind == "redirected_statement":
        body = node.child_by_field_name("body")
        if body is not None:
            yield from _ran(body, certain=certain)
    elif kind == "negated_command":
        for child in node.named_children:
            yield from _ran(child, certain=False)
    # if/while/for/case/functions/tests: what runs inside depends on conditions


def _list(node: Node, *, certain: bool) -> Iterator[Node]:
    operands = [c for c in node.children if c.is_named and c.type != "comment"]
    operator = next((c.type for c in node.children if not c.is_named), "")
    if len(operands) != 2:
        return
    left, right = operands
    if operator == "&&":
        yield from _ran(left, certain=certain)
        if certain:  # the pair succeeded, so both halves ran (and succeeded)
            yield from _ran(right, certain=True)
    elif operator == "||":
        yield from _ran(left, certain=False)  # always runs; the right side only maybe
    elif operator == "&":  # the left side runs in the background
        yield from _ran(right, certain=certain)
    elif operator in (";", "\n"):
        yield from _ran(left, certain=False)
        yield from _ran(right, certain=certain)
