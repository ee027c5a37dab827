"""What a path word's expansions stand for: the marker roots of resolved paths, bash's tilde
prefixes, and variables replaced by the values known for them.

Used by :func:`anna_common.risk.paths.resolve`; the values come from
:mod:`anna_common.risk.knownvars`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anna_common.shell.words import Word

HOME = "~"
"""Marker root for the caller's home directory in resolved paths."""
UNKNOWN = "$?"
"""Marker root for a path that starts with an unknown variable or substitution."""
CWD = "$+"
"""Marker root for the working directory a variable was assigned in (``x=~+``): resolved
against every directory the command may be in, like a relative path."""


_DIR_STACK = re.compile(r"[+-]?[0-9]+|-")


def tilde_prefix(text: str, cwd: str | None) -> str:
    """Bash's tilde prefix (up to the first ``/``): ``~`` the home, ``~+`` (``~0``, ``~+0``)
    the working directory (``cwd``; None is the home, where a user step runs), ``~-`` and
    ``~N`` the previous directory and the directory stack (unknown: Anna does not follow
    them), ``~root`` /root, ``~user`` that user's home."""
    prefix, slash, rest = text[1:].partition("/")
    if prefix == "":
        return HOME + slash + rest
    if prefix in ("+", "0", "+0"):
        base = cwd if cwd is not None else HOME
    elif _DIR_STACK.fullmatch(prefix):
        base = UNKNOWN
    elif prefix == "root":
        base = "/root"
    else:
        base = "/home/" + prefix  # ~user: another user's home
    if base == "/" and slash:
        return "/" + rest
    return base + slash + rest


_VAR_SEGMENT = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


def substitute(word: Word, known: dict[str, str], home: str | None) -> tuple[str, bool]:
    """Replace expansions by what is known: assigned values (see
    :mod:`anna_common.risk.knownvars`), ``$HOME`` → ``~`` while nothing changes it, else
    unknown. Also says whether an unquoted known value will be globbed (``x='/e*'; $x``)."""
    parts: list[str] = []
    spread = False
    for index, seg in enumerate(word.segments):
        value = None
        if seg.kind == "var" and _plain_expansion(seg.text):
            value = known.get(seg.name or "")
            if value is None and seg.name == "HOME":
                value = HOME
        if index and value is not None and value.startswith(HOME) and home:
            value = home.rstrip("/") + value[len(HOME):]  # ``/mnt$HOME``: /mnt/home/alice
        if seg.kind == "literal":
            named = not index and not word.tilde and seg.text.startswith(("~", "$"))
            parts.append("./" + seg.text if named else seg.text)  # ``"~/$x"``: a file ~
        elif value is None or (index and value.startswith((HOME, CWD))):
            parts.append(UNKNOWN)  # a home or working directory in mid-word: a long path
        elif not seg.quoted and (any(c in value for c in " \t\n") or "IFS" in known):
            parts.append(UNKNOWN)  # unquoted, it is split into several words
        else:
            spread = spread or (not seg.quoted and any(c in value for c in "*?["))
            parts.append(value)
    text = "".join(parts)
    if UNKNOWN in text and not text.startswith(UNKNOWN):
        # an unknown part after a literal prefix: keep the prefix, the rest may be anything
        prefix = text.split(UNKNOWN, 1)[0]
        return prefix + "*", True
    return text, spread


def _plain_expansion(text: str) -> bool:
    """``$X`` or ``${X}`` only: ``${X:-/}`` and friends may yield something else."""
    match = _VAR_SEGMENT.match(text)
    return match is not None and match.end() == len(text)
