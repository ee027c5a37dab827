"""Two spellings bash reads that the parser does not: an extglob group (``@(etc|usr)``) and
a brace list in command position (``{rm,-rf,/}``). A command that does not parse is judged
again as the plain text these make of it, which matches at least as much as bash would."""

from __future__ import annotations

import re

# possessive: the list is cut into commas one way only, so a 4 KB ``{,,,,…`` with no closing
# brace fails in one pass instead of trying every split of it (231 ms per command before)
_BRACE_COMMAND = re.compile(r"(^|[;&|(`\n]|\$\()(\s*)\{((?:[^{}\s,]*+,)++[^{}\s,]*+)\}")


def _words(match: re.Match[str]) -> str:
    return match.group(1) + match.group(2) + " ".join(match.group(3).split(","))


_EXTGLOB = re.compile(r"[?*+@!]\(")
_EXTGLOB_GROUP = re.compile(r"[?*+@!]\([^()]*\)")


def without_extglob(command: str) -> str:
    """``/@(etc|usr)/x`` → ``/*/x``: every extglob group as a plain wildcard (matches more)."""
    for _ in range(8):
        replaced = _EXTGLOB_GROUP.sub("*", command)
        if replaced == command:
            break
        command = replaced
    return command




def has_extglob(command: str) -> bool:
    """``command`` has an extglob group's opening."""
    return _EXTGLOB.search(command) is not None


def has_brace_command(command: str) -> bool:
    """``command`` has a brace list where a command's words would be."""
    return _BRACE_COMMAND.search(command) is not None


def brace_words(command: str) -> str:
    """Every brace list in command position as the words bash makes of it."""
    return _BRACE_COMMAND.sub(_words, command)
