"""Files that grant, trust or point somewhere: what their lines let in.

- ``/etc/environment`` and ``environment.d``: a library preloaded into every program, a
  search path (``PATH``, ``PYTHONPATH``…) through a directory another user can change;
- ``ld.so.preload``: a library loaded into every program (setuid ones too); ``ld.so.conf``:
  a library directory another user can change;
- ``sudo.conf``: a plugin from outside the system's library directories, a helper another
  user can change;
- polkit: a rule that says yes to every action for everyone;
- tmpfiles.d: each line *writes another file at every boot* (``f``, ``w``, ``L``, ``C``,
  ``R``, ``Z``…): judged as that write, so a sudoers grant through tmpfiles.d is the grant;
- apt and rpm repositories: signature checks switched off; keyrings and CA stores: a new
  trust anchor (HIGH: whose key it is, Anna cannot tell).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
import shlex
from typing import TYPE_CHECKING

from anna_common.risk.content.base import Finding, Reader
from anna_common.risk.content.code import command_findings
from anna_common.risk.content.kinds import PATH_DIRS, RUNS_OR_GRANTS, kind_of
from anna_common.risk.rules.content import unescape

if TYPE_CHECKING:
    from collections.abc import Callable

_ENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
_PRELOAD_VARS = frozenset({"LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "BASH_ENV", "ENV"})
_SEARCH_VARS = frozenset({"PATH", "PYTHONPATH", "PERL5LIB", "PERLLIB", "RUBYLIB",
                          "NODE_PATH", "GCONV_PATH", "PYTHONSTARTUP", "PYTHONHOME"})
_SYSTEM_LIBS = re.compile(r"^/(?:usr/)?(?:lib|libexec)(?:64|32|x32)?/")
_SUDOERS_INCLUDE = re.compile(r"^\s*[#@]include(?:dir)?\s+\"?(?!/etc/)\S")
_SUDOERS_LOADER = re.compile(r"\b(?:LD_|PYTHON|PERL5|BASH_ENV)")
_POLKIT_YES = re.compile(r"polkit\.Result\.YES\b")
_POLKIT_WHO = re.compile(r"\bsubject\s*\.\s*(?:user|isInGroup|local|active)\b|\baction\s*\.\s*id\b")
_PKLA_YES = re.compile(r"^\s*Result(?:Any|Active|Inactive)\s*=\s*yes\b", re.I)
_PKLA_ANYONE = re.compile(r"^\s*Identity\s*=.*unix-(?:user|group):\*", re.I)
_APT_TRUSTED = re.compile(r"(?:\[|\s)(?:trusted|allow-insecure|allow-weak)\s*=\s*yes\b|"
                          r"^\s*(?:Trusted|Allow-Insecure|Allow-Weak)\s*:\s*yes\b", re.I)
_RPM_NOCHECK = re.compile(r"^\s*(?:gpgcheck|pkg_gpgcheck)\s*=\s*(?:0|false|no)\b", re.I)
_TMPFILES_TYPE = re.compile(r"^([A-Za-z])(\+?)([-!=~^$?]*)$")


def _new(rule: str, why: str, line: int, *, banned: bool = True,
         code: str = "BAN_UNTRUSTED_CODE") -> Finding:
    return Finding(rule, code, banned, why, line)


def settings_extra(kind: str, lines: list[str], _reader: Reader) -> list[Finding]:
    """What the settings patterns do not cover: sudoers pulling in rules from outside /etc,
    or keeping a loader variable through sudo."""
    if kind != "sudoers":
        return []
    for number, line in enumerate(lines, 1):
        if _SUDOERS_INCLUDE.match(line):
            return [_new("sudoers.include", "pulls sudo rules in from outside /etc", number,
                         code="BAN_SECURITY_DISABLE")]
        keep = line.find("env_keep")
        if line.lstrip().startswith("Defaults") and keep >= 0 and \
                _SUDOERS_LOADER.search(line, keep):
            return [_new("sudoers.env", "keeps a loader or interpreter variable through sudo "
                         "(any user's code in root's programs)", number,
                         code="BAN_SECURITY_DISABLE")]
    return []


def _entries(value: str) -> list[str]:
    return [p for p in re.split(r"[:\s]+", value.strip().strip("\"'")) if p]


def environment(_path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """``KEY=VALUE`` lines every login session (root's too) starts with."""
    for number, line in enumerate(lines, 1):
        match = _ENV_LINE.match(line)
        if not match:
            continue
        name, value = match.group(1), match.group(2)
        if name in _PRELOAD_VARS and value.strip().strip("\"'"):
            return [_new("environment.preload", "loads a library or a script into every "
                         "program started", number)]
        if name in _SEARCH_VARS and any(reader.other_writable(p) for p in _entries(value)):
            return [_new("environment.search-path", "puts a directory another user can "
                         "change on a search path of every program", number)]
    return []


def ldpreload(_path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """Every library named is loaded into every program, setuid ones included."""
    for number, line in enumerate(lines, 1):
        for entry in _entries(line.split("#", 1)[0]):
            if reader.other_writable(entry):
                return [_new("ldpreload.untrusted", "loads a library another user can "
                             "change into every program", number)]
            return [_new("ldpreload.library", "loads a library into every program", number,
                         banned=False, code="LIBRARY_PRELOAD")]
    return []


def ldconf(_path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """Library directories searched before the system's for every program."""
    for number, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        for entry in words[1:] if words[:1] == ["include"] else words:
            if reader.other_writable(entry):
                return [_new("ldconf.untrusted", "searches a library directory another user "
                             "can change for every program", number)]
    return []


def sudoconf(_path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """sudo's own plugins and helper programs."""
    for number, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if len(words) >= 3 and words[0] == "Plugin" and words[2].startswith("/") and \
                not _SYSTEM_LIBS.match(words[2]):
            return [_new("sudoconf.plugin", "loads a sudo plugin from outside the system's "
                         "library directories", number, code="BAN_SECURITY_DISABLE")]
        if len(words) >= 3 and words[0] == "Path" and reader.other_writable(words[2]):
            return [_new("sudoconf.path", "makes sudo run a helper another user can change",
                         number)]
        if len(words) >= 3 and words[0] == "Plugin" and reader.other_writable(words[2]):
            return [_new("sudoconf.plugin", "loads a sudo plugin another user can change",
                         number)]
    return []


def polkit(_path: str, text: str, _lines: list[str], _reader: Reader) -> list[Finding]:
    """A JavaScript rule that answers yes without asking who or what: every action, everyone."""
    yes = _POLKIT_YES.search(text)
    if yes and not _POLKIT_WHO.search(text):
        return [_new("polkit.yes-to-all", "grants every privileged action to every user "
                     "without a password", text.count("\n", 0, yes.start()) + 1,
                     code="BAN_SECURITY_DISABLE")]
    return []


def pkla(_path: str, _text: str, lines: list[str], _reader: Reader) -> list[Finding]:
    """A local-authority file granting actions to any user."""
    yes = next((i for i, line in enumerate(lines, 1) if _PKLA_YES.match(line)), 0)
    if yes and any(_PKLA_ANYONE.match(line) for line in lines):
        return [_new("polkit.yes-to-all", "grants privileged actions to every user without a "
                     "password", yes, code="BAN_SECURITY_DISABLE")]
    return []


def _by_pattern(rule: str, pattern: re.Pattern[str], why: str
                ) -> Callable[[str, str, list[str], Reader], list[Finding]]:
    def read(_path: str, _text: str, lines: list[str], _reader: Reader) -> list[Finding]:
        number = next((i for i, line in enumerate(lines, 1) if pattern.search(line)), 0)
        return [_new(rule, why, number, code="BAN_SECURITY_DISABLE")] if number else []
    return read


def trust(_path: str, _text: str, _lines: list[str], _reader: Reader) -> list[Finding]:
    """A keyring or certificate store: a new trust anchor for packages or TLS."""
    return [_new("trust.anchor", "changes whom the machine trusts to sign packages or "
                 "certificates", 0, banned=False, code="SECURITY_CONFIG")]


def tmpfiles(_path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """Each line acts on another path at every boot: judged as that act."""
    found: list[Finding] = []
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        # six fields, then the argument as the rest of the line (tmpfiles.d(5)); quotes only
        # in the fields (shlex on them alone: it is slow on a long argument)
        words = stripped.split(None, 6)
        if any(q in " ".join(words[:6]) for q in "\"'"):
            with contextlib.suppress(ValueError):
                words = [*shlex.split(" ".join(words[:6])), *words[6:]]
        head = _TMPFILES_TYPE.match(words[0]) if words else None
        if head is None or len(words) < 2:
            continue
        kind, modifiers, target = head.group(1), head.group(3), words[1]
        mode = words[2] if len(words) > 2 else "-"
        argument = words[6] if len(words) > 6 else ""
        found.extend(_tmpfiles_line(kind, modifiers, target, mode, argument, reader, number))
    return found


def _tmpfiles_line(kind: str, modifiers: str, target: str, mode: str, argument: str,
                   reader: Reader, number: int) -> list[Finding]:
    governing = kind_of(target) in RUNS_OR_GRANTS
    if kind in "bc":
        return [_new("tmpfiles.device", "makes a device node (a way to the disk below every "
                     "file)", number, code="BAN_DISK_WRITE")]
    if kind in "fFwW":
        text = unescape(argument)
        if "~" in modifiers:
            try:
                text = base64.b64decode(argument, validate=False).decode("utf-8", "replace")
            except (binascii.Error, ValueError):
                text = ""
        inner = reader.inner(kind_of(target) or "", target, text, reader) \
            if governing and reader.inner is not None else []
        out = [Finding("tmpfiles.writes", f.code, f.banned, f"writes {target} at every boot, "
                       f"which {f.why}", number) for f in inner]
        if governing and not any(f.banned for f in out):
            out.append(_new("tmpfiles.writes", f"writes {target} at every boot", number,
                            banned=False, code="PERSISTENCE"))
        return out
    if kind in "LC" and (governing or target.rstrip("/") in PATH_DIRS):
        source = argument.strip()
        if kind == "L" and source and reader.other_writable(source):
            return [_new("tmpfiles.links", f"links {target} to a file another user can "
                         "change, at every boot", number)]
        return [_new("tmpfiles.links", f"replaces {target} at every boot", number,
                     banned=False, code="PERSISTENCE")]
    return _tmpfiles_attrs(kind, target, mode, reader, number)


def _tmpfiles_attrs(kind: str, target: str, mode: str, reader: Reader, number: int
                    ) -> list[Finding]:
    """Removal and mode lines, as the ``rm``/``chmod`` they are."""
    if kind in "rR":
        command = f"rm {'-rf' if kind == 'R' else '-f'} -- {shlex.quote(target)}"
        return [Finding("tmpfiles.removes", f.code, f.banned, f.why, number)
                for f in command_findings(command, reader, "tmpfiles.removes", number)]
    digits = mode.lstrip("~:")
    if kind in "dDezZvqQmaA" and re.fullmatch(r"[0-7]{3,4}", digits) and \
            int(digits, 8) & 0o022 and (kind_of(target) in RUNS_OR_GRANTS or
                                        target.rstrip("/") in PATH_DIRS):
        return [_new("tmpfiles.mode", f"makes {target} writable by other users at every boot",
                     number, code="BAN_SYSTEM_PERMISSIONS")]
    command = f"chmod {'-R ' if kind == 'Z' else ''}{digits} -- {shlex.quote(target)}" \
        if re.fullmatch(r"[0-7]{3,4}", digits) else ""
    return [Finding("tmpfiles.mode", f.code, f.banned, f.why, number)
            for f in command_findings(command, reader, "tmpfiles.mode", number)]


HANDLERS: dict[str, Callable[[str, str, list[str], Reader], list[Finding]]] = {
    "environment": environment, "ldpreload": ldpreload, "ldconf": ldconf,
    "sudoconf": sudoconf, "polkit": polkit, "pkla": pkla, "tmpfiles": tmpfiles,
    "trust": trust,
    "aptsources": _by_pattern("aptsources.unsigned", _APT_TRUSTED,
                              "lets apt install packages nobody signed"),
    "rpmrepo": _by_pattern("rpmrepo.unsigned", _RPM_NOCHECK,
                           "stops the package manager checking package signatures"),
}
"""Kind → the reader of its grants."""
