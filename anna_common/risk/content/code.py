"""Files that run code later: the commands in them are judged as commands.

A cron line, a unit's ``ExecStart=``, a udev ``RUN+=``, an autostart ``Exec=``, a logrotate
``postrotate`` script, a git command key, an apt hook, a ``.pth`` import line and the whole of
a shell start-up file all become commands some program runs later, often as root. Each is
assessed by the classifier that judges a plan's own commands
(:func:`anna_common.risk.assess.assess`): a command the seed bans is banned here too, and a
program another user can change, run by root, is banned as untrusted code.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING

from anna_common.risk.content.base import CHUNK, Finding, Reader, judge_command

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_CRON_ENV = re.compile(r"^\s*[A-Za-z_][A-Za-z0-9_]*\s*=")
_UNIT_EXEC = re.compile(r"^\s*(Exec(?:Start|StartPre|StartPost|Stop|StopPost|Reload|Condition)"
                        r")\s*=\s*(.*)$")
_UDEV_RUN = re.compile(r"\b(?:RUN|PROGRAM|IMPORT\{program\})(?:\{[a-z]+\})?\s*[+:=]?=\s*"
                       r"\"([^\"]*)\"")
_DESKTOP_EXEC = re.compile(r"^\s*(?:Exec|TryExec)\s*=\s*(.*)$")
_LOGROTATE_OPEN = re.compile(r"^\s*(?:pre|post)rotate\b|^\s*(?:first|last)action\b|"
                             r"^\s*preremove\b")
_LOGROTATE_CLOSE = re.compile(r"^\s*endscript\b")
_GIT_SECTION = re.compile(r"^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+\"[^\"]*\")?\s*\]")
_GIT_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$")
_GIT_RUNS = frozenset({"core.fsmonitor", "core.sshcommand", "core.pager", "core.editor",
                       "core.askpass", "sequence.editor", "gpg.program", "diff.external",
                       "credential.helper", "filter.clean", "filter.smudge", "filter.process",
                       "diff.textconv", "merge.driver", "pager.log", "pager.diff",
                       "pager.show", "web.browser", "instaweb.httpd"})
_GIT_PATHS = frozenset({"core.hookspath", "include.path", "includeif.path"})
_APT_HOOK = re.compile(r"(?:Pre|Post)-Invoke(?:-Success)?\b[^{\n]*\{?([^}\n]*)", re.I)
_APT_QUOTED = re.compile(r"\"([^\"]*)\"")


def _assessed(command: str, reader: Reader, rule: str, line: int) -> list[Finding]:
    """The command's own verdict: a ban is a ban."""
    banned, codes = judge_command(command, reader.ctx)
    if not banned:
        if "TOO_LARGE" in codes:
            return [Finding("content.command-too-large", "TOO_LARGE", False, "runs code too "
                            "large for Anna to read whole", line)]
        return []
    code = next((c for c in codes if c.startswith("BAN_")), "BAN_UNTRUSTED_CODE")
    return [Finding(rule, code, True, f"runs a command the seed bans ({code})", line)]


def _program(command: str, reader: Reader, rule: str, line: int) -> list[Finding]:
    """A program another user can change, started later (as root, often): banned."""
    # the first word that is not an assignment (``A=b prog``), its quotes dropped: str.split
    # reads a 16 KiB line at C speed, where shlex would walk it character by character
    program = next((w.strip("\"'") for w in command.split(None, 8)
                    if "=" not in w or w.startswith(("/", "\"/", "'/"))), "")
    if program.startswith("/") and reader.other_writable(program):
        return [Finding(rule, "BAN_UNTRUSTED_CODE", True,
                        "runs a program another user can change", line)]
    return []


def command_findings(command: str, reader: Reader, rule: str, line: int) -> list[Finding]:
    """A command found in a file: its program, then its own verdict."""
    command = command.strip()
    if not command:
        return []
    return _program(command, reader, rule, line) or _assessed(command, reader, rule, line)


def _chunks(lines: list[str]) -> Iterator[tuple[int, str]]:
    """Shell text in pieces the classifier can take whole: (first line, text)."""
    start, size = 1, 0
    piece: list[str] = []
    for number, line in enumerate(lines, 1):
        if piece and size + len(line) + 1 > CHUNK:
            yield start, "\n".join(piece)
            start, piece, size = number, [], 0
        piece.append(line)
        size += len(line) + 1
    if piece:
        yield start, "\n".join(piece)


def shell(_path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """A shell start-up file, cron script or generator: its text is run as it stands."""
    found: list[Finding] = []
    for start, piece in _chunks(lines):
        if piece.strip():
            found.extend(_assessed(piece, reader, "shell.runs-banned", start))
    return found


def _cron(lines: list[str], reader: Reader, fields: int) -> list[Finding]:
    found: list[Finding] = []
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or _CRON_ENV.match(stripped):
            continue
        words = stripped.split(None, 1 if stripped.startswith("@") else fields)
        if stripped.startswith("@") and fields == 6 and len(words) == 2:
            words = [words[0], *words[1].split(None, 1)]
        command = words[-1] if len(words) > (2 if stripped.startswith("@") else fields) else ""
        # cron turns an unescaped % into a newline (what follows is the command's input)
        command = command.split("%", 1)[0] if "\\%" not in command else command
        found.extend(command_findings(command, reader, "cron.runs", number))
    return found


def crontab(_path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """``/etc/crontab`` and ``/etc/cron.d``: five times, a user, the command."""
    return _cron(lines, reader, 6)


def usercron(_path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """A user's crontab: five times, the command."""
    return _cron(lines, reader, 5)


def unit(_path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """A systemd unit or drop-in: each ``Exec*=`` line (its prefixes ``-@:+!|`` dropped)."""
    found: list[Finding] = []
    for number, line in enumerate(lines, 1):
        match = _UNIT_EXEC.match(line)
        if match:
            command = match.group(2).lstrip("-@:+!|")
            found.extend(command_findings(command, reader, "unit.runs", number))
    return found


def udev(_path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """udev rules: ``RUN+=``, ``PROGRAM==``, ``IMPORT{program}=`` run as root on an event."""
    found: list[Finding] = []
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("#"):
            continue
        for match in _UDEV_RUN.finditer(line):
            found.extend(command_findings(match.group(1), reader, "udev.runs", number))
    return found


def autostart(_path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """An XDG autostart entry: ``Exec=`` runs at every login."""
    found: list[Finding] = []
    for number, line in enumerate(lines, 1):
        match = _DESKTOP_EXEC.match(line)
        if match:
            found.extend(command_findings(match.group(1), reader, "autostart.runs", number))
    return found


def logrotate(_path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """logrotate's script blocks (``postrotate`` … ``endscript``), run by root's shell."""
    found: list[Finding] = []
    script: list[str] | None = None
    start = 0
    for number, line in enumerate(lines, 1):
        if script is None:
            if _LOGROTATE_OPEN.match(line):
                script, start = [], number + 1
        elif _LOGROTATE_CLOSE.match(line):
            found.extend(Finding("logrotate.runs", f.code, f.banned, f.why,
                                 f.line + start - 1) for f in shell("", "", script, reader))
            script = None
        else:
            script.append(line)
    return found


def gitconfig(_path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """git's keys that name a program git starts, or a directory of hooks it runs."""
    found: list[Finding] = []
    section = ""
    for number, line in enumerate(lines, 1):
        head = _GIT_SECTION.match(line)
        if head:
            section = head.group(1).lower()
            continue
        match = _GIT_KEY.match(line)
        if not match:
            continue
        key = f"{section}.{match.group(1).lower()}"
        value = match.group(2).strip().strip('"')
        if key in _GIT_PATHS and reader.other_writable(value):
            found.append(Finding("gitconfig.path", "BAN_UNTRUSTED_CODE", True,
                                 "makes git run hooks or read settings another user can "
                                 "change", number))
        elif key in _GIT_RUNS or (section == "alias" and value.startswith("!")):
            found.extend(command_findings(value.lstrip("!"), reader, "gitconfig.runs",
                                          number))
    return found


def aptconf(_path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """apt's hooks (``DPkg::Pre-Invoke {"CMD";};``) run CMD as root at every install."""
    found: list[Finding] = []
    for number, line in enumerate(lines, 1):
        low = line.lower()
        if re.search(r"allow(?:unauthenticated|insecurerepositories|downgradetoinsecure"
                     r"repositories)\s*\"?\s*(?:true|yes|1)", low):
            found.append(Finding("aptconf.unauthenticated", "BAN_SECURITY_DISABLE", True,
                                 "lets apt install packages nobody signed", number))
        hook = _APT_HOOK.search(line)
        if hook:
            for command in _APT_QUOTED.findall(hook.group(1)):
                found.extend(command_findings(command, reader, "aptconf.runs", number))
    return found


def _system_python(path: str) -> bool:
    """A system interpreter's tree (root's programs import from it), not a venv or a home."""
    return path.startswith(("/usr/", "/lib/", "/etc/"))


def pth(path: str, _text: str, lines: list[str], reader: Reader) -> list[Finding]:
    """A ``.pth`` file: an ``import`` line runs in every Python program started; another line
    adds a directory to every program's imports."""
    found: list[Finding] = []
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith(("import ", "import\t")):
            found.extend(_assessed(f"python3 -c {shlex.quote(stripped)}", reader,
                                   "pth.runs", number) or ([
                Finding("pth.runs", "PERSISTENCE", False, "runs code in every Python program "
                        "root starts", number)] if _system_python(path) else []))
        elif stripped.startswith("/") and reader.other_writable(stripped):
            found.append(Finding("pth.path", "BAN_UNTRUSTED_CODE", True,
                                 "puts a directory another user can change on every Python "
                                 "program's imports", number))
    return found


def pycode(path: str, text: str, _lines: list[str], reader: Reader) -> list[Finding]:
    """``sitecustomize``/``usercustomize``: Python code run at every interpreter start."""
    if not _system_python(path):
        return _assessed(f"python3 -c {shlex.quote(text)}", reader, "pycode.runs", 0) \
            if len(text) <= CHUNK else []
    if len(text) > CHUNK:
        return [Finding("pycode.runs", "TOO_LARGE", False, "runs Python code at every start, "
                        "too large for Anna to read whole")]
    return _assessed(f"python3 -c {shlex.quote(text)}", reader, "pycode.runs", 0) or [
        Finding("pycode.runs", "PERSISTENCE", False, "runs Python code at every interpreter "
                "start")]


HANDLERS: dict[str, Callable[[str, str, list[str], Reader], list[Finding]]] = {
    "shell": shell, "crontab": crontab, "usercron": usercron, "unit": unit, "udev": udev,
    "autostart": autostart, "logrotate": logrotate, "gitconfig": gitconfig,
    "aptconf": aptconf, "pth": pth, "pycode": pycode,
}
"""Kind → the reader of its code."""
