"""Classifying the paths a command names: system roots, devices, home, secrets.

A path argument is a :class:`~anna_common.shell.words.Word`; it may start with
``~``, ``$HOME`` or another variable, contain ``..`` or globs, or expand into
several words (``/{etc,usr}``). :func:`resolve` turns it into lexically
normalised candidates, and the predicates below answer the questions the risk
rules ask. When a path cannot be known, the answer is the cautious one.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache

from anna_common.risk import pathvalues
from anna_common.risk.secretpaths import PROCESS_SECRETS, originals
from anna_common.risk.secretpaths import SECRET_PATTERNS as _SECRET_PATTERNS
from anna_common.shell.words import Word

HOME = pathvalues.HOME
"""Marker root for the caller's home directory in resolved paths."""
UNKNOWN = pathvalues.UNKNOWN
"""Marker root for a path that starts with an unknown variable or substitution."""
CWD = pathvalues.CWD
"""Marker root for the working directory a variable was assigned in (``x=~+``)."""

TOP_LEVEL = frozenset({
    "/bin", "/boot", "/dev", "/efi", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
    "/media", "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/usr", "/var",
    "/snap", "/lost+found",
})
"""Top-level system directories: recursive deletion of any of them is a hard ban."""

CRITICAL = TOP_LEVEL | frozenset({
    "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec",
    "/usr/share", "/usr/include", "/usr/local", "/usr/src", "/var/lib", "/var/lib/pacman",
    "/var/lib/pacman/local", "/var/cache", "/var/log", "/var/spool", "/etc/pacman.d",
    "/etc/systemd", "/etc/ssh", "/etc/pam.d", "/etc/security", "/etc/sudoers.d", "/boot/efi",
    "/boot/grub", "/boot/loader", "/efi/EFI", "/boot/EFI",
})
"""Paths whose recursive deletion, move or permission change wrecks the system."""

_SAFE_DEVICES = (
    "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/stdin",
    "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/console", "/dev/ptmx", "/dev/fd/*",
    "/dev/pts/*", "/dev/shm", "/dev/shm/*", "/dev/mqueue*", "/dev/log", "/dev/tcp/*",
    "/dev/udp/*", "/dev/kmsg", "/dev/rfkill", "/dev/snd/*", "/dev/dri/*", "/dev/input/*",
    "/dev/tty[0-9]*", "/dev/vcs*", "/dev/hidraw*", "/dev/uinput", "/dev/fuse", "/dev/net/tun",
    "/dev/video*", "/dev/watchdog",
)

IDENTITY_DB = frozenset({"/etc/passwd", "/etc/shadow", "/etc/sudoers", "/etc/group",
                         "/etc/gshadow"})
"""Files whose wholesale overwrite is a hard ban."""

_PERSISTENCE_PATTERNS = (
    "~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.profile", "~/.zshrc",
    "~/.zprofile", "~/.zshenv", "~/.zlogin", "~/.shrc", "~/.kshrc", "~/.cshrc", "~/.tcshrc",
    "~/.config/fish/*", "~/.xinitrc", "~/.xprofile", "~/.xsession*", "~/.pam_environment",
    "~/.config/autostart/*", "~/.config/systemd/user/*", "~/.ssh/authorized_keys*",
    "~/.ssh/rc", "~/.ssh/config", "~/.local/bin/*", "~/.config/environment.d/*",
    "/etc/profile", "/etc/profile.d/*", "/etc/bash.bashrc", "/etc/bashrc", "/etc/zsh/*",
    "/etc/environment", "/etc/ld.so.preload", "/etc/ld.so.conf*", "/etc/cron*", "/etc/crontab",
    "/var/spool/cron*", "/etc/rc.local", "/etc/init.d/*", "/etc/xdg/autostart/*",
    "/etc/systemd/system/*", "/usr/lib/systemd/*", "/lib/systemd/*", "/etc/systemd/user/*",
    "/etc/udev/rules.d/*", "/usr/lib/udev/rules.d/*", "/etc/update-motd.d/*",
    "/etc/pacman.d/hooks*", "/usr/share/libalpm/hooks/*", "/root/.bashrc", "/root/.profile",
    "/root/.ssh/*", "/home/*/.ssh/authorized_keys*", "/home/*/.bashrc", "/home/*/.profile",
    "/etc/skel/*", "/etc/motd", "/etc/modules-load.d/*", "/etc/modprobe.d/*",
    "*/.git/config", ".git/config", "*/.git/hooks/*", ".git/hooks/*", "/etc/apt/apt.conf.d/*",
    "/etc/yum.repos.d/*", "/etc/dnf/*", "/etc/pacman.d/*", "*/.ssh/*", "/etc/sudoers.d/*",
    "/etc/polkit-1/rules.d/*", "/usr/share/polkit-1/rules.d/*",
    # read later by a program root runs: hooks, scripts, repositories, trust, code paths
    "~/.bash_aliases", "/root/.bash_aliases", "/home/*/.bash_aliases", "/etc/dpkg/dpkg.cfg",
    "/etc/dpkg/dpkg.cfg.d/*", "/etc/logrotate.conf", "/etc/logrotate.d/*", "/etc/binfmt.d/*",
    "/usr/lib/binfmt.d/*", "/etc/tmpfiles.d/*", "/usr/lib/tmpfiles.d/*", "/etc/sudo.conf",
    "/etc/gitconfig", "/etc/apt/sources.list", "/etc/apt/sources.list.d/*",
    "/etc/apt/trusted.gpg", "/etc/apt/trusted.gpg.d/*", "/etc/apt/keyrings/*",
    "/usr/share/keyrings/*", "/usr/local/share/ca-certificates/*", "/etc/ca-certificates/*",
    "/etc/pki/ca-trust/source/*", "/etc/ssl/certs/*", "/etc/zypp/repos.d/*",
    "/etc/apk/repositories", "/etc/apk/keys/*", "/etc/rpm/*", "/etc/alternatives/*",
)

_LOGS = (
    "/var/log/*", "*.log", "*/wtmp", "*/btmp", "*/lastlog", "*/utmp", "*_history",
    "*/.history", ".history", "/var/spool/mail/*", "/var/mail/*", "*/.lesshst", "*/.viminfo",
    "/var/lib/docker/containers/*",
)

_SENSITIVE_ETC = (
    "/etc/ssh/*", "/etc/sudoers*", "/etc/pam.d/*", "/etc/security/*", "/etc/fstab",
    "/etc/crypttab", "/etc/passwd*", "/etc/shadow*", "/etc/group*", "/etc/gshadow*",
    "/etc/resolv.conf", "/etc/hosts", "/etc/NetworkManager/*", "/etc/systemd/network/*",
    "/etc/netctl/*", "/etc/iwd/*", "/etc/wpa_supplicant/*", "/etc/nsswitch.conf",
    "/etc/selinux/*", "/etc/apparmor*", "/etc/audit/*", "/etc/default/grub", "/etc/mkinitcpio*",
    "/etc/dracut.conf*", "/etc/kernel/*", "/etc/sysctl*", "/etc/login.defs", "/etc/shells",
    "/etc/polkit-1/*", "/etc/doas.conf", "/etc/hostname", "/etc/nftables.conf", "/etc/iptables/*",
    "/etc/ufw/*", "/etc/firewalld/*", "/etc/pacman.conf", "/etc/pacman.d/*", "/etc/locale.gen",
    "/etc/vconsole.conf", "/etc/X11/*", "/etc/systemd/*", "/etc/ld.so*",
)

_BOOT = ("/boot", "/boot/*", "/efi", "/efi/*")


@dataclass(frozen=True, slots=True)
class Resolved:
    """A normalised path candidate."""

    path: str
    """Absolute path, ``~/...`` for the caller's home, ``$?/...`` for an unknown root,
    or a relative path when the working directory is unknown."""
    glob: bool
    """True when pathname expansion may turn it into many paths."""


def _normalise(path: str) -> str:
    """Lexical normalisation: collapse ``//``, ``.`` and ``..`` (``/tmp/../etc`` → ``/etc``),
    and follow the kernel's links to a process's root and working directory
    (``/proc/self/root/etc/shadow`` is ``/etc/shadow``)."""
    if not path:
        return path
    absolute = path.startswith("/")
    if absolute:
        path = _through_proc_links(path)
        absolute = path.startswith("/")
    norm = posixpath.normpath(path)
    if absolute and norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    return norm


def _matches(component: str, name: str) -> bool:
    """``component`` is ``name``, or a pattern that can match it (``r??t``, ``*``)."""
    return component == name or (any(c in component for c in "*?[")
                                 and fnmatch.fnmatchcase(name, component))


def _proc_link(stack: list[str]) -> str | None:
    """``root`` or ``cwd`` when ``stack`` is ``proc/PID/root`` (or ``…/task/TID/…``)."""
    if len(stack) not in (3, 5) or not _matches(stack[0], "proc"):
        return None
    if len(stack) == 5 and not _matches(stack[2], "task"):
        return None
    for link in ("root", "cwd"):
        if _matches(stack[-1], link):
            return link
    return None


def _through_proc_links(path: str) -> str:
    """Resolve ``/proc/PID/root`` to ``/`` and ``/proc/PID/cwd`` to an unknown directory,
    component by component as the kernel does (``/proc/self/root/..`` is still ``/``)."""
    stack: list[str] = []
    unknown = False
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if stack:
                stack.pop()
            continue
        stack.append(part)
        link = _proc_link(stack)
        if link == "root":
            stack = []
        elif link == "cwd":
            stack, unknown = [], True
    rest = "/" + "/".join(stack)
    return UNKNOWN + (rest if stack else "") if unknown else rest


def resolve(
    word: Word,
    *,
    home: str | None = None,
    cwd: str | None = None,
    known: dict[str, str] | None = None,
) -> list[Resolved]:
    """Normalised candidates for a path word.

    ``home``: the caller's home, so ``/home/alice/x`` is recognised as home.
    ``cwd``: the working directory when known (after ``cd /``), else None.
    ``known``: literal variable values assigned earlier in the same command.
    """
    out: list[Resolved] = []
    for value in word.values:
        text = value
        spread = False
        # brace expansion comes first: each word it makes is tilde-expanded on its own
        tilde = word.tilde or bool(word.alternatives and word.literal)
        if not word.literal:
            text, spread = pathvalues.substitute(word, known or {}, home)
        elif text.startswith(("~", "$")) and not tilde:
            text = "./" + text  # a file named ``~x`` (``"~"``, ``--file=~x``): no marker
        if tilde and text.startswith("~"):
            text = pathvalues.tilde_prefix(text, cwd)
        elif text.startswith(CWD):
            text = (cwd if cwd is not None else HOME) + text[len(CWD):]
        if text.startswith(HOME):
            out.append(_home_relative(text[len(HOME):], home, word.glob))
            continue
        if text.startswith(UNKNOWN):
            out.append(Resolved(text, True))
            continue
        # a file named ``~…`` (``"~"``, ``--file=~x``), which normalising must not make ``~``
        named_tilde = bool(text) and posixpath.normpath(text).startswith("~")
        if not text.startswith("/") and cwd is not None:
            text = cwd.rstrip("/") + "/" + text
        norm = _normalise(text) if text else text
        if named_tilde and norm.startswith("~") and cwd is None:
            norm = "./" + norm  # relative to where the step runs: not the home marker
        if home and norm.startswith("/") and (
                norm == home or norm.startswith(home.rstrip("/") + "/")):
            rest = norm[len(home.rstrip("/")):]
            norm = HOME + rest
        out.append(Resolved(norm, word.glob or spread or ("*" in norm and not word.literal)))
    return out


def _home_relative(rest: str, home: str | None, glob: bool) -> Resolved:
    """``~/a/../b`` stays in home; ``~/../../etc`` leaves it (resolved against the real home
    when known, else an unknown root: Anna cannot tell where it lands)."""
    relative = posixpath.normpath(rest.lstrip("/") or ".")
    if relative == ".":
        return Resolved(HOME, glob)
    if relative == ".." or relative.startswith("../"):
        if home:
            return Resolved(_normalise(home.rstrip("/") + "/" + relative), glob)
        return Resolved(UNKNOWN + "/" + relative, True)
    return Resolved(HOME + "/" + relative, glob)


@lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regex for a whole table: a path is matched once per table, not once per pattern."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def _match(path: str, patterns: tuple[str, ...]) -> bool:
    return _compiled(patterns).match(path) is not None


def is_root_or_top(path: str, *, glob: bool = False) -> bool:
    """``/``, a top-level system directory, or a glob directly under one (``/*``, ``/usr/*``)."""
    if path in ("/", "") or path in CRITICAL:
        return True
    if (glob or "*" in path) and path.startswith("/"):
        parent = posixpath.dirname(path.rstrip("/")) or "/"
        base = posixpath.basename(path.rstrip("/"))
        if any(c in base for c in "*?[") and (parent == "/" or parent in CRITICAL):
            return True
        # /u*, /e?c: a glob that can match a top-level directory
        if parent == "/" and any(fnmatch.fnmatchcase(top[1:], base) for top in TOP_LEVEL):
            return True
    return False


def is_home_root(path: str) -> bool:
    """The caller's home itself, everything in it (``~/*``), or any user's home (``/home/x``)."""
    if path in (HOME, HOME + "/", HOME + "/*", HOME + "/.*"):
        return True
    if path.startswith(HOME + "/") and path[len(HOME) + 1 :] in ("*", ".*", "{*,.*}"):
        return True
    parts = path.strip("/").split("/")
    if path.startswith(("/home/", "/Users/")) and len(parts) == 2:
        return True
    return path in ("/home/*", "/root/*", "/Users/*")


def is_home_top(path: str) -> bool:
    """A folder directly in the caller's home (``~/Documents``, ``~/.config``, ``~/.ssh``)."""
    if not path.startswith(HOME + "/"):
        return False
    rest = path[len(HOME) + 1 :].rstrip("/")
    return bool(rest) and "/" not in rest


def is_log(path: str) -> bool:
    """Logs, login records, mail spools and shell histories: evidence an attacker erases."""
    return _match(path, _LOGS)


def is_unknown_root(path: str) -> bool:
    """A path whose beginning is an unknown variable or substitution (``$DIR/*``, ``$X``)."""
    return path.startswith(UNKNOWN)


def in_home(path: str) -> bool:
    """Inside the caller's home directory."""
    return path == HOME or path.startswith(HOME + "/")


def in_tmp(path: str) -> bool:
    """Inside a temporary directory (not the directory itself)."""
    return path.startswith(("/tmp/", "/var/tmp/", "/dev/shm/"))


def is_relative(path: str) -> bool:
    """Relative to an unknown working directory."""
    return not path.startswith(("/", HOME, UNKNOWN))


def is_device(path: str) -> bool:
    """A block or character device that stores data (``/dev/sda``, ``/dev/nvme0n1p2``, ...)."""
    if not path.startswith("/dev/") or path == "/dev/":
        return False
    return not _match(path, _SAFE_DEVICES)


def is_network_device(path: str) -> bool:
    """bash's ``/dev/tcp/HOST/PORT`` and ``/dev/udp/...`` pseudo-files."""
    return path.startswith(("/dev/tcp/", "/dev/udp/"))


def is_boot(path: str) -> bool:
    """/boot, /efi or anything below."""
    return _match(path, _BOOT) or path.startswith(("/boot/", "/efi/"))


def is_secret(path: str) -> bool:
    """Private keys, password databases, credentials, Anna's own state, and any backup or
    copy of one (``/etc/shadow.pacsave``, ``~/.ssh/id_rsa.bak``, ``/var/backups/shadow.bak``):
    a secret is secret by what it holds, not by its file name."""
    return _match(path, _SECRET_PATTERNS) or _match(path, PROCESS_SECRETS) or any(
        _match(original, _SECRET_PATTERNS) for original in originals(path))


def is_persistence(path: str) -> bool:
    """Files that make code run later: shell startup files, cron, units, autostart, keys."""
    return _match(path, _PERSISTENCE_PATTERNS)


def is_sensitive_etc(path: str) -> bool:
    """/etc files that govern logins, network, boot, security or packages."""
    return _match(path, _SENSITIVE_ETC)


def is_system(path: str) -> bool:
    """Outside the caller's home and temporary directories: writing it needs root."""
    if in_home(path) or in_tmp(path) or path in ("/tmp", "/var/tmp"):
        return False
    if is_relative(path) or is_unknown_root(path):
        return False
    return path.startswith("/") and not _match(path, _SAFE_DEVICES)


SECRET_PATTERNS = _SECRET_PATTERNS
"""Patterns of secret files (read by :mod:`anna_common.risk.pathglob` to expand wildcards)."""
PERSISTENCE_PATTERNS = _PERSISTENCE_PATTERNS
"""Patterns of files that make code run later."""
LOG_PATTERNS = _LOGS
"""Patterns of logs and histories."""
SENSITIVE_ETC = _SENSITIVE_ETC
"""Patterns of sensitive /etc files."""
BOOT_PATTERNS = _BOOT
"""Patterns of the boot chain."""
