"""The settings that switch a security mechanism off, and the files that hold them.

Shared by :mod:`anna_common.risk.rules.hardening` (what a command writes),
:mod:`anna_common.risk.rules.editscripts` (what an in-place edit produces) and, through
:mod:`anna_common.risk.content.meaning`, the daemon's judge of what a step really wrote.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from typing import TYPE_CHECKING

from anna_common.risk.pathglob import lead

if TYPE_CHECKING:
    from anna_common.risk.paths import Resolved

_LSM_KNOBS: dict[str, re.Pattern[str]] = {
    "/sys/fs/selinux/enforce": re.compile(r"^\s*[+]?0*(?:\s|$)"),
    "/selinux/enforce": re.compile(r"^\s*[+]?0*(?:\s|$)"),
    "/sys/fs/selinux/disable": re.compile(r"^\s*[+]?0*[1-9]"),
    "/selinux/disable": re.compile(r"^\s*[+]?0*[1-9]"),
    "/sys/module/apparmor/parameters/enabled": re.compile(r"^\s*(?:[nN0]|off\b)"),
    "/sys/module/apparmor/parameters/mode": re.compile(r"^\s*complain\b"),
}
"""Kernel knobs of the security modules and the values that switch them off (SELinux reads
``enforce`` as a number, 0 is permissive; AppArmor's parameters as booleans and modes)."""

_FILES: dict[str, tuple[str, ...]] = {
    "selinux": ("/etc/selinux/config", "/etc/sysconfig/selinux"),
    "pacman": ("/etc/pacman.conf", "/etc/pacman.d/*"),
    "sudoers": ("/etc/sudoers", "/etc/sudoers.d/*", "/etc/sudoers.tmp"),
    "cmdline": ("/etc/default/grub", "/etc/default/grub.d/*", "/boot/loader/entries/*",
                "/efi/loader/entries/*", "/boot/efi/loader/entries/*", "/etc/kernel/cmdline",
                "/etc/kernel/cmdline.d/*", "/boot/refind_linux.conf", "/boot/grub/grub.cfg",
                "/boot/grub2/grub.cfg", "/etc/grub.d/*", "/boot/cmdline.txt",
                "/boot/firmware/cmdline.txt", "/etc/cmdline.d/*", "/boot/grub/grubenv",
                "/boot/grub2/grubenv"),
    "sysctl": ("/etc/sysctl.conf", "/etc/sysctl.d/*", "/usr/lib/sysctl.d/*", "/lib/sysctl.d/*",
               "/run/sysctl.d/*", "/usr/local/lib/sysctl.d/*"),
    "procsys": ("/proc/sys/*",),
    "shadow": ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"),
    "sshd": ("/etc/ssh/sshd_config", "/etc/ssh/sshd_config.d/*", "/etc/sshd_config"),
    "pam": ("/etc/pam.d/*", "/etc/pam.conf", "/usr/lib/pam.d/*", "/lib/pam.d/*",
            "/usr/share/pam.d/*", "/etc/security/pam_*"),
    "lsm": (*_LSM_KNOBS, "/sys/kernel/security/apparmor/.remove"),
}

SYSCTL_OFF: dict[str, frozenset[str]] = {
    "kernel.randomize_va_space": frozenset({"0", "1"}),
    "kernel.yama.ptrace_scope": frozenset({"0"}),
    "kernel.kptr_restrict": frozenset({"0"}),
    "fs.protected_symlinks": frozenset({"0"}),
    "fs.protected_hardlinks": frozenset({"0"}),
    "fs.protected_regular": frozenset({"0"}),
    "fs.protected_fifos": frozenset({"0"}),
    "kernel.unprivileged_bpf_disabled": frozenset({"0"}),
}
"""Kernel tunables and the values that switch a protection off (ASLR 1 is only partial)."""

_SELINUX = re.compile(r"(?<![\w])SELINUX\s*=\s*[\"']?(?:disabled|permissive)\b", re.I)
_SIGLEVEL = re.compile(r"SigLevel\s*+=", re.I)
_SIGLEVEL_OFF = re.compile(r"\b(?:Package|Database)?(?:Never|TrustAll)\b", re.I)
_GRANT_ALL = re.compile(r"ALL|sudoedit|(?:/usr)?/s?bin/(?:ba|da|z|k|c|tc|fi|mk)?sh")
"""A command in a ``NOPASSWD:`` list that grants everything: ``ALL``, a shell, sudoedit."""
_SPLIT = re.compile(r"[\s,:()=!]+")


def _nopasswd_all(text: str) -> str | None:
    """``NOPASSWD:`` followed, on its line, by a command that grants everything. One pass
    over each line from its first ``NOPASSWD`` (a pattern with a repeated group and a lazy
    tail took cubic time on ``NOPASSWD:`` repeated)."""
    for line in text.split("\n"):
        start = line.find("NOPASSWD")
        if start < 0:
            continue
        rest = line[start + len("NOPASSWD"):].split("#", 1)[0]
        if not rest.lstrip().startswith(":"):
            continue
        for token in _SPLIT.split(rest):
            if token and _GRANT_ALL.fullmatch(token):
                return f"NOPASSWD: {token}"
    return None


_NO_AUTH = re.compile(r"^\s*Defaults\b[^\n]*!\s*authenticate\b|^\s*ALL\s+[^\s=#]+\s*=", re.M)
CMDLINE = re.compile(r"(?<![\w.-])(?:(?:apparmor|selinux|enforcing|audit)\s*=\s*0(?!\d)|"
                      r"security\s*=\s*none\b)", re.I)
_SSHD_WEAK = re.compile(
    r"(?:^|[\n;])[ \t]*+(?:(?:PermitRootLogin|PermitEmptyPasswords|PasswordAuthentication|"
    r"HostbasedAuthentication|PermitUserEnvironment)(?=[ \t=])[ \t]*+(?:=[ \t]*+)?"
    r"[\"']?yes\b|"
    r"(?:IgnoreRhosts|StrictModes)(?=[ \t=])[ \t]*+(?:=[ \t]*+)?[\"']?no\b)", re.I)
"""(Possessive quantifiers: the separators are read once, so a line of spaces costs a pass,
not its square.)"""
_SSHD_INCLUDE = re.compile(r"(?:^|[\n;])[ \t]*+Include[ \t]*+(?:=[ \t]*+)?[\"']?"
                           r"(?!/etc/ssh/)\S", re.I)
"""``Include`` of a file outside ``/etc/ssh``: settings Anna cannot see (``/tmp/x.conf``)."""
SSHD_KEYS = re.compile(r"PermitRootLogin|PermitEmptyPasswords|PasswordAuthentication|"
                       r"HostbasedAuthentication|PermitUserEnvironment", re.I)
"""sshd settings that let in who should not get in: root by password, empty passwords,
password guessing, host-based trust, world-writable keys, login-time environment."""
_PAM_PERMIT = re.compile(
    r"(?:^|\n)[ \t]*(?!#)[^\n#]*(?:\bpam_permit\.so\b|"
    r"\s(?!/(?:usr/)?lib(?:64|32)?/(?:[\w-]+/)?security/)/\S+\.so\b|"
    r"(?:^|\s)@?(?:include|substack)\s+(?!/etc/pam\.d/)/\S+)")
"""An active line of a PAM stack that lets anyone through (``pam_permit.so``), loads a module
from outside the system's module directories (``auth sufficient /tmp/x.so``), or pulls in a
stack from outside ``/etc/pam.d`` (``auth include /tmp/p``)."""
_SYSCTL_LINE = re.compile(r"(?<![\w.\-/])([A-Za-z][\w.\-/]*+)\s*+=\s*+[\"']?\s*+"
                          r"([-+]?(?:0[xX][0-9a-fA-F]+|\d+))")
WHAT = {
    "selinux": "switches SELinux off", "pacman": "stops pacman checking package signatures",
    "sudoers": "lets sudo grant everything without a password",
    "cmdline": "switches a security module or auditing off at boot",
    "sysctl": "switches a kernel protection off", "procsys": "switches a kernel protection off",
    "sshd": "opens SSH logins to root, empty or guessable passwords",
    "pam": "lets anyone through a login check (pam_permit)",
    "lsm": "switches SELinux or AppArmor off",
}
_ROOTS = ("/etc/", "/boot/", "/efi/", "/proc/sys/", "/usr/lib/sysctl.d/", "/lib/sysctl.d/",
          "/run/sysctl.d/", "/usr/local/lib/sysctl.d/", "/usr/lib/pam.d/", "/lib/pam.d/",
          "/usr/share/pam.d/", "/sys/", "/selinux/")
_KINDS = [kind for kind, ps in _FILES.items() for _ in ps]
_EXACT = re.compile("|".join(f"(?P<k{i}>{fnmatch.translate(p)})"
                             for i, p in enumerate(p for ps in _FILES.values() for p in ps)))
"""Every file pattern in one regex, in table order: the first alternative that matches is
the first pattern in the table that does (its group ``k<index>`` names the kind)."""


def kind_of_path(path: str) -> str | None:
    """Which security file the literal path ``path`` is (None: none)."""
    if not path.startswith(_ROOTS):
        return None  # the common case, answered without matching a pattern
    match = _EXACT.match(path)
    return _KINDS[int(match.lastgroup[1:])] if match and match.lastgroup else None


def file_kind(place: Resolved) -> str | None:
    """Which security file ``place`` is (or, for a pattern, can match)."""
    path = place.path
    if not place.glob:
        return kind_of_path(path)
    # each test below first compares the literal starts (a match must share them), so a
    # command of hundreds of distinct globs is not matched against every file pattern
    own, parent = lead(path), posixpath.dirname(path)
    top = own.split("/", 2)
    if own and (top[0] or (len(top) > 2 and top[1] not in _TOPS)):
        return None  # a relative path, or under a directory no file pattern is in
    parent_own = parent[:len(own)]
    for kind, pattern, pattern_own, sample, pattern_dir in _GLOB_TABLE:
        if path.startswith(pattern_own) and fnmatch.fnmatchcase(path, pattern):
            return kind
        # the glob can name a file the pattern describes, or the pattern's directory
        if sample.startswith(own) and fnmatch.fnmatchcase(sample, path):
            return kind
        if pattern_dir is not None and pattern_dir.startswith(parent_own) and \
                fnmatch.fnmatchcase(pattern_dir, parent):
            return kind
    return None


_GLOB_TABLE = [(kind, pattern, lead(pattern), pattern.replace("*", "anna.conf"),
                pattern[:-2] if pattern.endswith("/*") else None)
               for kind, patterns in _FILES.items() for pattern in patterns]
"""Each file pattern with its literal start, a sample file it describes and, for ``dir/*``,
its directory."""
_TOPS = frozenset(p.split("/")[1] for ps in _FILES.values() for p in ps)
"""The first directory of every file pattern (each is absolute and starts with a literal
name): what a glob's literal start must name, when it names a whole one, to match any."""


def disabling(kind: str, texts: list[str], path: str = "") -> str | None:
    """The setting among ``texts`` that switches a mechanism off, if any."""
    for text in texts:
        hit = _disabling_one(kind, text, path)
        if hit:
            return hit
    return None


def _disabling_one(kind: str, text: str, path: str) -> str | None:
    if kind == "selinux":
        match = _SELINUX.search(text)
    elif kind == "pacman":
        match = _siglevel_off(text)
    elif kind == "sudoers":
        hit = _nopasswd_all(text)
        if hit:
            return hit
        match = _NO_AUTH.search(text)
    elif kind == "cmdline":
        match = CMDLINE.search(text)
    elif kind == "sshd":
        match = _SSHD_WEAK.search(text) or _SSHD_INCLUDE.search(text)
    elif kind == "pam":
        match = _PAM_PERMIT.search(text)
    elif kind == "lsm":
        return lsm_off(path, text)
    elif kind == "sysctl":
        return sysctl_off(text)
    elif kind == "procsys":
        value = kernel_number(text.strip().split()[0] if text.strip() else "")
        for key in _proc_keys(path):
            if value in SYSCTL_OFF[key]:
                return f"{key}={value}"
        return None
    else:
        return None
    return match.group(0).strip()[:80] if match else None


def _siglevel_off(text: str) -> re.Match[str] | None:
    """``SigLevel = … Never`` on one line; each line is read once from its first SigLevel."""
    position = 0
    while (level := _SIGLEVEL.search(text, position)) is not None:
        end = text.find("\n", level.end())
        end = len(text) if end < 0 else end
        found = _SIGLEVEL_OFF.search(text, level.end(), end)
        if found is not None:
            return found
        position = end
    return None


def kernel_number(text: str) -> str:
    """A number as the kernel's sysctl parser reads it (base 0: ``00``, ``0x0`` are 0)."""
    text = text.strip().lstrip("+")
    try:
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", text):
            return str(int(text, 16))
        if re.fullmatch(r"0[0-7]+", text):
            return str(int(text, 8))
        return str(int(text, 10)) if re.fullmatch(r"-?\d+", text) else text
    except ValueError:
        return text


def _proc_keys(path: str) -> list[str]:
    """The protected tunables a ``/proc/sys`` path (or pattern) can name."""
    return [key for key in SYSCTL_OFF
            if fnmatch.fnmatchcase("/proc/sys/" + key.replace(".", "/"), path)]


def sysctl_off(text: str) -> str | None:
    """``key = value`` settings in ``text`` that switch a kernel protection off."""
    for match in _SYSCTL_LINE.finditer(text):
        key = match.group(1).strip("-").replace("/", ".")
        value = kernel_number(match.group(2))
        if value in SYSCTL_OFF.get(key, frozenset()):
            return f"{key}={value}"
    return None


def lsm_off(path: str, text: str) -> str | None:
    """The value written into a security module's knob that switches it off (any text
    written to AppArmor's ``.remove`` unloads a profile)."""
    if path.endswith("/apparmor/.remove"):
        return f"{text.strip()[:40]} (profile removed)"
    for knob, value in _LSM_KNOBS.items():
        if fnmatch.fnmatchcase(knob, path) and value.search(text):
            return f"{text.strip()[:20] or repr(text)} into {knob}"
    return None
