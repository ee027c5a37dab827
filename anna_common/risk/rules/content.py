"""What text a command writes, when Anna can know it before it runs.

``echo``/``printf`` output, heredocs and here-strings, what ``cat``/``tee``/``dd`` pass on
from their standard input, the few transforms a disguise likes (``rev``, ``base64 -d``,
``tr``), and a file written earlier in the same command and then copied, moved or linked
into place. Each answer is a list of candidate texts (every one of them may be what lands
in the file); None means the content cannot be known, and the caller keeps its other
verdicts (a write to a security file is HIGH whatever it holds).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING

from anna_common.risk.writes import CP_VALUES, write_targets
from anna_common.shell.argv import dest_and_sources, operands

if TYPE_CHECKING:
    from anna_common.risk.rules.base import Out
    from anna_common.shell.grammar import Analysis, SimpleCommand
    from anna_common.shell.words import Word

MAX_DEPTH = 6
"""How far content is followed through pipes and earlier files."""

_FORMAT = re.compile(r"%(?:%|[-+ #0]*\d*(?:\.\d+)?[sbdiucxXoq])")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|0?[0-7]{1,3}|[nt\\abfrve'\"])")
_SIMPLE = {"n": "\n", "t": "\t", "\\": "\\", "a": "\a", "b": "\b", "f": "\f", "r": "\r",
           "v": "\v", "e": "\x1b", "'": "'", '"': '"'}


def unescape(text: str) -> str:
    """``echo -e``/``printf`` escapes: ``\\n``, ``\\x41``, ``\\101``."""
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] == "x":
            return chr(int(code[1:], 16))
        if code[0].isdigit():
            return chr(int(code, 8) & 0xFF)
        return _SIMPLE.get(code, code)
    return _ESCAPE.sub(one, text)


def word_text(word: Word, out: Out) -> str:
    """A word's text with variables assigned literally earlier in the command filled in."""
    text = " ".join(word.values)
    for name in word.variables:
        value = out.known.get(name)
        if value is not None and not value.startswith(("$?", "$+")):
            text = text.replace("${" + name + "}", value).replace("$" + name, value)
    return text


def _printf(words: list[str]) -> str:
    if not words:
        return ""
    fmt, args = words[0], words[1:]
    if not _FORMAT.search(fmt):
        return unescape(fmt)
    pieces: list[str] = []
    while True:
        def fill(match: re.Match[str]) -> str:
            if match.group(0) == "%%":
                return "%"
            return unescape(args.pop(0)) if args else ""
        pieces.append(unescape(_FORMAT.sub(fill, fmt)))
        if not args:
            return "".join(pieces)


def output_of(cmd: SimpleCommand, analysis: Analysis, out: Out,
              depth: int = 0) -> list[str] | None:
    """What ``cmd`` prints on standard output, when known."""
    prog = cmd.program or ""
    if depth > MAX_DEPTH:
        return None
    texts = [word_text(w, out) for w in cmd.args]
    if prog == "echo":
        escapes = any(t.startswith("-") and "e" in t for t in texts[:2])
        words = [t for t in texts if not (t.startswith("-") and set(t[1:]) <= set("neE"))]
        line = " ".join(words)
        return [line, unescape(line)] if escapes or "\\" in line else [line]
    if prog == "printf":
        return [_printf([t for t in texts if t != "--"])]
    if prog in ("tee", "dd", "sponge") or (prog in ("cat", "head", "tail") and
                                             not operands(cmd.args)):
        return stdin_of(cmd, analysis, out, depth + 1)
    if prog == "cat":
        found: list[str] = []
        for word in operands(cmd.args):
            known = file_content(word, cmd, analysis, out, depth + 1)
            if known is None:
                return None
            found.extend(known)
        return found
    return _transformed(cmd, texts, analysis, out, depth)


def _transformed(cmd: SimpleCommand, texts: list[str], analysis: Analysis, out: Out,
                 depth: int) -> list[str] | None:
    """``rev``, ``base64 -d`` and ``tr SET1 SET2``: a disguise Anna can undo."""
    prog = cmd.program or ""
    if prog not in ("rev", "base64", "tr") or (operands(cmd.args)[:1] and prog != "tr"):
        return None
    source = stdin_of(cmd, analysis, out, depth + 1)
    if source is None:
        return None
    if prog == "rev":
        return ["\n".join(line[::-1] for line in text.split("\n")) for text in source]
    if prog == "base64":
        if not any(t in ("-d", "--decode", "-D") for t in texts):
            return None
        try:
            return [base64.b64decode(t.strip(), validate=False).decode("utf-8", "replace")
                    for t in source]
        except (binascii.Error, ValueError):
            return None
    sets = [t for t in texts if not t.startswith("-")]
    if len(sets) != 2 or any(t.startswith("-") for t in texts):
        return None
    first, second = _tr_set(sets[0]), _tr_set(sets[1])
    if not first or not second:
        return None
    second += second[-1] * max(0, len(first) - len(second))
    table = str.maketrans(first, second[:len(first)])
    return [t.translate(table) for t in source]


def _tr_set(spec: str) -> str:
    chars: list[str] = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            chars.extend(chr(c) for c in range(ord(spec[i]), ord(spec[i + 2]) + 1))
            i += 3
        else:
            chars.append(spec[i])
            i += 1
    return "".join(chars)[:512]


def stdin_of(cmd: SimpleCommand, analysis: Analysis, out: Out,
             depth: int = 0) -> list[str] | None:
    """What reaches ``cmd`` on standard input, when known."""
    stdin = cmd.stdin
    if depth > MAX_DEPTH:
        return None
    if stdin.kind in ("heredoc", "herestring") and stdin.text is not None:
        return [word_text(stdin.text, out)]
    if stdin.kind == "pipe" and stdin.producers:
        found: list[str] = []
        for producer in stdin.producers:
            text = output_of(producer, analysis, out, depth + 1)
            if text is None:
                return None
            found.extend(text)
        return ["\n".join(found), *found]
    if stdin.kind == "file" and stdin.text is not None:
        return file_content(stdin.text, cmd, analysis, out, depth + 1)
    return None


def file_content(word: Word, before: SimpleCommand, analysis: Analysis, out: Out,
                 depth: int = 0) -> list[str] | None:
    """Content written to the file ``word`` names by a command earlier than ``before``."""
    if word.text in ("/dev/stdin", "-"):
        return stdin_of(before, analysis, out, depth + 1)
    wanted = {p.path for p in out.paths(word)}
    found: list[str] = []
    for cmd in analysis.commands:
        if cmd is before:
            break
        for target in write_targets(cmd):
            if wanted & {p.path for p in out.paths(target.word)}:
                text = written_by(cmd, target.word, analysis, out, depth + 1)
                if text is not None:
                    found.extend(text)
    return found or None


def written_by(cmd: SimpleCommand, target: Word, analysis: Analysis, out: Out,
               depth: int = 0) -> list[str] | None:
    """What ``cmd`` puts into ``target`` (a redirection, ``tee``, ``dd of=``, ``cp``...)."""
    if depth > MAX_DEPTH:
        return None
    if any(r.target is target for r in cmd.redirects):
        return output_of(cmd, analysis, out, depth + 1)
    prog = cmd.program or ""
    # only dd reads ``if=``: looked for in every command's words, for each of its targets,
    # it made ``rm`` of many globs quadratic
    source = next((w.after(3) for w in cmd.args if w.text.startswith("if=")),
                  None) if prog == "dd" else None
    if source is not None:
        return file_content(source, cmd, analysis, out, depth + 1)
    if prog in ("tee", "dd", "sponge"):
        return stdin_of(cmd, analysis, out, depth + 1)
    if prog in ("cp", "install", "mv", "ln"):
        _, sources = dest_and_sources(cmd.args, CP_VALUES)
        found: list[str] = []
        for source in sources:
            text = file_content(source, cmd, analysis, out, depth + 1)
            if text is not None:
                found.extend(text)
        return found or None
    return None


__all__ = ["file_content", "output_of", "stdin_of", "unescape", "word_text", "written_by"]
