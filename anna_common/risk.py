"""Anna's own risk assessment of a shell command.

``assess(command, context) -> Assessment``: the risk *floor* Anna computes for
a command, whether it is hard-banned, whether it needs root (scope), and why.
The model's label can only be raised by this floor, never lowered.

The command is parsed with a real bash grammar (:mod:`anna_common.shell`);
every simple command it would run (behind wrappers, inside ``bash -c``,
substitutions, heredocs into shells, ``find -exec``) is judged by program
rules (:mod:`anna_common.rules`) and by where it writes. INFO is granted only
when every part is proven read-only; anything that cannot be seen through is
HIGH. Disguises (``sudo``, ``/usr/bin/rm``, ``\\rm``, ``r''m``, ``bash -c``,
``eval``, base64 into a shell) do not change the verdict because the analysis
sees through them.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from anna_common import paths
from anna_common.plan import RiskLevel, Scope  # Scope lives with the plan models (light)
from anna_common.rules.base import HISTORY_VARS, AssessContext, Code, Out, Reason, help_only
from anna_common.rules.builtins import judge_arithmetic, prepare
from anna_common.rules.code import (
    SHELL_MENTION,
    UNCAPTURED_SENTENCE,
    embedded_shell,
    fork_bombs,
    hidden_characters,
    judge_code,
    library_load,
    unknown_program_signals,
)
from anna_common.rules.fetchrun import Fetched, fetches
from anna_common.rules.fetchrun import judge as judge_fetches
from anna_common.rules.fetchrun import track as track_fetches
from anna_common.rules.hardening import security_writes
from anna_common.rules.locations import judge
from anna_common.rules.packages import not_native
from anna_common.rules.reads import secrets as _secrets
from anna_common.rules.registry import rule_for
from anna_common.runtimename import named_at_run_time_only
from anna_common.shell import Analysis, SimpleCommand, analyse
from anna_common.unwrap import SHELLS, WRAPPERS, language_of
from anna_common.writes import write_targets

__all__ = ["AssessContext", "Assessment", "Code", "Scope", "assess"]

MAX_RECURSION = 4
"""Depth for code found inside interpreter strings (``os.system("...")``)."""
MAX_NESTED_RUNS = 16
"""Embedded code strings (``system("...")``, arithmetic, callbacks) judged per command."""

_STANDARD_BIN = ("/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/local/bin/",
                 "/usr/local/sbin/")
_NO_MENTION_CHECK = frozenset({
    # programs whose arguments are data, names or paths: "grep bash", "pacman -S fish",
    # "ls -l /bin/sh", "chsh -s /bin/zsh" mention shells without running them
    "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep", "which", "whereis",
    "type", "command", "ls", "stat", "file", "test", "[", "[[", "basename", "dirname",
    "realpath", "readlink", "pacman", "yay", "paru", "systemctl", "journalctl", "chsh",
    "usermod", "useradd", "git", "notify-send", "logger", "man", "apropos", "whatis", "tldr",
    "cat", "head", "tail", "wc", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "sed",
    "sort", "uniq", "cut", "tr", "diff", "cmp", "strings", "od", "xxd", "hexdump", "kill",
    "pkill", "killall", "pgrep", "pidof", "ps", "find", "locate", "cp", "mv", "ln", "install",
    "rm", "chmod", "chown", "mkdir", "touch", "tee", "column", "ldd", "readelf", "objdump",
    "nm", "getfacl", "getcap", "lsof", "namei", "tree", "awk", "gawk", "mawk", "pactree",
    "expac", "checkupdates", "ldconfig", "update-alternatives", "fc-list",
})
_LIBRARY_CHECK_EXEMPT = frozenset({"ldd", "file", "readelf", "objdump", "nm", "ls", "stat",
                                   "strings", "cp", "mv", "install", "rm", "ln", "sha256sum",
                                   "md5sum", "find", "locate", "ldconfig", "pacman", "pactree",
                                   "grep", "echo", "printf", "chmod", "chown", "lsof", "strip"})
_PRELOAD_VARS = frozenset({"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH",
                           "PERL5LIB", "PERL5OPT", "RUBYOPT", "NODE_OPTIONS", "GCONV_PATH"})
_STARTUP_VARS = frozenset({"PROMPT_COMMAND", "BASH_ENV", "ENV", "ZDOTDIR", "PS4"})


class Assessment(BaseModel):
    """Anna's verdict on one command."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    command: str
    """The command as given."""
    risk: RiskLevel
    """The risk floor: the model's label is raised to at least this."""
    banned: bool
    """A hard ban: never approvable."""
    scope: Scope
    """``system`` when the command needs root, else ``user``."""
    codes: list[str]
    """Stable reason codes (see :class:`anna_common.rules.base.Code`)."""
    reasons: list[str]
    """One sentence per reason, most severe first."""
    parse_ok: bool
    """False when the command does not parse as bash (it is then HIGH, never INFO)."""
    read_only: bool = False
    """Proven read-only (the INFO tier)."""
    writes: list[str] = []
    """Paths it writes, as resolved (``~`` is the caller's home)."""
    confirm_word: str | None = None
    """For HIGH: the word the person must type to confirm (what the step touches)."""


def assess(command: str, context: AssessContext | None = None) -> Assessment:
    """Assess ``command`` on a machine described by ``context``. Never raises."""
    ctx = context or AssessContext()
    try:
        return _assess_cached(command, ctx)
    except RecursionError:
        return _failed(command, "the command nests too deeply to analyse")
    except Exception as exc:
        return _failed(command, f"the analyser failed ({type(exc).__name__}); treating it as "
                       "opaque")


def _failed(command: str, why: str) -> Assessment:
    return Assessment(command=command, risk=RiskLevel.HIGH, banned=False, scope=Scope.SYSTEM,
                      codes=[str(Code.OPAQUE)], reasons=[why], parse_ok=False)


@lru_cache(maxsize=8192)
def _assess_cached(command: str, ctx: AssessContext) -> Assessment:
    out = Out(ctx)
    analysis = analyse(command)
    all_read_only, writes = _run(analysis, out, depth=0)
    if not analysis.parse_ok and _EXTGLOB.search(command):
        # the grammar does not know extglob (``/@(etc)/shadow``): it is HIGH as unparsable,
        # and judged once more with each group as ``*`` so the paths it can match still count
        _run(analyse(_without_extglob(command)), out, depth=0)
    return _verdict(command, analysis, out, all_read_only, writes)


_EXTGLOB = re.compile(r"[?*+@!]\(")
_EXTGLOB_GROUP = re.compile(r"[?*+@!]\([^()]*\)")


def _without_extglob(command: str) -> str:
    """``/@(etc|usr)/x`` → ``/*/x``: every extglob group as a plain wildcard (matches more)."""
    for _ in range(8):
        replaced = _EXTGLOB_GROUP.sub("*", command)
        if replaced == command:
            break
        command = replaced
    return command


def _verdict(command: str, analysis: Analysis, out: Out, all_read_only: bool,
             writes: list[str]) -> Assessment:
    reasons = sorted(out.reasons, key=lambda r: (not r.banned, -r.risk.rank))
    risk = RiskLevel.max_of(*(r.risk for r in reasons))
    if risk == RiskLevel.INFO and not all_read_only:
        risk = RiskLevel.LOW
        reasons.append(Reason(Code.UNKNOWN_PROGRAM, RiskLevel.LOW, "not proven read-only"))
    banned = any(r.banned for r in reasons)
    confirm = next((r.target for r in reasons if r.risk == RiskLevel.HIGH and r.target), None)
    if risk == RiskLevel.HIGH and confirm is None:
        confirm = next((c.program for c in analysis.commands if c.program), "yes")
    return Assessment(
        command=command,
        risk=risk,
        banned=banned,
        scope=Scope.SYSTEM if out.system else Scope.USER,
        codes=_unique(str(r.code) for r in reasons) or [str(Code.READ_ONLY)],
        reasons=_unique(r.message for r in reasons) or ["only reads and prints"],
        parse_ok=analysis.parse_ok,
        read_only=risk == RiskLevel.INFO,
        writes=_unique(writes),
        confirm_word=confirm if risk == RiskLevel.HIGH else None,
    )


def _unique(items: object) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:  # type: ignore[attr-defined]
        seen.setdefault(item, None)
    return list(seen)


def _run(analysis: Analysis, out: Out, *, depth: int) -> tuple[bool, list[str]]:
    """Judge every command of ``analysis`` into ``out``; return (all read-only, writes)."""
    if not analysis.parse_ok:
        out.high(Code.PARSE_ERROR, "the command does not parse as bash; Anna cannot see what "
                 "it would do", target="unparsed")
    if analysis.too_large:
        # past the budget nothing more is looked at: the answer must come in milliseconds
        for why in _unique(analysis.too_large):
            out.high(Code.TOO_LARGE, f"too large to analyse: {why}; Anna cannot see what it "
                     "would do", target="too large")
        # nothing was parsed for write targets either, so no snapshot covers what it writes:
        # the rollback must say so rather than report it undone
        out.high(Code.UNCAPTURED_WRITE, "its writes were not analysed; "
                 f"{UNCAPTURED_SENTENCE}", target="too large")
        return False, []
    for why in _unique(analysis.opaque):
        if "runs" not in why:  # script files and piped code are judged with their source
            out.high(Code.OPAQUE, why)
    _assignments(analysis, out)
    fork_bombs(analysis, out)
    functions = set(analysis.functions)
    all_read_only = True
    writes: list[str] = []

    def assess_into(text: str, into: Out) -> None:
        if depth >= MAX_RECURSION:
            into.high(Code.OPAQUE, "code nested too deeply to analyse")
            return
        into.nested_runs += 1
        if into.nested_runs > MAX_NESTED_RUNS:
            into.high(Code.TOO_LARGE, f"too large to analyse: more than {MAX_NESTED_RUNS} "
                      "pieces of embedded code", target="too large")
            return
        _run(analyse(text, depth=depth + 1), into, depth=depth + 1)

    outer_nested, outer_tainted = out.nested, out.tainted
    out.nested = assess_into
    prepare(analysis, out)
    judge_arithmetic(analysis, out)
    fetched = Fetched() if fetches(analysis.commands) else None
    for cmd in analysis.commands:
        before_reasons = len(out.reasons)
        before_marks = out.readonly_marks
        _track_cwd(cmd, out)
        if fetched is not None:
            track_fetches(cmd, out, fetched)
        writes.extend(_judge_command(cmd, analysis, out, functions, assess_into))
        added = out.reasons[before_reasons:]
        marked = out.readonly_marks > before_marks
        if (added and max(r.risk for r in added) > RiskLevel.INFO) or not marked:
            all_read_only = False
    if fetched is not None:
        judge_fetches(fetched, out)
    out.nested, out.tainted = outer_nested, outer_tainted
    return all_read_only, writes


def _assignments(analysis: Analysis, out: Out) -> None:
    counts: dict[str, int] = {}
    for name, _ in analysis.assignments:
        counts[name] = counts.get(name, 0) + 1
    for name, value in analysis.assignments:
        _judge_assignment(name, value.text, out)
        if value.literal and counts[name] == 1:
            out.known[name] = value.text
    for cmd in analysis.commands:
        for name, value in cmd.assignments:
            _judge_assignment(name, value.text, out)


def _judge_assignment(name: str, value: str, out: Out) -> None:
    if SHELL_MENTION.search(value):
        out.high(Code.EMBEDDED_SHELL, f"{name} holds a shell command ({value[:60]})", target=name)
    if name in HISTORY_VARS:
        out.high(Code.HISTORY_TAMPER, f"setting {name} changes what shell history records",
                 target=name)
    elif name in _PRELOAD_VARS:
        out.high(Code.LIBRARY_PRELOAD, f"{name} makes programs load other code", target=name)
    elif name in _STARTUP_VARS:
        out.high(Code.PERSISTENCE, f"{name} runs code whenever a shell starts", target=name)
    elif name == "PATH":
        out.medium(Code.SYSTEM_SETTING, "PATH changes which programs commands resolve to")


def _track_cwd(cmd: SimpleCommand, out: Out) -> None:
    if cmd.program not in ("cd", "pushd") or cmd.depth > 0:
        return
    if len(cmd.args) != 1 or not cmd.args[0].literal:
        out.cwd = None if cmd.args else paths.HOME
        return
    place = out.paths(cmd.args[0])
    out.cwd = place[0].path if place and not paths.is_relative(place[0].path) else None


def _judge_command(cmd: SimpleCommand, analysis: Analysis, out: Out, functions: set[str],
                   assess_into: object) -> list[str]:
    """Apply every rule to one simple command; return the paths it writes."""
    program = cmd.program
    if cmd.privileged:
        out.system = True
    if program is None:
        out.high(Code.DYNAMIC_PROGRAM, "runs a program whose name is only known at run time",
                 target=cmd.name.text if cmd.name else None)
        return _writes(cmd, out)
    if program in functions:
        out.read_only()
        return _writes(cmd, out)
    name = cmd.name.text if cmd.name else program
    if "/" in name and not name.startswith(_STANDARD_BIN):
        out.high(Code.SCRIPT_FILE, f"runs {name}, a program Anna cannot see into", target=name)
    rule = rule_for(program)
    shellish = program in SHELLS or language_of(program) is not None or program in (
        "eval", "source", ".", "su") or program in WRAPPERS
    if shellish and help_only(cmd):
        out.read_only()
        return _writes(cmd, out)
    before = len(out.reasons)
    marks = out.readonly_marks
    if not_native(program, out.ctx.distro):
        out.medium(Code.NOT_NATIVE, f"{program} is not this distribution's package manager",
                   target=program)
    if rule is not None:
        rule(cmd, out)
    elif shellish:
        _wrapper_alone(cmd, out)
    judge_code(cmd, analysis, out, assess_into)  # type: ignore[arg-type]
    written = _writes(cmd, out)
    security_writes(cmd, analysis, out)  # seed 000: security switched off through its files
    _secrets(cmd, out)
    _wrapped(cmd, out)
    hidden_characters(cmd, out)
    if program not in _NO_MENTION_CHECK and not shellish:
        embedded_shell(cmd, out)
    if program not in _LIBRARY_CHECK_EXEMPT:
        library_load(cmd, out)
    _hook_options(cmd, out)
    if out.readonly_marks == marks and any(w.substituted for w in cmd.args) and \
            program not in ("echo", "printf") and not shellish and \
            not named_at_run_time_only(cmd):
        out.high(Code.UNKNOWN_TARGET, f"{program} acts on arguments computed at run time",
                 target=program)
    if len(out.reasons) == before and out.readonly_marks == marks and not written:
        if rule is None and not shellish:
            if not unknown_program_signals(cmd, out):
                out.medium(Code.UNKNOWN_PROGRAM, f"{program} is not a program Anna knows; it "
                           "may change anything", target=program)
        elif rule is not None and not cmd.code:
            out.low(Code.HOME_WRITE, f"{program} changes files", target=program)
    return written


_HOOK_OPTION = ("--password-command", "--conf-script", "--command", "--exec", "--run",
                "--post-invoke", "--pre-invoke", "--postrotate", "--hook", "--askpass",
                "--editor", "--pager", "--shell", "--rsh", "--proxy-command", "--on-")


def _hook_options(cmd: SimpleCommand, out: Out) -> None:
    """Options and variables that hand a program a command to run later
    (``--password-command=X``, ``RESTIC_PASSWORD_COMMAND=X``, ``tcpdump -z X``)."""
    if cmd.program in _NO_MENTION_CHECK or cmd.program in ("systemctl", "flock", "watch"):
        return
    for word in cmd.args:
        name = word.text.split("=", 1)[0]
        if name.startswith(_HOOK_OPTION) and len(name) > 2:
            out.high(Code.EMBEDDED_SHELL, f"{cmd.program} is handed a command to run "
                     f"({word.text[:60]})", target=cmd.program)
            return
    if cmd.program == "tcpdump" and any(w.text == "-z" for w in cmd.args):
        out.high(Code.EMBEDDED_SHELL, "tcpdump -z runs a command on every capture file",
                 target="tcpdump")
        return
    for name, _ in cmd.assignments:
        if name.endswith(("_COMMAND", "_CMD", "_HOOK", "_EDITOR")) or name in ("PAGER", "EDITOR",
                                                                             "VISUAL", "BROWSER"):
            out.high(Code.EMBEDDED_SHELL, f"{name} tells {cmd.program} what to run",
                     target=name)
            return


_TIMERS = ("--on-calendar", "--on-active", "--on-boot", "--on-startup", "--on-unit-active",
           "--on-unit-inactive", "--on-clock-change", "--on-timezone-change")


def _wrapped(cmd: SimpleCommand, out: Out) -> None:
    """Wrappers that change what the command is: systemd-run timers schedule it for later."""
    opts = cmd.wrapper_options.get("systemd-run")
    if opts is None:
        return
    if any(o.startswith(_TIMERS) for o in opts):
        out.high(Code.PERSISTENCE, "systemd-run schedules the command to run again later",
                 target="systemd-run")
    else:
        out.medium(Code.SERVICE_CHANGE, "systemd-run runs the command as a transient unit",
                   system="--user" not in opts)


def _wrapper_alone(cmd: SimpleCommand, out: Out) -> None:
    """A shell with literal code, or a wrapper used on its own (``sudo -l``, ``nohup``)."""
    if cmd.program in ("sudo", "doas") and any(w.text in ("-e", "--edit") for w in cmd.args):
        out.high(Code.INTERACTIVE_PROGRAM, "sudoedit opens an editor as root", system=True,
                 target="sudoedit")
        return
    if not cmd.interactive_shell:
        out.read_only()


def _writes(cmd: SimpleCommand, out: Out) -> list[str]:
    written: list[str] = []
    for target in write_targets(cmd):
        places = out.paths(target.word)
        if all(_harmless(p.path) for p in places):
            continue
        judge(target, out)
        written.extend(p.path for p in places)
    return written


def _harmless(path: str) -> bool:
    return path in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty") or path.startswith(
        "/dev/fd/")
