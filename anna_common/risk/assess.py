"""Anna's own risk assessment of a shell command.

``assess(command, context) -> Assessment``: the risk *floor* Anna computes for
a command, whether it is hard-banned, whether it needs root (scope), and why.
The model's label can only be raised by this floor, never lowered.

The command is parsed with a real bash grammar (:mod:`anna_common.shell.grammar`);
every simple command it would run (behind wrappers, inside ``bash -c``,
substitutions, heredocs into shells, ``find -exec``) is judged by program
rules (:mod:`anna_common.risk.rules`) and by where it writes. INFO is granted only
when every part is proven read-only; anything that cannot be seen through is
HIGH. Disguises (``sudo``, ``/usr/bin/rm``, ``\\rm``, ``r''m``, ``bash -c``,
``eval``, base64 into a shell) do not change the verdict because the analysis
sees through them.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict

# Scope lives with the plan models (light)
from anna_common.plan import PLAN_COMMANDS, RiskLevel, Scope
from anna_common.risk.content.base import set_command_judge
from anna_common.risk.cwds import track_cwd
from anna_common.risk.knownvars import known_values
from anna_common.risk.namedpaths import IN_PLACE, harmless, named_paths
from anna_common.risk.rules.base import AssessContext, Code, Out, Reason, help_only
from anna_common.risk.rules.builtins import judge_arithmetic, prepare
from anna_common.risk.rules.code import (
    UNCAPTURED_SENTENCE,
    embedded_shell,
    fork_bombs,
    judge_code,
    unknown_program_signals,
)
from anna_common.risk.rules.everycommand import (
    NO_MENTION_CHECK,
    assignments,
    hidden_characters,
    hook_options,
    library_load,
    wrapped,
    wrapper_alone,
)
from anna_common.risk.rules.fetchrun import Fetched, fetches
from anna_common.risk.rules.fetchrun import judge as judge_fetches
from anna_common.risk.rules.fetchrun import track as track_fetches
from anna_common.risk.rules.hardening import security_writes
from anna_common.risk.rules.locations import judge, linked_identity
from anna_common.risk.rules.packages import not_native
from anna_common.risk.rules.rcappend import judged as rc_append
from anna_common.risk.rules.reads import secrets as _secrets
from anna_common.risk.rules.registry import rule_for
from anna_common.risk.runtimename import named_at_run_time_only
from anna_common.risk.unparsed import brace_words, has_brace_command, has_extglob, without_extglob
from anna_common.risk.writes import write_targets
from anna_common.shell.grammar import Analysis, SimpleCommand, analyse
from anna_common.shell.unwrap import SHELLS, WRAPPERS, language_of

__all__ = ["AssessContext", "Assessment", "Code", "Scope", "assess"]

MAX_RECURSION = 4
"""Depth for code found inside interpreter strings (``os.system("...")``)."""
MAX_NESTED_RUNS = 16
"""Embedded code strings (``system("...")``, arithmetic, callbacks) judged per command."""

_STANDARD_BIN = ("/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/local/bin/",
                 "/usr/local/sbin/")
_LIBRARY_CHECK_EXEMPT = frozenset({"ldd", "file", "readelf", "objdump", "nm", "ls", "stat",
                                   "strings", "cp", "mv", "install", "rm", "ln", "sha256sum",
                                   "md5sum", "find", "locate", "ldconfig", "pacman", "pactree",
                                   "grep", "echo", "printf", "chmod", "chown", "lsof", "strip"})


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
    """Stable reason codes (see :class:`anna_common.risk.rules.base.Code`)."""
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


@lru_cache(maxsize=PLAN_COMMANDS)
def _assess_cached(command: str, ctx: AssessContext) -> Assessment:
    analysis = analyse(command)
    parsed = _Parsed({command: analysis})  # each text parsed once (extglob, from /: 2-3 times)
    out, all_read_only, writes = _judge(command, analysis, Out(ctx), parsed)
    if out.system:
        # a step that needs root runs in ``/`` (annad.execution.executor), a user step in the home:
        # judged once more from ``/``, ``sudo rm etc/shadow`` is the /etc/shadow it removes
        # what the rules computed that does not depend on the working directory is shared
        from_root = Out(ctx, cwd="/", memo=out.memo)
        again, read_only_too, more = _judge(command, analysis, from_root, parsed)
        out.reasons.extend(again.reasons)
        all_read_only = all_read_only and read_only_too
        writes += more
    return _verdict(command, analysis, out, all_read_only, writes)


class _Parsed(dict[str, Analysis]):
    """The analyses of one assessment, by text: each text is parsed once."""
    def __missing__(self, text: str) -> Analysis:
        self[text] = found = analyse(text)
        return found


def _judge(command: str, analysis: Analysis, out: Out, parsed: _Parsed
           ) -> tuple[Out, bool, list[str]]:
    all_read_only, writes = _run(analysis, out, depth=0)
    if not analysis.parse_ok and has_extglob(command):
        # the grammar does not know extglob (``/@(etc)/shadow``): it is HIGH as unparsable,
        # and judged once more with each group as ``*`` so the paths it can match still count
        _run(parsed[without_extglob(command)], out, depth=0)
    if not analysis.parse_ok and has_brace_command(command):
        # nor a brace expansion as the command word (``{rm,-rf,/}`` runs ``rm -rf /``): judged
        # once more with each such list spelled out as the words bash makes of it
        _run(parsed[brace_words(command)], out, depth=0)
    return out, all_read_only, writes


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
    assignments(analysis, out)
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

    outer_nested, outer_tainted, outer_known = out.nested, out.tainted, out.known
    out.nested = assess_into
    values = known_values(analysis)
    prepare(analysis, out)
    judge_arithmetic(analysis, out)
    fetched = Fetched() if fetches(analysis.commands) else None
    for cmd in analysis.commands:
        before_reasons = len(out.reasons)
        before_marks = out.readonly_marks
        out.known = values.at(cmd)
        track_cwd(cmd, out)
        if fetched is not None:
            track_fetches(cmd, out, fetched)
        writes.extend(_judge_command(cmd, analysis, out, functions, assess_into))
        marked = out.readonly_marks > before_marks
        if marked:
            _options_unknown(cmd, out)
        added = out.reasons[before_reasons:]
        if (added and max(r.risk for r in added) > RiskLevel.INFO) or not marked:
            all_read_only = False
    if fetched is not None:
        judge_fetches(fetched, out)
    out.nested, out.tainted, out.known = outer_nested, outer_tainted, outer_known
    return all_read_only, writes


_OPTION_WRITERS = frozenset({"journalctl", "date", "dmesg", "sysctl", "find", "sort",
                             "uniq", "shuf"})
"""Programs read-only with the options Anna reads, but able to change the machine with others
(``journalctl --vacuum-size``, ``date -s``, ``dmesg -C``, ``sysctl -w``, ``find -delete``,
``sort -o``, ``uniq IN OUT``, ``shuf -o``)."""


def _options_unknown(cmd: SimpleCommand, out: Out) -> None:
    """A read-only verdict holds only for the words Anna read: a word known only at run time
    can be the option that writes (``find / $O`` with O=-delete)."""
    if cmd.program in _OPTION_WRITERS and any(not w.literal for w in cmd.args):
        out.high(Code.UNKNOWN_TARGET, f"{cmd.program} gets an argument only known at run time, "
                 "which can be an option that changes the machine", target=cmd.program)


def _judge_command(cmd: SimpleCommand, analysis: Analysis, out: Out, functions: set[str],
                   assess_into: object) -> list[str]:
    """Apply every rule to one simple command; return the paths it writes."""
    program = cmd.program
    if cmd.privileged:
        out.system = True
    if program is None:
        out.high(Code.DYNAMIC_PROGRAM, "runs a program whose name is only known at run time",
                 target=cmd.name.text if cmd.name else None)
        return _writes(cmd, out, analysis)
    if program in functions:
        out.read_only()
        return _writes(cmd, out, analysis)
    name = cmd.name.text if cmd.name else program
    if "/" in name and not name.startswith(_STANDARD_BIN):
        out.high(Code.SCRIPT_FILE, f"runs {name}, a program Anna cannot see into", target=name)
    rule = rule_for(program)
    shellish = program in SHELLS or language_of(program) is not None or program in (
        "eval", "source", ".", "su") or program in WRAPPERS
    if shellish and help_only(cmd):
        out.read_only()
        return _writes(cmd, out, analysis)
    before = len(out.reasons)
    marks = out.readonly_marks
    if not_native(program, out.ctx.distro):
        out.medium(Code.NOT_NATIVE, f"{program} is not this distribution's package manager",
                   target=program)
    if rule is not None:
        rule(cmd, out)
    elif shellish:
        wrapper_alone(cmd, out)
    judge_code(cmd, analysis, out, assess_into)  # type: ignore[arg-type]
    written = _writes(cmd, out, analysis)
    security_writes(cmd, analysis, out)  # seed 000: security switched off through its files
    _secrets(cmd, out)
    linked_identity(cmd, out)
    wrapped(cmd, out)
    hidden_characters(cmd, out)
    if program not in NO_MENTION_CHECK and not shellish:
        embedded_shell(cmd, out)
    if program not in _LIBRARY_CHECK_EXEMPT:
        library_load(cmd, out)
    hook_options(cmd, out)
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
    if not written and rule is not None and not cmd.code and out.readonly_marks == marks and (
            program in IN_PLACE or any(r.message == f"{program} changes files"
                                       for r in out.reasons[before:])):
        written = named_paths(cmd, out)
    return written


def _writes(cmd: SimpleCommand, out: Out, analysis: Analysis) -> list[str]:
    written: list[str] = []
    for target in write_targets(cmd):
        places = out.paths(target.word)
        if all(harmless(p.path) for p in places):
            continue
        if not rc_append(cmd, target, analysis, out, assess):  # one alias line: by the line
            judge(target, out)
        written.extend(p.path for p in places)
    return written


def _judge_for_content(command: str, ctx: AssessContext | None) -> tuple[bool, list[str]]:
    """A command found in a file's content (a cron line, a unit's ``ExecStart=``): banned?"""
    verdict = assess(command, ctx)
    return verdict.banned, verdict.codes


set_command_judge(_judge_for_content)
