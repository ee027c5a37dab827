"""Seed 000's "NEVER: disable security mechanisms", through the files that configure them.

``setenforce 0`` is caught by its program; the same effect written into a file is caught
here, whatever carries the text (:mod:`anna_common.rules.content`): ``SELINUX=disabled``
into the SELinux config, ``SigLevel = Never`` into pacman's configuration, a ``NOPASSWD``
grant of everything into sudoers, ``apparmor=0`` and friends onto the kernel command line,
ASLR or ptrace protection off through ``/proc/sys`` or ``sysctl.d``, and ``/etc/shadow``
opened to the world. Each is a hard ban. Content Anna cannot know keeps the location's
own verdict (HIGH for every one of these files).
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from typing import TYPE_CHECKING

from anna_common.rules.base import Code, Out
from anna_common.rules.content import file_content, stdin_of, word_text, written_by
from anna_common.rules.shadowperms import shadow_exposed
from anna_common.writes import write_targets

if TYPE_CHECKING:
    from anna_common.paths import Resolved
    from anna_common.shell import Analysis, SimpleCommand
    from anna_common.writes import WriteTarget

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
_SIGLEVEL = re.compile(r"SigLevel\s*=[^\n]*?\b(?:Package|Database)?(?:Never|TrustAll)\b", re.I)
_NOPASSWD_ALL = re.compile(
    r"NOPASSWD\s*:(?:\s*[A-Z_]+\s*:)*[^\n#]*?(?<![\w/.-])(?:ALL\b|(?:/usr)?/s?bin/"
    r"(?:ba|da|z|k|c|tc|fi|mk)?sh\b|sudoedit\b)")
_NO_AUTH = re.compile(r"^\s*Defaults\b[^\n]*!\s*authenticate\b|^\s*ALL\s+[^\s=#]+\s*=", re.M)
_CMDLINE = re.compile(r"(?<![\w.-])(?:(?:apparmor|selinux|enforcing|audit)\s*=\s*0(?!\d)|"
                      r"security\s*=\s*none\b)", re.I)
_SYSCTL_LINE = re.compile(r"([A-Za-z][\w.\-/]*)\s*=\s*[\"']?\s*([-+]?(?:0[xX][0-9a-fA-F]+|\d+))")
_WHAT = {
    "selinux": "switches SELinux off", "pacman": "stops pacman checking package signatures",
    "sudoers": "lets sudo grant everything without a password",
    "cmdline": "switches a security module or auditing off at boot",
    "sysctl": "switches a kernel protection off", "procsys": "switches a kernel protection off",
}
_BOOT_ARG_TOOLS = frozenset({"grubby", "kernelstub", "efibootmgr", "grub-editenv",
                             "grub2-editenv", "kernel-install", "bootctl"})
_REMOVE_OPTS = frozenset({"--remove-args", "-d", "--delete-options", "-r"})


_ROOTS = ("/etc/", "/boot/", "/efi/", "/proc/sys/", "/usr/lib/sysctl.d/", "/lib/sysctl.d/",
          "/run/sysctl.d/", "/usr/local/lib/sysctl.d/")
_EXACT = {re.compile(fnmatch.translate(p)): kind for kind, ps in _FILES.items() for p in ps}


def file_kind(place: Resolved) -> str | None:
    """Which security file ``place`` is (or, for a pattern, can match)."""
    path = place.path
    if not place.glob:
        if not path.startswith(_ROOTS):
            return None  # the common case, answered without matching a pattern
        return next((kind for rx, kind in _EXACT.items() if rx.match(path)), None)
    for kind, patterns in _FILES.items():
        for pattern in patterns:
            if fnmatch.fnmatchcase(path, pattern):
                return kind
            if place.glob and _glob_hits(path, pattern):
                return kind
    return None


def _glob_hits(glob: str, pattern: str) -> bool:
    """Whether the shell pattern ``glob`` can name a file that ``pattern`` describes."""
    if fnmatch.fnmatchcase(pattern.replace("*", "anna.conf"), glob):
        return True
    if pattern.endswith("/*"):
        return fnmatch.fnmatchcase(pattern[:-2], posixpath.dirname(glob))
    return False


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
        match = _SIGLEVEL.search(text)
    elif kind == "sudoers":
        match = _NOPASSWD_ALL.search(text) or _NO_AUTH.search(text)
    elif kind == "cmdline":
        match = _CMDLINE.search(text)
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


def security_writes(cmd: SimpleCommand, analysis: Analysis, out: Out) -> None:
    """Ban writes whose content (or permission change) switches a security mechanism off."""
    for target in write_targets(cmd):
        for place in out.paths(target.word):
            kind = file_kind(place)
            if kind is not None and _judge_target(cmd, target, kind, place.path, analysis, out):
                return
    prog = cmd.program or ""
    if prog in _BOOT_ARG_TOOLS:
        _boot_args(cmd, out)
    elif prog == "sysctl":
        _sysctl_files(cmd, analysis, out)
    elif prog == "visudo":
        texts = stdin_of(cmd, analysis, out)
        hit = disabling("sudoers", texts or [], "")
        if hit:
            _ban(out, "sudoers", hit, "/etc/sudoers")


def _judge_target(cmd: SimpleCommand, target: WriteTarget, kind: str, path: str,
                  analysis: Analysis, out: Out) -> bool:
    if kind == "shadow":
        why = shadow_exposed(cmd, target, out)
        if why:
            out.ban(Code.BAN_SECURITY_DISABLE, f"{why} {path}: every user could read or "
                    "change the password hashes", target=path)
            return True
        return False
    if target.how == "edit" and cmd.program == "sed":
        hit = sed_disables(kind, cmd, out)
    else:
        texts = written_by(cmd, target.word, analysis, out)
        hit = disabling(kind, texts or [], path)
    if hit:
        _ban(out, kind, hit, path)
        return True
    return False


def _ban(out: Out, kind: str, hit: str, path: str) -> None:
    out.ban(Code.BAN_SECURITY_DISABLE, f"writes {hit!r} into {path}, which "
            f"{_WHAT.get(kind, 'switches a security mechanism off')}", target=path)


_S_COMMAND = re.compile(r"s(.)((?:\\.|(?!\1).)*)\1((?:\\.|(?!\1).)*)\1")
_TEXT_COMMAND = re.compile(r"(?:^|[;\n{}])\s*(?:\d+|\$|/(?:[^/\\\n]|\\.)*/)?\s*[aic]\\?\s*"
                           r"([^\n]*)")
_VALUE_WORDS = {
    "selinux": re.compile(r"\b(?:disabled|permissive)\b", re.I),
    "pacman": re.compile(r"\b(?:Package|Database)?(?:Never|TrustAll)\b", re.I),
    "sudoers": re.compile(r"NOPASSWD|!\s*authenticate"),
}


def sed_scripts(cmd: SimpleCommand, out: Out) -> list[str]:
    """The script a sed command runs (``-e X``, ``--expression=X`` or the first operand);
    several ``-e`` join with newlines as sed joins them (``-e 'a\\' -e TEXT``)."""
    scripts: list[str] = []
    args = cmd.args
    for i, word in enumerate(args):
        if word.text in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(word_text(args[i + 1], out))
        elif word.text.startswith("--expression="):
            scripts.append(word.text.split("=", 1)[1])
    if not scripts:
        first = next((w for w in args if not w.text.startswith("-")), None)
        scripts = [word_text(first, out)] if first is not None else []
    return ["\n".join(scripts)] if scripts else []


def sed_disables(kind: str, cmd: SimpleCommand, out: Out) -> str | None:
    """A sed edit whose replacement (or appended text) produces a disabling setting.

    The file's current text is unknown, so a replacement that only supplies the value
    (``s/enforcing/disabled/``, ``s/Required/Never/``) counts, and so does uncommenting
    or back-referencing a line the script names as a NOPASSWD grant.
    """
    for script in sed_scripts(cmd, out):
        candidates: list[str] = []
        for match in _S_COMMAND.finditer(script):
            pattern, replacement = match.group(2), match.group(3)
            expanded = re.sub(r"\\[1-9]|(?<!\\)&", lambda _m, p=pattern: p, replacement)
            candidates.append(expanded.replace("\\/", "/"))
            if _value_word(kind, script, pattern, replacement):
                return f"s/{pattern}/{replacement}/"[:80]
        candidates += [m.group(1) for m in _TEXT_COMMAND.finditer(script)]
        hit = disabling(kind, candidates)
        if hit:
            return hit
    return None


def _value_word(kind: str, script: str, pattern: str, replacement: str) -> bool:
    words = _VALUE_WORDS.get(kind)
    if words is not None and words.search(replacement):
        return True
    if kind == "sudoers" and "NOPASSWD" in script:
        return bool(re.search(r"\\[1-9]|(?<!\\)&", replacement)) or pattern.lstrip(
            "^ \t").startswith("#") or re.search(r"\^\s*\\?#|^#", pattern) is not None
    if kind == "sysctl":
        keys = [k for k in SYSCTL_OFF if k in script.replace("/", ".") or
                k.rsplit(".", 1)[-1] in script]
        return any(re.search(rf"(?<![\d.-]){v}(?![\d.])", replacement)
                   for k in keys for v in SYSCTL_OFF[k])
    if kind == "cmdline":
        return bool(_CMDLINE.search(re.sub(r"\\[1-9]|(?<!\\)&", "", replacement)))
    return False


def _boot_args(cmd: SimpleCommand, out: Out) -> None:
    """``grubby --args=apparmor=0``, ``kernelstub -a selinux=0``, ``efibootmgr -u ...``."""
    skip = False
    for word in cmd.args:
        text = word_text(word, out)
        if skip:
            skip = False
            continue
        if text in _REMOVE_OPTS:
            skip = True
            continue
        if text.startswith("--remove-args="):
            continue
        match = _CMDLINE.search(text)
        if match:
            out.ban(Code.BAN_SECURITY_DISABLE, f"{cmd.program} puts {match.group(0)!r} on the "
                    "kernel command line, switching a security module or auditing off",
                    target=cmd.program)
            return


def _sysctl_files(cmd: SimpleCommand, analysis: Analysis, out: Out) -> None:
    """``sysctl -p FILE`` / ``--load=FILE`` where FILE was written earlier in the command."""
    args = cmd.args
    for i, word in enumerate(args):
        source = None
        if word.text in ("-p", "--load", "-f") and i + 1 < len(args):
            source = args[i + 1]
        elif word.text.startswith("--load="):
            source = word.after(len("--load="))
        if source is None:
            continue
        texts = file_content(source, cmd, analysis, out)
        hit = disabling("sysctl", texts or [])
        if hit:
            _ban(out, "sysctl", hit, source.text)
            return
