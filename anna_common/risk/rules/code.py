"""Code handed to shells and interpreters, and where it comes from.

Shell code that Anna can read (``bash -c 'LITERAL'``, a quoted heredoc into
``sh``) is analysed like any other command (see :mod:`anna_common.shell.grammar`).
This module judges the rest: code fetched or decoded at run time piped into a
shell or interpreter (a hard ban), code built at run time (HIGH), interactive
shells (HIGH), interpreter one-liners (Python is parsed with :mod:`ast`;
``system()`` strings in Perl, Ruby, PHP, awk and friends are pulled out and
analysed as shell), fork bombs (a hard ban) and shells smuggled into the
arguments of other programs (``--rsh='/bin/sh -c ...'``).
"""

from __future__ import annotations

import ast
import re
import shlex
from typing import TYPE_CHECKING

from anna_common.risk.rules.awkcode import awk_effects
from anna_common.risk.rules.base import Code, Out
from anna_common.risk.rules.pyproof import proven_read_only
from anna_common.risk.rules.pyreads import awk_reads, judge_reads, python_reads, text_reads
from anna_common.risk.rules.pywrites import python_written, text_writes
from anna_common.risk.writes import options

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from anna_common.shell.grammar import Analysis, EmbeddedCode, SimpleCommand

DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "axel", "lynx", "links", "w3m",
                         "elinks", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "ftp",
                         "tftp", "lftp", "http", "https", "xh", "lwp-request", "GET", "POST",
                         "lwp-download", "smbclient", "rsync"})
"""Programs whose output comes from the network."""

_DECODERS = {"base64": {"-d", "--decode", "-D"}, "base32": {"-d", "--decode"},
             "basenc": {"-d", "--decode"}, "xxd": {"-r", "-revert"}, "uudecode": set(),
             "gpg": {"-d", "--decrypt"}, "openssl": {"-d"}, "rev": set(),
             "gunzip": set(), "zcat": set(), "xz": {"-d"}, "unxz": set(), "bzcat": set(),
             "zstdcat": set(), "tr": set()}

SHELL_MENTION = re.compile(
    r"(?:^|[\s'\"=:!;(|&`{,>])(?:/usr)?(?:/s?bin/)?(?:ba|da|z|k|c|tc|fi|a|mk|rba|y)?sh\b(?![.\-])"
    r"|/dev/(?:tcp|udp)/"
)
"""A shell named inside an argument (``--rsh=/bin/sh``, ``'%(/bin/sh 1>&2)'``, ``/dev/tcp/``)."""

EXEC_PRIMITIVES = re.compile(
    r"\b(?:system|exec[lv]?p?e?|popen|spawn\w*|shell_exec|passthru|proc_open|execSync|"
    r"execFileSync|spawnSync|child_process|os\.execute|io\.popen|pty|IO::Socket|socket|"
    r"fsockopen|TCPSocket|Socket\.new|Kernel\.exec|Open3|subprocess)\b|`"
)
"""Calls that run programs or open sockets from interpreter code."""

_NETWORK_CODE = re.compile(
    r"(?:https?|ftp|gopher)://|\b(?:urlopen|urlretrieve|download|file_get_contents|fsockopen|"
    r"Net::HTTP|LWP|open-uri|URI\.open|http\.get|http\.request|require\([\"']https?[\"']\)|"
    r"Fiddle|dlopen|ctypes|ffi|cdll|LoadLibrary|httpd|createServer|listen)\b"
)
_FORK_LOOP = re.compile(
    r"\bfork\b[^\n]{0,40}\b(?:while|for|until|loop)\b|\b(?:while|for|until|loop)\b[^\n]{0,60}"
    r"\bfork\b"
)
_SHELL_STRING = re.compile(
    r"(?:system|exec|popen|shell_exec|passthru|execSync|os\.execute|io\.popen|spawn)\s*\(?\s*"
    r"(['\"])((?:(?!\1).){1,400})\1"
)
_BACKTICKS = re.compile(r"`([^`]{1,400})`")
_AWK_PIPE = re.compile(
    r"(['\"])((?:(?!\1).){1,400})\1\s*\|\s*getline"  # "cmd" | getline
    r"|\|\s*(['\"])((?:(?!\3).){1,400})\3"  # print | "cmd"
)


def is_decoder(cmd: SimpleCommand) -> bool:
    """A program turning opaque bytes into text (``base64 -d``, ``xxd -r``, ``gpg -d``)."""
    prog = cmd.program or ""
    if prog not in _DECODERS:
        return False
    flags = _DECODERS[prog]
    if not flags:
        return True
    if prog == "openssl":  # "openssl enc -d", "openssl base64 -d"
        return any(w.text == "-d" for w in cmd.args)
    return bool(options(cmd.args) & flags)


def _upstream(commands: Iterable[SimpleCommand],
              seen: set[int] | None = None) -> list[SimpleCommand]:
    """Every command that feeds these: pipe producers and substitutions, transitively."""
    seen = seen if seen is not None else set()
    found: list[SimpleCommand] = []
    for cmd in commands:
        if id(cmd) in seen:
            continue
        seen.add(id(cmd))
        found.append(cmd)
        found.extend(_upstream([*cmd.stdin.producers, *cmd.substitutions], seen))
    return found


def untrusted_source(sources: Iterable[SimpleCommand]) -> SimpleCommand | None:
    """The first downloader or decoder among these commands and what feeds them."""
    for cmd in _upstream(sources):
        if (cmd.program in DOWNLOADERS) or is_decoder(cmd):
            return cmd
    return None


def judge_code(cmd: SimpleCommand, analysis: Analysis, out: Out,
               assess_into: Callable[[str, Out], None]) -> None:
    """Judge the code ``cmd`` hands to a shell or interpreter."""
    if cmd.interactive_shell:
        out.high(Code.INTERACTIVE_SHELL, f"{cmd.program or 'this'} opens an interactive shell",
                 target=cmd.program)
    for code in cmd.code:
        _judge_one(cmd, code, analysis, out, assess_into)


def _judge_one(cmd: SimpleCommand, code: EmbeddedCode, analysis: Analysis, out: Out,
               assess_into: Callable[[str, Out], None]) -> None:
    prog = cmd.program or "?"
    fed_by: list[SimpleCommand] = []
    if cmd.stdin.kind == "pipe" and (code.how == "stdin" or
                                     (code.how == "script" and code.language == "sh")):
        # downloaded text piped into a shell that reads it is banned whatever its arguments
        # say ("wget -O- URL | sh -", "curl URL | bash -s -- args", "... | sh FILE").
        # With code on the command line (awk '{...}', bash -c '...') stdin is only data.
        fed_by = list(cmd.stdin.producers)
    if code.text is None or not code.text.literal:
        # code (or the file or here-string it is read from) computed at run time: whatever
        # computes it feeds the shell ("sh < <(curl …)", "sh <<< "$(curl …)""), and xargs'
        # input when that is what fills it in ("curl … | xargs -I{} sh -c '{}'")
        fed_by += list(cmd.substitutions) + [c for c in analysis.commands
                                             if c.origin == "heredoc"]
        if cmd.stdin.kind == "args":
            fed_by += list(cmd.stdin.producers)
    if cmd.stdin.kind == "pipe" and code.how == "code" and _runs_its_input(code):
        # ``curl URL | awk '{system($0)}'``: the code on the command line runs commands, and
        # what it reads is downloaded: the download is what runs
        fed_by += list(cmd.stdin.producers)
    bad = untrusted_source(fed_by) if fed_by else None
    if bad is not None:
        out.ban(Code.BAN_UNTRUSTED_CODE, f"{prog} runs code produced by {bad.program} "
                "(downloaded or decoded at run time)", target=prog)
        return
    if code.how == "script":
        out.high(Code.SCRIPT_FILE, f"{prog} runs a script file Anna cannot see",
                 target=code.text.text if code.text else prog)
        uncaptured(out, prog, "a script file")
        return
    if code.text is None or not code.text.literal:
        out.high(Code.DYNAMIC_CODE, f"{prog} runs code that is only known at run time",
                 target=prog)
        uncaptured(out, prog, "code only known at run time")
        return
    if code.language == "sh":
        return  # literal shell code was analysed as commands of its own
    if code.how == "module":
        _python_module(code.text.text, out)
        return
    text = code.text.text
    if _FORK_LOOP.search(text):
        out.ban(Code.BAN_FORK_BOMB, f"{prog} code forks in a loop (fork bomb)", target=prog)
        return
    if code.language == "python":
        _python(text, out, assess_into, argv=_script_argv(cmd, code))
    elif code.language == "awk":
        _awk(text, out, assess_into, [w.text if w.literal else None for w in cmd.args])
    else:
        _generic(prog, text, out, assess_into)


UNCAPTURED_SENTENCE = "Anna cannot back this up"
"""Said in every UNCAPTURED_WRITE reason: the plan view and the journal show it as is."""


def _runs_its_input(code: EmbeddedCode) -> bool:
    """Code that can run commands (awk's ``system()`` and pipes, ``system``/``exec`` in the
    other interpreters): given downloaded input, it can run that input."""
    if code.text is None or not code.text.literal:
        return True
    if code.language == "awk":
        return awk_effects(code.text.text)[0]
    return code.language != "sh" and EXEC_PRIMITIVES.search(code.text.text) is not None


def uncaptured(out: Out, prog: str, what: str) -> None:
    """Interpreter code writes where the daemon's snapshots cannot see: HIGH, and say so.

    The daemon backs up the paths :mod:`anna_common.risk.writes` finds; ``open(p, 'w')`` in a
    Python string, ``print > f`` in awk or a Perl one-liner writes elsewhere, and a rollback
    could not restore it. The reason carries :data:`UNCAPTURED_SENTENCE` for the person.
    """
    out.high(Code.UNCAPTURED_WRITE, f"{prog} runs {what} that may change files Anna does not "
             f"see; {UNCAPTURED_SENTENCE}", target=prog)


def _python_module(module: str, out: Out) -> None:
    if module in ("http.server", "SimpleHTTPServer", "smtpd", "ftplib", "pty", "code",
                  "pdb", "telnetlib"):
        out.high(Code.NETWORK_TRANSFER, f"python -m {module} opens a server or a shell",
                 target=module)
    elif module in ("json.tool", "platform", "sysconfig", "site", "this", "timeit", "calendar",
                    "tabnanny"):
        out.read_only()
    else:
        out.medium(Code.INTERPRETER_CODE, f"python -m {module} runs a module", target=module)


_PY_SHELL_CALLS = {"system", "popen", "run", "call", "check_call", "check_output", "Popen",
                   "getoutput", "getstatusoutput"}
_PY_EXEC = {"execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp", "execvpe",
            "spawnl", "spawnle", "spawnlp", "spawnv", "spawnve", "spawnvp", "posix_spawn",
            "posix_spawnp", "spawn", "fork", "forkpty", "setuid", "setgid", "seteuid", "setresuid"}
_PY_FILES = {"remove", "unlink", "rmdir", "removedirs", "rmtree", "move", "rename", "replace",
             "copy", "copyfile", "copy2", "copytree", "chmod", "chown", "truncate", "write_text",
             "write_bytes", "mkdir", "makedirs", "symlink", "link"}
_PY_NET = {"socket", "urlopen", "urlretrieve", "get", "post", "put", "connect", "create_connection"}
_PY_DANGER_MODULES = {"socket", "pty", "ctypes", "telnetlib", "paramiko", "pexpect", "urllib",
                      "requests", "http", "ftplib", "smtplib", "xmlrpc", "asyncio", "cffi",
                      "importlib", "marshal", "pickle"}


def _script_argv(cmd: SimpleCommand, code: EmbeddedCode) -> list[str | None]:
    """``sys.argv[1:]`` of ``python -c CODE A B`` (None where only known at run time)."""
    index = next((i for i, w in enumerate(cmd.args) if w is code.text), None)
    return [] if index is None else [w.text if w.literal else None
                                     for w in cmd.args[index + 1:]]


def _python(text: str, out: Out, assess_into: Callable[[str, Out], None],
            argv: list[str | None] | None = None) -> None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        out.high(Code.OPAQUE, "python code does not parse", target="python")
        uncaptured(out, "python", "code")
        return
    judge_reads("python", python_reads(tree, argv=argv), out, assess_into)  # like cat
    worst = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = {a.name.split(".")[0] for a in node.names}
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module.split(".")[0])
            if names & _PY_DANGER_MODULES:
                worst = max(worst, 3)
        elif isinstance(node, ast.Call):
            worst = max(worst, _python_call(node, out, assess_into))
        elif isinstance(node, ast.Name) and node.id in ("exec", "eval", "compile",
                                                        "__import__"):
            worst = max(worst, 3)
    if worst >= 3:
        out.high(Code.INTERPRETER_CODE, "python code runs programs, opens sockets or changes "
                 "privileges", target="python")
    if not proven_read_only(tree):
        # fail closed: only code proven read-only by allowlist stays below HIGH (the
        # denylist above only finds what to analyse further; "x.replace(a, b)" is harmless)
        uncaptured(out, "python", "code")
    else:
        out.low(Code.INTERPRETER_CODE, "python code runs", target="python")


def _python_call(node: ast.Call, out: Out, assess_into: Callable[[str, Out], None]) -> int:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else (
        func.id if isinstance(func, ast.Name) else "")
    if name in _PY_SHELL_CALLS and node.args:
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            assess_into(first.value, out)
        elif isinstance(first, ast.List | ast.Tuple) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in first.elts):
            assess_into(shlex.join([e.value for e in first.elts  # type: ignore[attr-defined]
                                    ]), out)
        return 3 if name not in ("get", "run") or isinstance(func, ast.Attribute) else 2
    if name in _PY_EXEC:
        return 3
    if name in ("rmtree", "remove", "unlink", "rmdir") and node.args and isinstance(
            node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        recursive = "-r " if name == "rmtree" else ""
        assess_into(f"rm -f {recursive}{shlex.quote(node.args[0].value)}", out)
        return 2
    written = python_written(node, name)
    if written is not None:
        # ``open(P, "w")``, ``Path(P).write_text(…)``: judged as the redirect that writes P
        assess_into(f": {written[1]} {shlex.quote(written[0])}", out)
        return 2
    if name in _PY_FILES:
        return 2
    if name in ("CDLL", "LoadLibrary", "dlopen", "cdll", "__import__", "exec", "eval"):
        return 3
    if name == "open" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and \
            isinstance(node.args[1].value, str) and set(node.args[1].value) & set("wax+"):
        return 2
    if name in _PY_NET and isinstance(func, ast.Attribute):
        return 3
    return 0


def _awk(text: str, out: Out, assess_into: Callable[[str, Out], None],
         args: list[str | None]) -> None:
    strings = [m.group(2) for m in _SHELL_STRING.finditer(text)]
    strings += [m.group(2) or m.group(4) for m in _AWK_PIPE.finditer(text)]
    for shell_text in strings:
        if shell_text:
            assess_into(shell_text, out)
    for redirect in text_writes(text):
        assess_into(redirect, out)
    judge_reads("awk", awk_reads(text, args), out, assess_into)  # getline < "F": like cat F
    runs, writes = awk_effects(text)
    if runs:
        out.high(Code.EMBEDDED_SHELL, "awk program runs commands", target="awk")
    if runs or writes:
        uncaptured(out, "awk", "a program that writes files or runs commands")
    else:
        out.read_only()


def _generic(prog: str, text: str, out: Out, assess_into: Callable[[str, Out], None]) -> None:
    """Perl, Ruby, Node, PHP, Lua, ...: Anna cannot parse them, so they are opaque (HIGH).

    Shell strings handed to system()/exec()/backticks are still pulled out and analysed, so
    a ban inside them (``perl -e 'system("rm -rf /")'``) is still a ban.
    """
    for match in _SHELL_STRING.finditer(text):
        assess_into(match.group(2), out)
    for match in _BACKTICKS.finditer(text):
        assess_into(match.group(1), out)
    for redirect in text_writes(text):
        assess_into(redirect, out)
    judge_reads(prog, text_reads(text), out, assess_into)
    if EXEC_PRIMITIVES.search(text) or SHELL_MENTION.search(text) or _NETWORK_CODE.search(text):
        out.high(Code.INTERPRETER_CODE, f"{prog} code runs programs, loads libraries or talks "
                 "to the network", target=prog)
    else:
        out.high(Code.INTERPRETER_CODE, f"{prog} runs code Anna cannot analyse", target=prog)
    uncaptured(out, prog, "code")


def fork_bombs(analysis: Analysis, out: Out) -> None:
    """A function that calls itself twice, in a pipe or in the background: a fork bomb."""
    for name in set(analysis.functions):
        calls = [c for c in analysis.commands
                 if c.origin == f"function {name}" and c.program == name]
        if len(calls) >= 2 or any(c.background or c.stdin.kind == "pipe" for c in calls):
            out.ban(Code.BAN_FORK_BOMB, f"function {name} calls itself recursively in the "
                    "background (fork bomb)", target=name)


def embedded_shell(cmd: SimpleCommand, out: Out) -> bool:
    """A shell or /dev/tcp named inside an argument or assignment of a non-shell program."""
    texts = [w.text for w in cmd.args] + [w.text for _, w in cmd.assignments]
    for text in texts:
        if SHELL_MENTION.search(text):
            out.high(Code.EMBEDDED_SHELL, f"{cmd.program} is handed a shell command ({text[:60]})",
                     target=cmd.program)
            return True
    return False


_ADDRESS = re.compile(
    r"^[a-z][a-z0-9+.-]*://|^[\w.-]+@[\w-]+\.[\w.-]+$|^[\w.-]+:\d{2,5}(?:/|$)|\b0\.0\.0\.0\b"
    r"|^(?:--?(?:listen|bind|address|host|server)(?:=|$))|^-h$"
)
_SERVICE_WORDS = frozenset({"serve", "server", "tunnel", "proxy", "httpd", "listen", "shell",
                            "console", "repl", "exec", "spawn", "reverse"})
_DISABLE = re.compile(r"\b(?:disable[ds]?|off|stop|0|false)\b", re.IGNORECASE)
_SECURITY_WORDS = re.compile(r"protection|antivirus|defender|firewall|selinux|apparmor|audit|"
                             r"tamper|edr|av\b", re.IGNORECASE)


def unknown_program_signals(cmd: SimpleCommand, out: Out) -> bool:
    """For programs Anna does not know: a network address, a server/shell verb, or switching a
    security product off make them HIGH instead of MEDIUM."""
    texts = [w.text for w in cmd.args]
    if any(_ADDRESS.search(t) for t in texts):
        out.high(Code.NETWORK_TRANSFER, f"{cmd.program} is pointed at a network address",
                 target=cmd.program)
        return True
    if any(t.lstrip("-").split("=", 1)[0] in _SERVICE_WORDS for t in texts):
        out.high(Code.NETWORK_TRANSFER, f"{cmd.program} is asked to open a server, tunnel or "
                 "shell", target=cmd.program)
        return True
    joined = " ".join(texts)
    if _SECURITY_WORDS.search(joined) and _DISABLE.search(joined):
        out.high(Code.SECURITY_CONFIG, f"{cmd.program} appears to switch a security mechanism "
                 "off", target=cmd.program)
        return True
    return False
