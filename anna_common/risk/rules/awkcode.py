"""What an awk program does besides printing: run commands or write files.

awk writes with ``print > FILE`` / ``print >> FILE`` and runs commands with ``system()``,
``print | CMD``, ``CMD | getline`` and gawk's ``|&`` coprocesses; ``@load``/``@include``
bring in code from elsewhere. Strings and regular expressions are blanked out first, so a
``>`` or ``|`` inside them (``/a|b/``, ``"x > y"``) is not mistaken for one, and a ``>``
inside parentheses (``print ($1 > 5)``) is a comparison, not a redirection.
"""

from __future__ import annotations

import re

_PRINT = re.compile(r"\bprintf?\b")
_RUNS = re.compile(r"\bsystem\s*\(|@load\b|@include\b|\|&")


def awk_effects(program: str) -> tuple[bool, bool]:
    """``(runs commands, writes files)`` for an awk program text. Unreadable: both."""
    clean = _blank_literals(program)
    if clean is None:
        return True, True
    runs = bool(_RUNS.search(clean)) or bool(re.search(r"(?<!\|)\|(?!\|)", clean))
    return runs, _print_redirects(clean)


def _blank_literals(text: str) -> str | None:
    """The program with string and regex literals emptied; None if one is unterminated."""
    out: list[str] = []
    i = 0
    last = ""
    while i < len(text):
        ch = text[i]
        if ch == "#":  # a comment runs to the end of the line
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if ch == '"' or (ch == "/" and not (last.isalnum() or (last and last in "_)]$"))):
            end = _literal_end(text, i)
            if end < 0:
                return None
            out.append(ch + ch)
            last = ch
            i = end + 1
            continue
        out.append(ch)
        if not ch.isspace():
            last = ch
        i += 1
    return "".join(out)


def _literal_end(text: str, start: int) -> int:
    quote = text[start]
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i
        if text[i] == "\n":
            return -1
        i += 1
    return -1


def _print_redirects(clean: str) -> bool:
    for match in _PRINT.finditer(clean):
        depth = 0
        for ch in clean[match.end():]:
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif ch in ";}\n":
                break
            elif ch == ">" and depth <= 0:
                return True
    return False
