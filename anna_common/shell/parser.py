"""The tree-sitter-bash parser, one per thread (parsers are not thread-safe)."""

from __future__ import annotations

import threading

import tree_sitter_bash
from tree_sitter import Language, Parser

_LANGUAGE = Language(tree_sitter_bash.language())
_local = threading.local()


def bash_parser() -> Parser:
    """This thread's tree-sitter-bash parser (parsers are not thread-safe; one per thread)."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = Parser(_LANGUAGE)
        _local.parser = parser
    return parser
