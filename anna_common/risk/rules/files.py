"""File tools: permissions, ownership, timestamps, raw copies, archives, compilers.

Where they write is judged by :mod:`anna_common.risk.rules.locations`; these rules add what the
tool itself does: setuid bits, world-writable modes, files handed to root, chosen timestamps,
raw device reads, archivers told to run programs.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from anna_common.risk import paths
from anna_common.risk.rules.base import Code, Out, help_only
from anna_common.shell.argv import operands, options

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell.grammar import SimpleCommand

def touch(cmd: SimpleCommand, out: Out) -> None:
    """touch with a chosen time rewrites timestamps (hiding when files changed)."""
    if any(w.text.startswith(("-t", "-d", "-r", "--date", "--reference", "--time")) for w in
           cmd.args):
        out.high(Code.HISTORY_TAMPER, "touch sets file timestamps to a chosen time",
                 target="timestamps")


def install(cmd: SimpleCommand, out: Out) -> None:
    """install -m with a setuid mode creates a privileged program."""
    args = cmd.args
    for i, word in enumerate(args):
        mode = word.text[2:] if word.text.startswith("-m") and len(word.text) > 2 else (
            word.text.split("=", 1)[1] if word.text.startswith("--mode=") else (
                args[i + 1].text if word.text in ("-m", "--mode") and i + 1 < len(args) else ""))
        if mode and mode_is_setuid(mode):
            out.high(Code.SETUID, "install creates a setuid or setgid program", target=mode)
            return


def dd(cmd: SimpleCommand, out: Out) -> None:
    """dd copies raw bytes; reading a block device bypasses every file permission."""
    source = next((w.after(3) for w in cmd.args if w.text.startswith("if=")), None)
    if source is not None:
        for place in out.paths(source):
            if place.path.startswith("/dev/") and place.path not in (
                    "/dev/zero", "/dev/urandom", "/dev/random", "/dev/null", "/dev/stdin"):
                out.high(Code.SECRET_READ, f"dd reads the raw device {place.path}",
                         target=place.path, system=True)
                return
    out.medium(Code.SYSTEM_WRITE, "dd copies raw data", target="dd")


_SETUID_OCTAL = re.compile(r"[0-7]?[2-7][0-7]{3}")


_SETUID_SYMBOLIC = re.compile(r"[ugoa]*[+=][rwxXt]*s")


_WORLD_WRITABLE = re.compile(r"[0-7]*[2367]|([ugo]*a[ugo]*|o)[+=][rwxXst]*w[rwxXst]*")


def mode_is_setuid(mode: str) -> bool:
    """An octal or symbolic mode that sets the setuid or setgid bit."""
    return bool(_SETUID_OCTAL.fullmatch(mode) or _SETUID_SYMBOLIC.search(mode))


def chmod(cmd: SimpleCommand, out: Out) -> None:
    """chmod: setuid/setgid bits grant privileges; world-writable modes invite tampering."""
    for word in cmd.args:
        text = word.text
        if mode_is_setuid(text):
            out.high(Code.SETUID, "chmod sets a setuid or setgid bit", target=text)
            return
        if (re.fullmatch(r"[0-7]{3,4}", text) and text[-1] in "2367") or \
                _WORLD_WRITABLE.fullmatch(text):
            out.high(Code.SYSTEM_PERMISSIONS, "chmod makes files writable by everyone",
                     target=text)
            return
        if not word.literal and cmd.args.index(word) == 0:
            out.high(Code.UNKNOWN_TARGET, "chmod applies a mode only known at run time",
                     target="chmod")
            return


def chown(cmd: SimpleCommand, out: Out) -> None:
    """chown/chgrp/setfacl give files to other users (root only); a computed owner is HIGH."""
    ops = operands(cmd.args, frozenset({"--from", "-m", "-x", "-M", "-X", "--modify",
                                        "--remove", "--set"}))
    owner = next((w for w in cmd.args if w.text in ("-m", "--modify", "--set")), None)
    spec = cmd.args[cmd.args.index(owner) + 1] if owner is not None and \
        cmd.args.index(owner) + 1 < len(cmd.args) else (ops[0] if ops else None)
    if spec is not None and not spec.literal:
        out.high(Code.SYSTEM_PERMISSIONS, f"{cmd.program} gives files to an owner only known at "
                 "run time", target=cmd.program, system=True)
        return
    if spec is not None and cmd.program == "chown" and spec.text.split(":")[0] in ("root", "0"):
        for word in ops[1:]:
            for place in out.paths(word):
                if paths.in_tmp(place.path) or paths.in_home(place.path):
                    # a root-owned file in a shared or personal directory is how a
                    # privileged program gets planted (then chmod u+s)
                    out.high(Code.SETUID, f"chown gives {place.path} in a user-writable "
                             "directory to root", target=place.path, system=True)
                    return
    out.medium(Code.SYSTEM_PERMISSIONS, f"{cmd.program} changes who owns or may use files",
               target=spec.text if spec is not None else cmd.program, system=True)


def setcap(cmd: SimpleCommand, out: Out) -> None:
    """File capabilities grant root powers to a program."""
    if help_only(cmd) or options(cmd.args) & {"-v"}:
        out.read_only()
        return
    ops = operands(cmd.args)
    out.high(Code.SETUID, "setcap grants capabilities to a program", system=True,
             target=ops[-1].text if ops else None)


def chattr(cmd: SimpleCommand, out: Out) -> None:
    """chattr +i/+a make files immutable; -i unlocks them."""
    ops = operands(cmd.args)
    out.high(Code.SYSTEM_PERMISSIONS, "chattr changes file attributes", system=True,
             target=ops[-1].text if ops else None)


_ARCHIVE_EXEC = ("--to-command", "--checkpoint-action", "--use-compress-program", "--rsh-command",
                 "--info-script", "--new-volume-script", "--unzip-command", "-TT", "--rmt-command")


def archive(cmd: SimpleCommand, out: Out) -> None:
    """tar/zip/7z/gzip: listing is read-only; options that run programs are HIGH."""
    texts = [w.text for w in cmd.args]
    if any(t.startswith(_ARCHIVE_EXEC) for t in texts) or (
            cmd.program in ("tar", "bsdtar") and ("-I" in texts or any(
                t.startswith("-") and not t.startswith("--") and "I" in t for t in texts))) or (
            cmd.program == "zip" and "-T" in options(cmd.args) and "-TT" in texts):
        out.high(Code.EMBEDDED_SHELL, f"{cmd.program} is told to run another program",
                 target=cmd.program)
        return
    first = texts[0] if texts else ""
    opts = options(cmd.args) | ({"-" + c for c in first} if first and not first.startswith("-")
                                and cmd.program in ("tar", "bsdtar") else set())
    listing = {"tar": {"-t", "--list"}, "bsdtar": {"-t", "--list"}, "unzip": {"-l", "-v", "-t",
                                                                             "-Z"},
               "7z": set(), "gzip": {"-l", "--list", "-t", "--test"},
               "xz": {"-l", "--list", "-t", "--test"}, "zstd": {"-l", "--list", "-t"}}
    if opts & listing.get(cmd.program or "", set()) or help_only(cmd) or (
            cmd.program == "7z" and texts[:1] in (["l"], ["t"])) or (
            cmd.program in ("gzip", "xz", "zstd", "bzip2", "lz4") and opts & {"-c", "--stdout",
                                                                            "-d"} and
            opts & {"-c", "--stdout"}):
        out.read_only()
        return
    out.low(Code.HOME_WRITE, f"{cmd.program} packs or unpacks files", target=cmd.program)


def compiler(cmd: SimpleCommand, out: Out) -> None:
    """Compilers and build tools write build outputs (judged as writes) and run build scripts."""
    if help_only(cmd):
        out.read_only()
        return
    if cmd.program in ("make", "cmake", "ninja", "meson"):
        out.medium(Code.SCRIPT_FILE, f"{cmd.program} runs the build rules of a project",
                   target=cmd.program)


def writer(cmd: SimpleCommand, out: Out) -> None:
    """File tools: their risk is where they write (judged from their write targets)."""


FILE_RULES: dict[str, Callable[[SimpleCommand, Out], None]] = {
    "chmod": chmod,
    **dict.fromkeys(("chown", "chgrp", "setfacl"), chown),
    "touch": touch,
    "install": install,
    "dd": dd,
    "setcap": setcap,
    "chattr": chattr,
    **dict.fromkeys(("tar", "bsdtar", "zip", "unzip", "7z", "7za", "gzip", "gunzip", "xz", "unxz",
                     "zstd", "unzstd", "bzip2", "bunzip2", "lz4", "unrar", "cpio", "ar", "pax"),
                    archive),
    **dict.fromkeys(("gcc", "cc", "g++", "c++", "clang", "clang++", "ld", "as", "make", "cmake",
                     "ninja", "meson"), compiler),
    **dict.fromkeys(("cp", "mv", "rm", "rmdir", "unlink", "mkdir", "ln", "truncate", "tee",
                     "patch", "split", "csplit", "mktemp", "mkfifo", "exec"), writer),
}
"""Rules for file tools."""
