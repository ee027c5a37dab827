"""Administrator and user policy: parse the rules, decide one command. Pure: no I/O.

This module decides (the matching of a rule against a command's parts); the rules' models
are in :mod:`anna_common.policy.model` and the file parser in :mod:`anna_common.policy.parse`,
both re-exported here as one public interface.

Public interface (also used by unattended recipes):

- :func:`parse` ``(text, *, source, origin) -> Policy`` — one file's rules; raises
  :class:`PolicyError` (``POLICY_INVALID``, ``detail = {file, line}``) on anything
  malformed. Never a partial or empty policy in place of a bad one.
- :func:`combine` ``(admin, user) -> Policy`` — the administrator's rules, then the user's.
- :func:`decide` ``(policy, subject, tier, scope) -> Decision`` — what the policy says about
  one command (its :class:`~anna_common.policy.subject.Subject`, from
  :func:`anna_common.policy.subject.subject`) at the final risk tier and scope Anna gave it.
- :func:`decide_command` ``(policy, command, tier, scope, context) -> Decision`` — the same
  from the command text (it is parsed, never matched as text).

Semantics: ``deny`` wins over everything, wherever it is written. Otherwise the first
administrator rule that matches decides (``ask`` or ``allow``); a user ``ask`` then still
turns an ``allow`` or nothing into ``ask``. A user file may only add restrictions: its
``allow`` rules are ignored, with a note. ``allow`` waives only the single confirmation of
an INFO/LOW item; above LOW it is reported and has no effect; a ban is never approvable.
A deny/ask rule on programs, arguments or paths matches any part Anna cannot see through;
an allow rule matches only a command every part of which it covers.
"""

from __future__ import annotations

import re
from functools import lru_cache

from anna_common.plan import RiskLevel, Scope
from anna_common.policy import options
from anna_common.policy.glob import (
    flat_match,
    intersects,
    literal_prefix,
    rule_variants,
    under,
)
from anna_common.policy.model import Decision, Policy, PolicyError, Rule
from anna_common.policy.parse import combine, parse
from anna_common.policy.subject import ANYWHERE, Part, Subject, subject
from anna_common.risk.rules.base import AssessContext

__all__ = ["Decision", "Policy", "PolicyError", "Rule", "combine", "decide", "decide_command",
           "parse"]

_GLOBBY = re.compile(r"[*?\[]")


def decide_command(policy: Policy, command: str, tier: RiskLevel, scope: Scope,
                   context: AssessContext | None = None) -> Decision:
    """:func:`decide` for a command given as text (parsed by Anna, never matched as text)."""
    return decide(policy, subject(command, context), tier, scope)


def decide(policy: Policy, subj: Subject, tier: RiskLevel, scope: Scope) -> Decision:
    """What ``policy`` says about the command ``subj`` at ``tier`` (Anna's final risk) and
    ``scope``. Pure and deterministic; never raises on any subject."""
    names = frozenset(n for p in subj.parts for n in p.names)
    unseen = any(p.kind != "command" for p in subj.parts)
    # a rule naming only literal programs none of the parts runs cannot match: skip it
    rules = [r for r, keys in _indexed(policy)
             if keys is None or unseen or not keys.isdisjoint(names)]
    for rule in rules:
        if rule.action == "deny":
            hit = _cautious(rule, subj, tier, scope)
            if hit is not None:
                return Decision(action="deny", rule=rule, note=hit, tier=tier)
    decision = Decision(action="default", tier=tier)
    for rule in rules:
        if rule.origin != "admin" or rule.action == "deny":
            continue
        if rule.action == "ask":
            hit = _cautious(rule, subj, tier, scope)
            if hit is not None:
                decision = Decision(action="ask", rule=rule, note=hit, tier=tier)
                break
        elif _proves(rule, subj, tier, scope):
            if tier <= RiskLevel.LOW:
                decision = Decision(action="allow", rule=rule, tier=tier)
            else:
                decision = Decision(action="default", rule=rule, tier=tier, note=(
                    f"allow waives only INFO/LOW confirmations; this is {tier}"))
            break
    if decision.action == "ask":
        return decision
    for rule in rules:
        if rule.origin == "user" and rule.action == "ask":
            hit = _cautious(rule, subj, tier, scope)
            if hit is not None:
                return Decision(action="ask", rule=rule, note=hit, tier=tier)
    return decision


_INDEX: dict[int, tuple[Policy, tuple[tuple[Rule, frozenset[str] | None], ...]]] = {}


def _indexed(policy: Policy) -> tuple[tuple[Rule, frozenset[str] | None], ...]:
    """Each rule with the literal program names it needs (None: it may match any command).
    Computed once per policy object (the daemon keeps one per file content)."""
    entry = _INDEX.get(id(policy))
    if entry is not None and entry[0] is policy:
        return entry[1]
    index = tuple((r, frozenset(r.program) if r.program and not any(
        _GLOBBY.search(p) for p in r.program) else None) for r in policy.rules)
    if len(_INDEX) > 64:
        _INDEX.clear()
    _INDEX[id(policy)] = (policy, index)
    return index


def _applies(rule: Rule, tier: RiskLevel, scope: Scope) -> bool:
    return (not rule.tier or tier in rule.tier) and (not rule.scope or scope in rule.scope)


def _cautious(rule: Rule, subj: Subject, tier: RiskLevel, scope: Scope) -> str | None:
    """For deny and ask: a note (possibly empty) when some part may do what the rule names;
    None when no part can."""
    if not _applies(rule, tier, scope):
        return None
    if not (rule.program or rule.argv or rule.path):
        return ""
    for part in subj.parts:
        if part.kind == "opaque":
            return f"Anna cannot see what it runs ({part.text}), so it may do what this " \
                "rule names"
        if _part_may(rule, part, subj):
            return "" if part.kind == "command" else \
                f"{part.origin} mentions what this rule names"
    return None


def _part_may(rule: Rule, part: Part, subj: Subject) -> bool:
    if part.kind == "text":
        ok = not rule.program or any(_mentions(part.text, p) for p in rule.program)
        ok = ok and (bool(rule.program) or not rule.argv or any(
            _mentions(part.text, a) for a in rule.argv))
    else:
        ok = not rule.program or any(_named(part.names, p) for p in rule.program)
        ok = ok and (not rule.argv or part.dynamic_args or all(
            any(_arg(a, p, part.program, cautious=True) for a in part.args)
            for p in rule.argv))
    if ok and rule.path:
        # a path the command can only act on as that file is matched as the file; only a
        # recursive or unknown reach is matched as the tree below it (issue 34 item 7)
        places = part.writes if rule.access == "write" else part.paths
        ok = any(_in_area(rule, place, subj, cautious=True, tree=place not in part.files)
                 for place in places) or any(_in_area(rule, place, subj, cautious=True,
                                                      tree=False) for place in part.landing)
    return ok


def _proves(rule: Rule, subj: Subject, tier: RiskLevel, scope: Scope) -> bool:
    """For allow: every part is seen and covered by the rule."""
    if not _applies(rule, tier, scope) or not subj.parts:
        return False
    if any(p.kind != "command" for p in subj.parts):
        return False
    writes = [w for p in subj.parts for w in p.writes]
    for part in subj.parts:
        if rule.program and not any(_named((part.program or "",), p) for p in rule.program):
            return False
        if rule.argv and (part.dynamic_args or not all(
                any(_arg(a, p, part.program, cautious=False) for a in part.args)
                for p in rule.argv)):
            return False
    if rule.path:
        return bool(writes) and all(_in_area(rule, w, subj, cautious=False) for w in writes)
    return True


def _named(names: tuple[str, ...], pattern: str) -> bool:
    if not _GLOBBY.search(pattern):
        return pattern in names
    return any(flat_match(pattern, n) for n in names)


def _arg(arg: str, pattern: str, program: str | None, *, cautious: bool) -> bool:
    """``arg`` is what ``pattern`` names: the same text or a glob match, or the same option
    as the program parses it (``--rem``, ``--remove=x``, ``-R`` and ``-Rns`` for a rule
    on pacman's ``--remove``; ``-R`` names the letter R inside any short cluster)."""
    if arg == pattern or (_GLOBBY.search(pattern) and flat_match(pattern, arg)):
        return True
    if not pattern.startswith("-") or not arg.startswith("-") or arg == "-" or \
            _GLOBBY.search(pattern.split("=", 1)[0]):
        return False
    wanted_name, has_value, wanted_value = pattern.partition("=")
    got_name, _, got_value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
    if has_value and not (got_value == wanted_value or flat_match(wanted_value, got_value)):
        return False
    wanted = options.names(program, wanted_name, cautious=False)
    if wanted & options.names(program, got_name, cautious=cautious):
        return True
    # a program the table does not know may still take any unambiguous prefix
    return cautious and any(options.abbreviation_of(program, got_name, w) for w in wanted)


def _mentions(text: str, pattern: str) -> bool:
    core = re.sub(r"[*?\[\]]", "", pattern)
    if not core or core != pattern:
        return True  # a glob: Anna cannot tell what interpreter code builds, match
    return re.search(rf"(?<![\w.-]){re.escape(core)}(?![\w.-])", text) is not None


def _in_area(rule: Rule, place: str, subj: Subject, *, cautious: bool, tree: bool = True
             ) -> bool:
    """``place`` (a resolved path, maybe a pattern) is in the rule's area. Cautious (deny,
    ask): some path it may name is in the area, or — when the command may reach the
    ``tree`` below it — above it. Strict (allow): a literal path inside the area."""
    if not cautious and (place == ANYWHERE or any(c in place for c in "*?[")):
        return False
    for candidate, head in _forms(place, subj.home, subj.nocase):
        for area, area_head in _areas(rule.path, subj.home, subj.nocase):
            # the literal heads must agree as far as both go (cheap; most pairs end here)
            common = min(len(head), len(area_head))
            if head[:common] != area_head[:common]:
                continue
            if under(area, candidate) if cautious and tree else intersects(area, candidate):
                return True
    return False


@lru_cache(maxsize=1024)  # the policy's rules
def _areas(globs: tuple[str, ...], home: str | None, nocase: bool
           ) -> tuple[tuple[str, str], ...]:
    """Every form of a rule's globs (``/**/`` as ``/``, ``~`` as the home), with its
    literal head."""
    return tuple((form, literal_prefix(form)) for glob in globs for variant in
                 rule_variants(glob) for form in _forms_of(variant, home, nocase))


@lru_cache(maxsize=1024)  # a command's paths: bounded memory (issue 22)
def _forms(place: str, home: str | None, nocase: bool) -> tuple[tuple[str, str], ...]:
    return tuple((form, literal_prefix(form)) for form in _forms_of(place, home, nocase))


def _forms_of(path: str, home: str | None, nocase: bool) -> tuple[str, ...]:
    """``~/x`` is also ``HOME/x`` when the owner's home is known; lower case for
    ``nocaseglob``."""
    forms: tuple[str, ...] = (path,)
    if home and (path == "~" or path.startswith("~/")):
        forms = (path, home.rstrip("/") + path[1:])
    return tuple(f.lower() for f in forms) if nocase else forms
