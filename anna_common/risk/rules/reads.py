"""Reads that are not harmless: secret material, raw block devices, raw memory.

Reading ``/etc/shadow`` or a private key is HIGH; reading a raw disk bypasses every file
permission (HIGH); touching ``/dev/mem``, ``/dev/kmem`` or ``/dev/port`` is a hard ban.
Wildcards are judged as every protected path they can match (``cat /e?c/shadow``). A command
that reads a whole tree (``grep -r``, ``tar c``, ``cp -r``, ``find D -exec cat {} +``, ``find D
| xargs cat``) reads every secret below it (``/etc`` holds ``/etc/shadow``); a reader whose file
is only known at run time (``cat "$f"``) could read any: it asks (MEDIUM).
"""

from __future__ import annotations

import fnmatch
import posixpath
from functools import lru_cache
from typing import TYPE_CHECKING

from anna_common.risk import paths
from anna_common.risk.rules.base import Code, Out
from anna_common.risk.rules.readonly import READ_ONLY
from anna_common.risk.writes import operands
from anna_common.shell.argv import option_values, options
from anna_common.shell.nested import found_by
from anna_common.shell.words import Word

if TYPE_CHECKING:
    from anna_common.shell.grammar import SimpleCommand

_METADATA_ONLY = frozenset({"ls", "stat", "chmod", "chown", "chgrp", "test", "[", "[[", "file",
                            "touch", "namei", "getfacl", "setfacl", "lsattr", "realpath",
                            "readlink", "basename", "dirname", "mkdir", "du"})

_RAW_MEMORY = frozenset({"/dev/port", "/dev/mem", "/dev/kmem"})
_COPIERS = frozenset({"cp", "gzip", "xz", "zstd", "pv", "nc", "ncat", "socat", "scp", "rsync",
                      "tar", "bsdtar", "base64", "openssl", "curl"})
"""Programs that copy, pack or send the files they are given."""
_GENERIC_READERS = READ_ONLY | _COPIERS


_CONTENT_READERS = frozenset({
    "cat", "tac", "head", "tail", "less", "more", "most", "nl", "od", "xxd", "hexdump", "hd",
    "strings", "base64", "base32", "basenc", "grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack",
    "sort", "uniq", "wc", "cut", "paste", "join", "diff", "diff3", "sdiff", "colordiff", "cmp",
    "comm", "jq", "yq", "column", "fold", "fmt", "pr", "rev", "iconv", "bat", "batcat", "sed",
    "awk", "gawk", "mawk", "zcat", "bzcat", "xzcat", "zstdcat", "dd", "view", "bzip2", "zip", "ln",
}) | _COPIERS
"""Programs that print or copy the content of the files they are given."""

_GREP_RECURSIVE = frozenset({"-r", "-R", "--recursive", "--dereference-recursive"})
_RECURSIVE = {
    **dict.fromkeys(("grep", "egrep", "fgrep"), _GREP_RECURSIVE),
    **dict.fromkeys(("cp", "rsync"), frozenset({"-r", "-R", "-a", "--recursive", "--archive"})),
    "scp": frozenset({"-r"}), "zip": frozenset({"-r", "--recurse-paths"}),
    **dict.fromkeys(("diff", "colordiff"), frozenset({"-r", "--recursive"})),
}
"""Options that make a program read whole directories."""

_NOT_TREE_SECRETS = frozenset({"/var/log/btmp"})
"""Secrets a tree read is not judged by: the binary failed-login log under ``/var/log``
(``grep -r error /var/log`` is an everyday diagnostic; reading btmp itself stays HIGH)."""


def _trees(cmd: SimpleCommand) -> list[Word]:
    """The directories whose whole content ``cmd`` reads."""
    program, args = cmd.program, cmd.args
    opts = options(args)
    first = args[0].text if args and args[0].literal else ""
    if program in ("tar", "bsdtar") and (opts & {"--create", "-c"} or (
            not first.startswith("-") and "c" in first)):
        return _tar_sources(args)
    if program in ("rg", "ag", "ack") or opts & _RECURSIVE.get(program or "", frozenset()):
        return operands(args)
    if program == "ln":  # a link to /etc is a way into all of it: ``cat /tmp/e/shadow``
        return operands(args)[:-1]
    return []


def _tar_sources(args: list[Word]) -> list[Word]:
    """What ``tar c`` archives: its operands, relative ones below ``-C DIR`` when given."""
    bases = option_values(args, "-C", "--directory")
    base = bases[-1] if bases else None
    found: list[Word] = []
    for word in operands(args):
        below = base is not None and word is not base and word.literal and base.literal and \
            not word.text.startswith(("/", "~"))
        found.append(Word.of(f"{base.text.rstrip('/')}/{word.text}") if below and base else word)
    return found


_SECRET_PARTS = tuple((pattern, tuple(p for p in pattern.split("/") if p))
                      for pattern in paths.SECRET_PATTERNS)
"""Each secret pattern with its path components, split once."""


def _secret_below(directory: str) -> str | None:
    """A secret file pattern inside ``directory`` (``/etc`` holds ``/etc/shadow``), if any:
    the first in the table's order. Asked for each place a command reads whole (hundreds of
    globs: issue 38 item 4), so the patterns are looked through by their first name first,
    and each name of ``directory`` is matched once against each name of theirs."""
    if not directory.startswith(("/", paths.HOME)):
        return None
    parts = [p for p in directory.split("/") if p]
    if not parts:
        return _TREE_PARTS[0][1] if _TREE_PARTS else None
    known: dict[tuple[int, str], bool] = {}

    def may_be(index: int, name: str) -> bool:
        found = known.get((index, name))
        if found is None:
            found = known[index, name] = _component_may_be(parts[index], name)
        return found

    for _, pattern, pparts in _below_top(parts[0]):
        if len(parts) < len(pparts) and all(may_be(i, pparts[i]) for i in range(1, len(parts))):
            return pattern
    return None


@lru_cache(maxsize=256)  # a command's top names: few, bounded memory (issue 22)
def _below_top(top: str) -> list[tuple[int, str, tuple[str, ...]]]:
    """The anchored secret patterns whose first name ``top`` can be, in table order."""
    return sorted(entry for name, group in _TREE_BY_TOP.items()
                  if _component_may_be(top, name) for entry in group)


_TREE_PARTS = tuple((i, pattern, parts) for i, (pattern, parts) in enumerate(_SECRET_PARTS)
                    if pattern.startswith(("/", "~/")) and pattern not in _NOT_TREE_SECRETS)
"""The secret patterns a directory can hold (anchored), numbered in table order."""
_TREE_BY_TOP: dict[str, list[tuple[int, str, tuple[str, ...]]]] = {}
for _entry in _TREE_PARTS:
    _TREE_BY_TOP.setdefault(_entry[2][0], []).append(_entry)


def _component_may_be(word: str, pattern: str) -> bool:
    """A path component of the command (maybe a glob) can name one of a secret pattern. A
    glob's leading wildcard does not match a dot (bash's default): ``~/*`` misses ``~/.ssh``."""
    if word == pattern or fnmatch.fnmatchcase(word, pattern):
        return True
    return fnmatch.fnmatchcase(pattern, word) and not (pattern.startswith(".") and
                                                        not word.startswith("."))


_SCRIPT_FIRST = frozenset({"grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "sed", "awk",
                           "gawk", "mawk", "jq", "yq"})
"""Readers whose first operand is a pattern or program, not a file (unless -e/-f name it)."""
_SCRIPT_OPTIONS = frozenset({"-e", "-f", "--regexp", "--file", "--expression", "--from-file"})


def _files_read(cmd: SimpleCommand) -> list[Word]:
    """The operands a content reader reads as files."""
    found = operands(cmd.args)
    if cmd.program in _SCRIPT_FIRST and not options(cmd.args) & _SCRIPT_OPTIONS:
        found = found[1:]
    return found


def _could_be_secret(path: str) -> bool:
    """A path only partly known (``$?/…``) whose known end could be a secret's
    (``$D/shadow`` could be ``/etc/shadow``; ``$D/hypr/hyprland.conf`` cannot)."""
    if not paths.is_unknown_root(path):
        return False
    tail = [part for part in path[len(paths.UNKNOWN):].split("/") if part not in ("", ".")]
    if ".." in tail:  # ``$D/../etc/shadow``: only what follows the last .. is known
        tail = tail[len(tail) - tail[::-1].index(".."):]
    if not tail or paths.UNKNOWN in tail[-1]:
        return True
    return any(_ends_like(tail, pattern, parts) for pattern, parts in _SECRET_PARTS)


def _partly_known(word: Word) -> bool:
    """A path whose middle or end is only known at run time (``/etc/$X``, ``/root/$D``): the
    unknown part may hold slashes, so it can name any secret; only the literal tail after it
    can rule that out, as for ``$D/…`` (``/proc/$PID/status`` is no secret)."""
    if word.literal or not word.segments or word.segments[0].kind != "literal" or \
            not word.segments[0].text.startswith("/"):
        return False  # literal, or an unknown start (judged by :func:`_could_be_secret`)
    last = max(i for i, seg in enumerate(word.segments) if seg.kind != "literal")
    tail = "".join(seg.text for seg in word.segments[last + 1:])
    return _could_be_secret(paths.UNKNOWN + ("/" + tail.lstrip("/") if tail else ""))


def _ends_like(tail: list[str], pattern: str, parts: tuple[str, ...]) -> bool:
    """The last components of ``pattern`` (split into ``parts``) can be ``tail`` (an unknown
    part matches any)."""
    pairs = list(zip(reversed(tail), reversed(parts), strict=False))
    if pattern.startswith(("/", "~/")) and len(tail) > len(parts):
        return False  # longer than an anchored pattern: cannot be it
    if parts[-1:] == ("*",) and len(tail) < 2:
        return False  # (a bare name says nothing of ``/root/.ssh/*``: its folder does)
    return all(paths.UNKNOWN in t or fnmatch.fnmatchcase(t, q) or fnmatch.fnmatchcase(q, t)
               for t, q in pairs)


def _in_home(path: str) -> str:
    """A relative path as a step with no ``cd`` sees it: from the home, where user steps run
    (steps that need root are judged again from ``/``)."""
    if not paths.is_relative(path):
        return path
    rel = posixpath.normpath(path)
    if rel == ".." or rel.startswith("../"):
        return "/"  # above the home: Anna cannot tell how far, so anywhere
    return paths.HOME if rel == "." else f"{paths.HOME}/{rel}"


def _listing_output(word: Word) -> bool:
    """The word is a command substitution alone (``$(find …)``, backquotes)."""
    return len(word.segments) == 1 and word.segments[0].kind == "subst" and \
        word.segments[0].text.startswith(("$(", "`"))


def _tree_secrets(cmd: SimpleCommand, out: Out) -> bool:
    """HIGH for a read of a whole tree that holds secrets; True when found."""
    runtime = cmd.found_below if any(not w.literal for w in cmd.args) else []
    if any(_listing_output(w) for w in cmd.args):
        runtime = runtime + found_by(cmd.substitutions)  # cat $(find /etc -type f)
    for word in _trees(cmd) + runtime:
        for place in out.paths(word):
            where = _in_home(place.path) if out.cwd is None else place.path
            hit = where if out.once(("secret", where), paths.is_secret, where) else out.once(
                ("secret below", where), _secret_below, where.rstrip("/") or "/")
            if hit:
                out.high(Code.SECRET_READ, f"{cmd.program} reads what is below {where}, "
                         f"secret material included ({hit})", target=where,
                         system=not paths.in_home(where))
                return True
    return False


_LIST_OPTIONS = frozenset({"--files-from", "--files0-from", "--from-file", "--exclude-from",
                           "--include-from", "--filter-from"})
"""Options naming a file whose lines a program reads (and echoes back in its errors)."""
_SHORT_LIST = {"file": "-f", "tar": "-T", "bsdtar": "-T", "dd": "if"}


def _read_by_option(cmd: SimpleCommand) -> list[Word]:
    """Files read through an option rather than as operands: ``file -f F``, ``tar -T F``,
    ``--files-from=F``, ``dd if=F``, ``curl file:///F``."""
    found: list[Word] = []
    args = cmd.args
    for i, word in enumerate(args):
        name, eq, _ = word.text.partition("=")
        if name in _LIST_OPTIONS or name == _SHORT_LIST.get(cmd.program or ""):
            if eq:
                found.append(word.after(len(name) + 1))
            elif i + 1 < len(args) and name.startswith("-"):
                found.append(args[i + 1])
        elif word.text.lower().startswith("file://"):
            found.append(word.after(len("file://")))
    return found


def secrets(cmd: SimpleCommand, out: Out) -> None:
    """Reading secrets, raw block devices (which bypass every file permission) or raw memory."""
    lists = _read_by_option(cmd)
    if cmd.program in _METADATA_ONLY and not lists:
        return
    if cmd.program in _CONTENT_READERS and _tree_secrets(cmd, out):
        return
    inputs = [r.target for r in cmd.redirects if r.op == "<" and r.target is not None] + lists
    words = inputs if cmd.program in _METADATA_ONLY else operands(cmd.args) + inputs
    for word in words:
        if not word.literal and not word.variables:
            continue
        for place in out.paths(word):
            if place.path in _RAW_MEMORY:
                out.ban(Code.BAN_DISK_WRITE, f"{cmd.program} touches raw memory or I/O ports "
                        f"({place.path})", target=place.path)
                return
            if paths.is_device(place.path) and cmd.program in _GENERIC_READERS:
                out.high(Code.SECRET_READ, f"{cmd.program} reads the raw device {place.path}, "
                         "bypassing every file permission", target=place.path, system=True)
                return
            if out.once(("secret", place.path), paths.is_secret, place.path):
                root_only = place.path.startswith(("/etc/", "/root/", "/var/lib/"))
                out.high(Code.SECRET_READ, f"{cmd.program} reads secret material "
                         f"({place.path})", target=place.path, system=root_only)
                return
    words = _files_read(cmd) + inputs if cmd.program in _CONTENT_READERS else inputs
    for word in words:
        if cmd.found_below and word.segments[:1] and word.segments[0].kind == "subst":
            continue  # run-time words of find/xargs: judged by where they are found
        if not word.literal and word.text.startswith(("<(", ">(")):
            continue  # a pipe from a command judged on its own
        if _listing_output(word) and found_by(cmd.substitutions):
            continue  # the files ``find``/``ls`` list: judged by where they are found
        if _partly_known(word) or any(_could_be_secret(place.path)
                                      for place in out.paths(word)):
            out.medium(Code.SECRET_READ, f"{cmd.program} reads {word.text[:60]}, a path only "
                       "known at run time: it could be secret material", target=word.text)
            return

