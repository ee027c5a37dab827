"""What a simple command writes, deletes or changes on disk.

Per program, from its own argument grammar: redirections, ``rm``/``shred``/
``truncate`` targets, ``cp``/``mv``/``install``/``ln`` destinations, ``sed -i``
and ``perl -i`` files, ``tee``, ``chmod``/``chown`` targets, ``dd of=``,
download outputs, ``find -delete``. The daemon snapshots these before a step
runs; the risk rules judge them. A write whose target cannot be known is still
reported (with a non-literal word) so nothing is silently skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from anna_common.shell.argv import dest_and_sources, find_starts, operands, options
from anna_common.shell.words import Word

__all__ = ["CP_VALUES", "WriteTarget", "dest_and_sources", "operands", "options",
           "write_targets"]

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell.grammar import SimpleCommand

    Handler = Callable[[SimpleCommand], list["WriteTarget"]]


@dataclass(frozen=True, slots=True)
class WriteTarget:
    """One path a command writes."""

    word: Word
    """The path as evaluated (may hold unknown parts)."""
    how: str
    """``write``, ``append``, ``delete``, ``copy``, ``move``, ``move-source``, ``link``, ``edit``,
    ``touch``, ``mkdir``, ``chmod``, ``chown``, ``truncate``, ``shred``, ``extract``, ``format``,
    ``download``."""
    recursive: bool = False
    """Whether everything below the path is affected."""
    program: str | None = None
    """The program that writes it."""


def _recursive(args: list[Word]) -> bool:
    opts = options(args)
    return bool(opts & {"-r", "-R", "--recursive"})


_CHMOD_MODE = re.compile(r"^[-+=]?[0-7]{1,4}$|^([ugoa]*[-+=][rwxXstugo]*,?)+$")


CP_VALUES = frozenset({"-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group",
                       "-T"})
"""cp/mv/install options that take a value."""


def _redirect_targets(cmd: SimpleCommand) -> list[WriteTarget]:
    out = []
    for red in cmd.redirects:
        if red.writes and red.target is not None:
            how = "append" if red.op in (">>", "&>>") else "write"
            out.append(WriteTarget(red.target, how, program=cmd.program))
    return out


def write_targets(cmd: SimpleCommand) -> list[WriteTarget]:
    """Every path ``cmd`` writes, by its redirections and its own arguments."""
    found = _redirect_targets(cmd)
    handler = _HANDLERS.get(cmd.program or "")
    if handler is not None:
        found.extend(handler(cmd))
    elif cmd.program and cmd.program.startswith("mkfs"):
        found.extend(WriteTarget(w, "format", program=cmd.program) for w in operands(cmd.args))
    return found


def _t(cmd: SimpleCommand, words: list[Word], how: str,
       recursive: bool = False) -> list[WriteTarget]:
    return [WriteTarget(w, how, recursive, cmd.program) for w in words]


def _rm(cmd: SimpleCommand) -> list[WriteTarget]:
    return _t(cmd, operands(cmd.args), "delete", _recursive(cmd.args))


def _plain(how: str, values: frozenset[str] = frozenset()) -> Handler:
    def handler(cmd: SimpleCommand) -> list[WriteTarget]:
        return _t(cmd, operands(cmd.args, values), how)
    return handler


def _cp(cmd: SimpleCommand) -> list[WriteTarget]:
    dest, _ = dest_and_sources(cmd.args, CP_VALUES)
    if dest is None:
        return []
    opts = options(cmd.args)
    return [WriteTarget(dest, "copy", bool(opts & {"-r", "-R", "-a", "--recursive", "--archive"}),
                        cmd.program)]


def _mv(cmd: SimpleCommand) -> list[WriteTarget]:
    dest, sources = dest_and_sources(cmd.args, CP_VALUES)
    out = _t(cmd, sources, "move-source", recursive=True)
    if dest is not None:
        out.append(WriteTarget(dest, "move", True, cmd.program))
    return out


def _install(cmd: SimpleCommand) -> list[WriteTarget]:
    if "-d" in options(cmd.args) or "--directory" in options(cmd.args):
        return _t(cmd, operands(cmd.args, CP_VALUES), "mkdir")
    dest, _ = dest_and_sources(cmd.args, CP_VALUES)
    return [WriteTarget(dest, "copy", False, cmd.program)] if dest is not None else []


def _ln(cmd: SimpleCommand) -> list[WriteTarget]:
    dest, sources = dest_and_sources(cmd.args, frozenset({"-S", "--suffix"}))
    if dest is None and sources:
        name = sources[0].text.rstrip("/").rsplit("/", 1)[-1]
        dest = Word(name, literal=sources[0].literal)
    return [WriteTarget(dest, "link", False, cmd.program)] if dest is not None else []


def _sed(cmd: SimpleCommand) -> list[WriteTarget]:
    args = cmd.args
    in_place = any(
        w.text.startswith("--in-place")
        or (w.text.startswith("-") and not w.text.startswith("--") and "i" in _sed_flags(w.text))
        for w in args
        if w.literal
    )
    if not in_place:
        return []
    ops = operands(args, frozenset({"-e", "-f", "--expression", "--file", "-l", "--line-length",
                                    "-s"}) - {"-s"})
    has_script_opt = any(w.text in ("-e", "-f", "--expression", "--file") or
                         w.text.startswith(("--expression=", "--file=")) for w in args)
    files = ops if has_script_opt else ops[1:]
    return _t(cmd, files, "edit")


def _sed_flags(text: str) -> str:
    """Letters of a short-option cluster up to an attached value (``-i.bak`` → ``i``)."""
    letters = ""
    for ch in text[1:]:
        if not ch.isalpha():
            break
        letters += ch
        if ch in "ef":  # -e/-f take a value
            break
    return letters


def _perl_inplace(cmd: SimpleCommand) -> list[WriteTarget]:
    args = cmd.args
    if not any(w.literal and w.text.startswith("-") and not w.text.startswith("--") and
               "i" in _perl_cluster(w.text) for w in args):
        return []
    files: list[Word] = []
    skip = False
    for i, word in enumerate(args):
        if skip:
            skip = False
            continue
        if word.text in ("-e", "-E", "-M", "-I", "-m"):
            skip = True
            continue
        if word.literal and word.text.startswith("-"):
            continue
        if i > 0 or not any(w.text in ("-e", "-E") for w in args):
            files.append(word)
    return _t(cmd, files, "edit")


def _perl_cluster(text: str) -> str:
    letters = ""
    for ch in text[1:]:
        if ch in "eEMIm":
            break
        letters += ch
    return letters


def _tee(cmd: SimpleCommand) -> list[WriteTarget]:
    how = "append" if options(cmd.args) & {"-a", "--append"} else "write"
    return _t(cmd, operands(cmd.args), how)


def _chmod(cmd: SimpleCommand) -> list[WriteTarget]:
    words = [w for w in cmd.args if not (w.literal and w.text.startswith("-") and not
                                         _CHMOD_MODE.match(w.text))]
    # with --reference the mode comes from a file, so every remaining word is a target
    reference = any(w.text.startswith("--reference") for w in cmd.args)
    targets = words if reference else words[1:]
    return _t(cmd, targets, "chmod", _recursive(cmd.args))


def _chown(cmd: SimpleCommand) -> list[WriteTarget]:
    ops = operands(cmd.args, frozenset({"--from"}))
    targets = ops if any(w.text.startswith("--reference") for w in cmd.args) else ops[1:]
    return _t(cmd, targets, "chown", _recursive(cmd.args))


def _chattr(cmd: SimpleCommand) -> list[WriteTarget]:
    words = [w for w in cmd.args if not (w.text.startswith("-") and len(w.text) == 2)]
    return _t(cmd, words[1:] if words and words[0].text[:1] in "+-=" else words, "chmod",
              _recursive(cmd.args))


def _setfacl(cmd: SimpleCommand) -> list[WriteTarget]:
    ops = operands(cmd.args, frozenset({"-m", "-x", "-M", "-X", "--modify", "--remove",
                                        "--set", "--set-file", "--modify-file", "--remove-file"}))
    return _t(cmd, ops, "chmod", _recursive(cmd.args))


def _dd(cmd: SimpleCommand) -> list[WriteTarget]:
    out = []
    for word in cmd.args:
        if word.text.startswith("of="):
            out.append(WriteTarget(word.after(3), "write", program="dd"))
    return out


def _truncate(cmd: SimpleCommand) -> list[WriteTarget]:
    return _t(cmd, operands(cmd.args, frozenset({"-s", "-r", "--size", "--reference"})),
              "truncate")


def _shred(cmd: SimpleCommand) -> list[WriteTarget]:
    return _t(cmd, operands(cmd.args, frozenset({"-n", "-s", "--iterations", "--size",
                                                 "--random-source"})), "shred")


def _find(cmd: SimpleCommand) -> list[WriteTarget]:
    args = cmd.args
    texts = [w.text for w in args]
    starts = find_starts(args)
    out: list[WriteTarget] = []
    # -delete, or -exec rm/shred/unlink: everything below the start points may go
    if "-delete" in texts or _find_exec_deletes(texts):
        out.extend(WriteTarget(w, "delete", True, "find") for w in starts)
    for i, text in enumerate(texts):
        if text in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(args):
            out.append(WriteTarget(args[i + 1], "write", program="find"))
    return out


_DELETERS = frozenset({"rm", "shred", "unlink", "rmdir", "srm"})


def _find_exec_deletes(texts: list[str]) -> bool:
    for i, text in enumerate(texts[:-1]):
        if text in ("-exec", "-execdir", "-ok", "-okdir"):
            nxt = texts[i + 1].rsplit("/", 1)[-1]
            if nxt in _DELETERS or (nxt in ("sudo", "doas") and i + 2 < len(texts) and
                                    texts[i + 2].rsplit("/", 1)[-1] in _DELETERS):
                return True
    return False


def _download(cmd: SimpleCommand) -> list[WriteTarget]:
    args = cmd.args
    out = []
    for i, word in enumerate(args):
        text = word.text
        if _output_option(cmd.program, text) and i + 1 < len(args):
            out.append(WriteTarget(args[i + 1], "download", program=cmd.program))
        elif text.startswith(("--output=", "--output-document=")):
            out.append(WriteTarget(word.after(text.index("=") + 1), "download",
                                   program=cmd.program))
    return out


def _output_option(program: str | None, text: str) -> bool:
    """``-o FILE`` (``-O FILE`` for wget), also bundled: ``curl -fsSLo FILE``, ``wget -qO FILE``.

    curl's ``-O`` is a flag (the name comes from the URL), not an option with a value.
    """
    if text in ("--output", "--output-document"):
        return True
    if not text.startswith("-") or text.startswith("--") or len(text) < 2:
        return False
    letter = text[-1]
    return letter == "o" or (letter == "O" and program != "curl")


def _tar(cmd: SimpleCommand) -> list[WriteTarget]:
    args = cmd.args
    first = args[0].text if args else ""
    # old-style bundled letters without a dash (``tar xzf a.tgz``) are options too
    bundled = {"-" + c for c in first} if first and not first.startswith("-") else set()
    opts = options(args) | bundled
    out: list[WriteTarget] = []
    if opts & {"-x", "--extract", "--get"}:
        dest = Word.of(".")
        for i, word in enumerate(args):
            if word.text in ("-C", "--directory") and i + 1 < len(args):
                dest = args[i + 1]
            elif word.text.startswith("--directory="):
                dest = word.after(len("--directory="))
        out.append(WriteTarget(dest, "extract", True, "tar"))
    if opts & {"-c", "--create", "-r", "--append", "-u", "--update"}:
        for i, word in enumerate(args):
            if word.text in ("-f", "--file") and i + 1 < len(args):
                out.append(WriteTarget(args[i + 1], "write", program="tar"))
    return out


def _unzip(cmd: SimpleCommand) -> list[WriteTarget]:
    for i, word in enumerate(cmd.args):
        if word.text == "-d" and i + 1 < len(cmd.args):
            return [WriteTarget(cmd.args[i + 1], "extract", True, cmd.program)]
    return [WriteTarget(Word.of("."), "extract", True, cmd.program)]


def _rsync(cmd: SimpleCommand) -> list[WriteTarget]:
    ops = operands(cmd.args, frozenset({"-e", "--rsh", "--exclude", "--include", "--filter",
                                        "-f", "--rsync-path", "--files-from", "--backup-dir",
                                        "--log-file", "--chmod", "--chown", "--port"}))
    if len(ops) < 2:
        return []
    how = "delete" if any(w.text.startswith("--delete") for w in cmd.args) else "copy"
    return [WriteTarget(ops[-1], how, True, "rsync")]


def _mount(cmd: SimpleCommand) -> list[WriteTarget]:
    ops = operands(cmd.args, frozenset({"-t", "-o", "-O", "-L", "-U", "--types", "--options"}))
    return _t(cmd, ops[-1:], "mount") if len(ops) >= 2 else []


def _sort(cmd: SimpleCommand) -> list[WriteTarget]:
    """``sort``/``shuf`` ``-o F``, ``-oF``, ``-uoF`` (a cluster), ``--output F``,
    ``--output=F``; an ``o`` after an option that takes a value (``-to``) is that value."""
    for i, word in enumerate(cmd.args):
        text, at = word.text, word.text.find("o")
        if text.startswith("--output="):
            return [WriteTarget(word.after(9), "write", program=cmd.program)]
        cluster = text[:1] == "-" and text[1:2] != "-" and at > 0
        valued = "in" if cmd.program == "shuf" else "kSTt"  # short options taking a value
        if text == "--output" or (cluster and not set(text[1:at]) & set(valued)):
            rest = word.after(at + 1) if cluster else Word.of("")
            value = rest if rest.text else (cmd.args[i + 1] if i + 1 < len(cmd.args) else None)
            return [WriteTarget(value, "write", program=cmd.program)] if value else []
    return []


def _compiler(cmd: SimpleCommand) -> list[WriteTarget]:
    for i, word in enumerate(cmd.args):
        if word.text == "-o" and i + 1 < len(cmd.args):
            return [WriteTarget(cmd.args[i + 1], "write", program=cmd.program)]
        if word.text.startswith("-o") and len(word.text) > 2:
            return [WriteTarget(word.after(2), "write", program=cmd.program)]
    return []


_HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(("gcc", "cc", "g++", "c++", "clang", "clang++", "ld"), _compiler),
    "rm": _rm,
    "rmdir": _plain("rmdir"),
    "unlink": _plain("delete"),
    "shred": _shred,
    "srm": _rm,
    "truncate": _truncate,
    "cp": _cp,
    "mv": _mv,
    "install": _install,
    "ln": _ln,
    "sed": _sed,
    "perl": _perl_inplace,
    "ruby": _perl_inplace,
    "tee": _tee,
    "touch": _plain("touch", frozenset({"-d", "-r", "-t", "--date", "--reference"})),
    "mkdir": _plain("mkdir", frozenset({"-m", "--mode"})),
    "chmod": _chmod,
    "chown": _chown,
    "chgrp": _chown,
    "chattr": _chattr,
    "setfacl": _setfacl,
    "dd": _dd,
    "find": _find,
    "curl": _download,
    "wget": _download,
    "aria2c": _download,
    "tar": _tar,
    "bsdtar": _tar,
    "unzip": _unzip,
    "rsync": _rsync,
    "mount": _mount,
    **dict.fromkeys(("sort", "shuf"), _sort),
}
