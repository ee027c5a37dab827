"""Variable assignments and declarations, found while walking a command.

A mixin of the analyser's walker (:mod:`anna_common.shell.grammar`): ``x=1``, ``a[i]=v``,
``a=([k]=v ...)``, ``declare``/``local``/``export``/``readonly``/``unset``. Subscripts are
recorded as arithmetic (bash evaluates them, and runs any ``$(...)`` in them), and a variable
given a value that is not a plain number or name is recorded as tainted
(:mod:`anna_common.shell.arith`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.shell.arith import plain_value, subscript_index
from anna_common.shell.model import Analysis, SimpleCommand
from anna_common.shell.words import Word, WordBuilder

if TYPE_CHECKING:
    from tree_sitter import Node

WORD_TYPES = frozenset({
    "word", "string", "raw_string", "ansi_c_string", "translated_string", "concatenation",
    "simple_expansion", "expansion", "command_substitution", "process_substitution",
    "arithmetic_expansion", "number", "brace_expression", "extglob_pattern", "regex",
})
"""Tree-sitter node types that are shell words."""

_WORD_TYPES = WORD_TYPES

_NAMEREF_KEYWORDS = frozenset({"declare", "typeset", "local"})
"""Builtins whose ``-n`` makes a name reference (``declare -n ref=PATH``)."""

_STRAIGHT = frozenset({"program", "compound_statement", "variable_assignments",
                       "declaration_command", "redirected_statement"})
"""Statements whose children all run, in order, in the shell itself (a ``list`` runs only its
first part for sure; loops, branches, functions, subshells and pipelines may not run a part,
or run it in another process)."""


def runs_for_sure(node: Node) -> bool:
    """``node`` runs, once, in the top-level shell before anything that follows it: it is not
    inside a branch, a loop, a function, a subshell, a pipeline or the right of ``&&``/``||``."""
    child, parent = node, node.parent
    while parent is not None:
        after = child.next_sibling
        if after is not None and after.type == "&":
            return False  # ``x=1 &`` runs in a background subshell
        if parent.type == "list":
            if not parent.named_children or parent.named_children[0] != child:
                return False
        elif parent.type not in _STRAIGHT:
            return False
        child, parent = parent, parent.parent
    return True


class Assignments:
    """Mixin: assignments and declaration builtins."""

    result: Analysis
    depth: int
    scope: int
    _words: WordBuilder

    def _emit(self, cmd: SimpleCommand) -> None:  # provided by the walker
        raise NotImplementedError

    def _assignments(self, node: Node) -> None:
        targets = [node] if node.type == "variable_assignment" else node.named_children
        for assign in targets:
            name = ""
            value: Word | None = None
            if any(child.type == "+=" for child in assign.children):
                self.result.appended.append(self._name_of(assign))
            for child in assign.named_children:
                if child.type in ("variable_name", "subscript") and not name:
                    name = (child.text or b"").decode("utf-8", "replace")
                    if child.type == "subscript":
                        # a[$(cmd)]=1 runs cmd when the subscript is evaluated
                        self._words._scan_substitutions(child)
                elif child.type in _WORD_TYPES:
                    value = self._words.build(child)
                elif child.type == "array":
                    self._array(child)
            end = assign.end_byte if runs_for_sure(assign) else None
            self._record_assignment(name, value or Word.of(""), end)

    @staticmethod
    def _name_of(assign: Node) -> str:
        for child in assign.named_children:
            if child.type in ("variable_name", "subscript"):
                return (child.text or b"").decode("utf-8", "replace").split("[", 1)[0]
        return ""

    def _array(self, node: Node) -> None:
        for item in node.named_children:
            word = self._words.build(item)
            if word.text.startswith("[") and "]=" in word.text:
                # ([index]=value): the index of an indexed array is arithmetic
                self.result.arithmetic.append(word.text[1 : word.text.index("]=")])

    def _record_assignment(self, name: str, value: Word, end: int | None = None) -> None:
        base = name.split("[", 1)[0]
        refs = self.result.namerefs
        if refs.get(base) == "":
            refs[base] = value.text  # ``declare -n r; r=PATH``: the first value is the target
        elif base in refs:
            name = refs[base] + name[len(base):]  # ``r=v`` assigns to the variable r names
        index = subscript_index(name)
        if index is not None:
            self.result.arithmetic.append(index)
        if not (value.literal and plain_value(value.text)):
            self.result.tainted.append(name.split("[", 1)[0])
        self.result.assignments.append((name, value))
        if end is not None:
            self.result.definite.append((self.scope, end, name, value))

    def _declaration(self, node: Node, origin: str) -> list[SimpleCommand]:
        keyword = (node.children[0].text or b"").decode() if node.children else "declare"
        args: list[Word] = []
        nameref = keyword in _NAMEREF_KEYWORDS and self._nameref_flag(node)
        for child in node.named_children:
            if child.type == "variable_assignment":
                self._assignments(child)
                args.append(Word.of((child.text or b"").decode("utf-8", "replace")))
            elif child.type in _WORD_TYPES or child.type == "variable_name":
                args.append(self._words.build(child))
        if nameref:  # after the loop: ``r=PATH`` here sets the reference, not PATH
            self._namerefs(node)
        cmd = SimpleCommand(program=keyword, name=Word.of(keyword), args=args, origin=origin,
                            depth=self.depth, start=node.start_byte, scope=self.scope)
        self._emit(cmd)
        return [cmd]


    @staticmethod
    def _nameref_flag(node: Node) -> bool:
        """``declare -n``, ``local -gn``: the names declared are references to others."""
        for child in node.named_children:
            text = (child.text or b"").decode("utf-8", "replace")
            if child.type == "word" and text.startswith("-") and "n" in text[1:]:
                return True
        return False

    def _namerefs(self, node: Node) -> None:
        """Record each ``ref=target`` (or a bare ``ref``, whose first value names its target):
        bash reads and assigns ``target`` wherever ``ref`` is written."""
        for child in node.named_children:
            text = (child.text or b"").decode("utf-8", "replace")
            if child.type == "variable_assignment":
                ref, _, target = text.partition("=")
                self.result.namerefs[ref] = target.strip("'\"")
            elif child.type == "variable_name" or (child.type == "word" and
                                                   not text.startswith("-")):
                self.result.namerefs.setdefault(text, "")
