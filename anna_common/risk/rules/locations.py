"""Judging write targets by where they are: the location half of the risk floor."""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, NamedTuple

from anna_common.risk import pathglob, paths
from anna_common.risk.rules.base import Code, Out
from anna_common.shell.argv import operands, options

if TYPE_CHECKING:
    from anna_common.risk.paths import Resolved
    from anna_common.risk.rules.base import Reason
    from anna_common.risk.writes import WriteTarget
    from anna_common.shell.grammar import SimpleCommand

_DESTRUCTIVE = frozenset({"delete", "move-source", "shred"})
_REPLACING = frozenset({"write", "copy", "move", "link", "delete", "truncate", "download",
                        "shred", "move-source", "extract", "install"})
_PERMS = frozenset({"chmod", "chown"})
_INTO = frozenset({"copy", "move", "install", "link", "extract", "download"})
"""Writes that may land inside a directory they name (``cp k.gpg /etc/apt/trusted.gpg.d/``)."""
_PATH_DIRS = frozenset({"/usr/local/bin", "/usr/local/sbin", "/usr/bin", "/usr/sbin", "/bin",
                        "/sbin"})
_TAMPER = frozenset({"write", "delete", "truncate", "shred", "link", "move-source", "copy"})
_SYSTEM_BINARIES = ("/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/lib/", "/lib64/",
                    "/usr/lib/", "/usr/lib64/", "/usr/libexec/")


def judge(target: WriteTarget, out: Out) -> None:
    """Add the reasons one write target calls for."""
    text = target.word.text
    if "/../" in text or text.startswith("../") or text.endswith("/.."):
        where = ", ".join(p.path.replace(paths.UNKNOWN, "$…") for p in out.paths(target.word))
        out.high(Code.UNKNOWN_TARGET, f"{text[:60]} climbs directories with ..; it lands at "
                 f"{where}", target=where or text[:60])
    for place in out.paths(target.word):
        _judged(target, place, out)


def _judged(target: WriteTarget, place: Resolved, out: Out) -> None:
    """:func:`_judge_one`, once per assessment for each distinct target and place: a command of
    many wildcards (``rm -f /@(etc|usr)/@(a|b)* …``, judged as written and again from ``/``)
    asked it ~1,000 times for ~330 places (issue 38 item 4). The verdict depends only on the
    key and the machine facts, which are the same for every pass of one assessment; the
    reasons it gave are added again, so the outcome is what judging anew would give."""
    key = ("location", target.how, target.recursive, target.word.literal, place.path,
           place.glob)
    found = out.memo.get(key)
    if not isinstance(found, _Judged):
        before, system = len(out.reasons), out.system
        out.system = False
        _judge_one(target, place, out)
        found = out.memo[key] = _Judged(tuple(out.reasons[before:]), out.system)
        out.system = system or found.system
        return
    out.reasons.extend(found.reasons)
    out.system = out.system or found.system


class _Judged(NamedTuple):
    """What :func:`_judge_one` gave for one target and place."""

    reasons: tuple[Reason, ...]
    """The reasons it added."""
    system: bool
    """Whether it found that the write needs root."""


def _judge_one(target: WriteTarget, place: Resolved, out: Out) -> None:
    path, how = place.path, target.how
    label = path.replace(paths.UNKNOWN, "$…")
    if paths.is_network_device(path):
        out.high(Code.NETWORK_TRANSFER, f"redirects into a network socket ({label})", target=label)
        return
    if paths.is_device(path):
        if how in ("mount",):
            out.high(Code.MOUNT, f"mounts over {label}", target=label, system=True)
        elif how in _PERMS:
            out.high(Code.SYSTEM_PERMISSIONS, f"changes permissions of device {label}",
                     target=label, system=True)
        else:
            out.ban(Code.BAN_DISK_WRITE, f"writes the raw device {label}", target=label)
        return
    if process_identity(place, spans=not target.word.literal):
        out.ban(Code.BAN_SECURITY_DISABLE, f"writes {label}: a process's login identity or "
                "security label (it fakes a new login to the lock-out guard and the audit "
                "log, or lifts a confinement)", target=label)
        return
    if _recursive_disaster(target, place, out, label):
        return
    if paths.is_boot(path):
        _boot_write(out, label)
        return
    if paths.is_log(path) and how in _TAMPER:
        out.high(Code.HISTORY_TAMPER, f"erases or overwrites {label}, a log or shell history "
                 "(evidence of what happened)", target=label, system=paths.is_system(path))
        return
    if path in paths.IDENTITY_DB:
        if how in _REPLACING:
            out.ban(Code.BAN_IDENTITY_OVERWRITE, f"overwrites {path} wholesale", target=path)
        else:
            out.high(Code.USER_ACCOUNT, f"edits {path}", target=path, system=True)
        return
    _location_floor(target, place, out, label)


_PROCESS_IDENTITY = ("/proc/*/loginuid", "/proc/*/sessionid", "/proc/*/attr/*",
                     "/proc/*/attr")
"""What the kernel keeps of who a process is: its audit login uid and session (which the
lock-out guard reads to tell a new login) and its LSM labels (AppArmor, SELinux)."""
_IDENTITY_SAMPLES = tuple(f"/proc/{pid}/{task}{leaf}" for pid in ("self", "1", "thread-self")
                          for task in ("", "task/1/")
                          for leaf in ("loginuid", "sessionid", "attr/current",
                                       "attr/apparmor/exec"))


def process_identity(place: Resolved, *, spans: bool = False) -> bool:
    """``place`` is (or, as a pattern, can be) a process's login identity or security label:
    ``/proc/self/loginuid``, ``/proc/$$/loginuid``, ``/proc/*/attr/current``. ``spans``: a
    trailing ``*`` stands for an unknown rest (``/proc/$PID/x`` is ``/proc/*``), slashes and
    all; otherwise a wildcard matches within one name, as bash's do."""
    path = place.path
    names = path.strip("/").split("/", 1)
    if names[0] != "proc" and (not pathglob.is_glob(names[0]) or (len(names) > 1 and
                               not fnmatch.fnmatchcase("proc", names[0]))):
        return False  # every sample and pattern starts with ``proc``: no match can follow
    if any(fnmatch.fnmatchcase(path, p) for p in _PROCESS_IDENTITY):
        return True
    if place.glob or any(c in path for c in "*?["):
        return any(_could_be(sample, path, spans) for sample in _IDENTITY_SAMPLES)
    return False


def linked_identity(cmd: SimpleCommand, out: Out) -> None:
    """``ln -s /proc/self/loginuid /tmp/l`` (``cp -s``): a write through the link is a write
    to the process's identity, which the link's own path does not show."""
    sources = operands(cmd.args) if cmd.program == "ln" or (
        cmd.program == "cp" and options(cmd.args) & {"-s", "--symbolic-link"}) else []
    for word in sources:
        for place in out.paths(word):
            if process_identity(place, spans=not word.literal):
                out.ban(Code.BAN_SECURITY_DISABLE, f"links to {place.path}, a process's "
                        "login identity or security label: a write through the link fakes a "
                        "login", target=place.path)
                return


def _could_be(sample: str, pattern: str, spans: bool) -> bool:
    names, parts = sample.strip("/").split("/"), pattern.strip("/").split("/")
    if spans and parts[-1].endswith("*") and len(names) >= len(parts):
        names = [*names[:len(parts) - 1], "/".join(names[len(parts) - 1:])]
    return len(names) == len(parts) and all(
        fnmatch.fnmatchcase(name, part) for name, part in zip(names, parts, strict=True))


def _recursive_disaster(target: WriteTarget, place: Resolved, out: Out, label: str) -> bool:
    """Recursive deletion/move/permission change of /, a system root, a home or an unknown root."""
    path, how = place.path, target.how
    destructive = how in _DESTRUCTIVE or (how == "delete" and target.recursive)
    if how == "move" and (paths.is_root_or_top(path, glob=place.glob) and path != "/"):
        destructive = False  # moving something *into* /usr is judged by location below
    if not (destructive or (how in _PERMS and target.recursive)):
        return False
    recursive = target.recursive or how in ("move-source",)
    if how == "delete" and not target.recursive:
        # rm without -r of a directory fails; of a literal glob at a root it still wrecks the
        # system (rm /usr/*); an unknown operand without -r is judged by location instead
        recursive = place.glob and not paths.is_unknown_root(path)
    if not recursive:
        return False
    if paths.is_system(path) or path == "/":
        out.system = True  # banned anyway, but the scope should still say who could do it
    if paths.is_root_or_top(path, glob=place.glob):
        if how in _PERMS:
            out.ban(Code.BAN_SYSTEM_PERMISSIONS,
                    f"recursively changes ownership or permissions of {label}", target=label)
        else:
            out.ban(Code.BAN_RECURSIVE_DELETE, f"recursively destroys {label}", target=label)
        return True
    if paths.is_home_root(path):
        if how in _PERMS:
            out.high(Code.SYSTEM_PERMISSIONS, f"recursively changes permissions of {label}",
                     target=label)
            return True
        out.ban(Code.BAN_RECURSIVE_DELETE, f"recursively destroys a home directory ({label})",
                target=label)
        return True
    if paths.is_unknown_root(path):
        if how in _PERMS or how == "move-source":
            out.high(Code.UNKNOWN_TARGET, f"recursively changes or moves {label}, "
                     "whose root is only known at run time", target=label)
            return True
        out.ban(Code.BAN_RECURSIVE_DELETE,
                f"recursively destroys {label}, whose root is only known at run time", target=label)
        return True
    if paths.is_home_top(path) and how not in _PERMS:
        out.high(Code.RECURSIVE_DELETE, f"removes or moves {label}, a whole folder of your home",
                 target=label)
        return True
    if paths.is_relative(path) and _cwd_level(path):
        out.high(Code.RECURSIVE_DELETE,
                 f"recursively destroys {label} in a working directory Anna cannot see",
                 target=label)
        return True
    return False


def _cwd_level(path: str) -> bool:
    stripped = path.rstrip("/")
    return stripped in ("", ".", "..", "*", ".*") or stripped.startswith("..")


def _boot_write(out: Out, label: str) -> None:
    if out.ctx.bootloader:
        out.high(Code.BOOTLOADER, f"writes {label} (bootloader {out.ctx.bootloader} detected)",
                 target=label, system=True)
    else:
        out.ban(Code.BAN_BOOT_WITHOUT_EVIDENCE,
                f"writes {label} without telemetry evidence of the bootloader", target=label)


def _location_floor(target: WriteTarget, place: Resolved, out: Out, label: str) -> None:
    path, how = place.path, target.how
    recursive_delete = how in _DESTRUCTIVE and target.recursive
    if how in _PERMS and target.recursive and paths.is_system(path):
        out.high(Code.SYSTEM_PERMISSIONS, f"recursively changes ownership or permissions of "
                 f"the system path {label}", target=label, system=True)
    elif path.startswith(("/proc/sys/", "/sys/")) or path == "/proc/sysrq-trigger":
        out.high(Code.KERNEL, f"writes kernel state through {label}", target=label, system=True)
    elif how in _PERMS and path.rstrip("/") in _PATH_DIRS:
        out.high(Code.SYSTEM_PERMISSIONS, f"changes who owns or may write {label}, a "
                 "directory in root's PATH (a program put there runs as root)", target=label,
                 system=True)
    elif paths.is_persistence(path) or (how in _INTO and paths.is_persistence(
            path.rstrip("/") + "/x")):
        out.high(Code.PERSISTENCE, f"changes {label}, which runs code at login, boot or on a "
                 "schedule", target=label, system=paths.is_system(path))
    elif out.once(("secret", path), paths.is_secret, path):  # the read rules ask it too
        out.high(Code.SECRET_READ, f"touches secret material {label}", target=label,
                 system=paths.is_system(path))
    elif paths.is_sensitive_etc(path):
        out.high(Code.SECURITY_CONFIG, f"changes {label} (logins, network, boot or security)",
                 target=label, system=True)
    elif path.startswith("/var/lib/pacman"):
        out.high(Code.SYSTEM_WRITE, f"writes the package database {label}", target=label,
                 system=True)
    elif path.startswith(_SYSTEM_BINARIES):
        out.high(Code.SYSTEM_BINARY, f"changes system programs or libraries ({label})",
                 target=label, system=True)
    elif paths.is_root_or_top(path, glob=place.glob):
        out.high(Code.SYSTEM_WRITE, f"changes the system directory {label}", target=label,
                 system=True)
    elif path.startswith("/etc/"):
        out.medium(Code.ETC_WRITE, f"changes system configuration {label}", target=label,
                   system=True)
    elif paths.is_unknown_root(path):
        out.high(Code.UNKNOWN_TARGET, f"writes {label}, a path only known at run time",
                 target=label)
    elif paths.is_system(path):
        out.medium(Code.SYSTEM_WRITE, f"writes {label} outside home and temporary directories",
                   target=label, system=True)
    elif recursive_delete:
        out.medium(Code.RECURSIVE_DELETE, f"recursively deletes {label}", target=label)
    elif paths.in_tmp(path) or path in ("/tmp", "/var/tmp"):
        out.low(Code.TEMP_WRITE, f"writes {label} in a temporary directory", target=label)
    else:
        out.low(Code.HOME_WRITE, f"changes {label} in your files", target=label)
