"""Administrator and user policy: parse the rules, decide one command. Pure: no I/O.

Public interface (also used by unattended recipes):

- :func:`parse` ``(text, *, source, origin) -> Policy`` — one file's rules; raises
  :class:`PolicyError` (``POLICY_INVALID``, ``detail = {file, line}``) on anything
  malformed. Never a partial or empty policy in place of a bad one.
- :func:`combine` ``(admin, user) -> Policy`` — the administrator's rules, then the user's.
- :func:`decide` ``(policy, subject, tier, scope) -> Decision`` — what the policy says about
  one command (its :class:`~anna_common.policy_subject.Subject`, from
  :func:`anna_common.policy_subject.subject`) at the final risk tier and scope Anna gave it.
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
import tomllib
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import RiskLevel, Scope
from anna_common.policy_glob import (
    intersects,
    is_valid_glob,
    literal_prefix,
    rule_variants,
    under,
)
from anna_common.policy_mark import PolicyAction, PolicyMark
from anna_common.policy_subject import ANYWHERE, Part, Subject, subject
from anna_common.rules.base import AssessContext

__all__ = ["Decision", "Policy", "PolicyError", "Rule", "combine", "decide", "decide_command",
           "parse"]

MAX_RULES = 5000
"""Rules one file may hold."""
Origin = Literal["admin", "user"]
"""Whose file a rule comes from."""
_MODEL = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
_KEYS = frozenset({"id", "action", "program", "argv", "path", "access", "scope", "tier",
                   "note"})
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")
_SHORT = re.compile(r"^-[A-Za-z0-9]$")
_GLOBBY = re.compile(r"[*?\[]")


class PolicyError(AnnaError):
    """A policy file is malformed (``detail``: ``file``, ``line``)."""

    code = ErrorCode.POLICY_INVALID


class Rule(BaseModel):
    """One rule, as written (lists normalised)."""

    model_config = _MODEL

    id: str
    """Its name (the ``id`` key, else ``FILE:LINE``)."""
    action: Literal["deny", "ask", "allow"]
    """What it decides when it matches."""
    program: tuple[str, ...] = ()
    """Program names or globs (basenames): matched against the program and every wrapper
    crossed to reach it (``sudo``, ``env``)."""
    argv: tuple[str, ...] = ()
    """Argument globs; each must match some argument. ``-X`` (one letter) also matches a
    cluster of short options holding it (``-Rns``)."""
    path: tuple[str, ...] = ()
    """Path globs (``/etc/ssh/**``, ``~/.ssh/*``)."""
    access: Literal["write", "any"] = "write"
    """``write``: the paths a command writes; ``any``: every path it names."""
    scope: tuple[Scope, ...] = ()
    """Scopes it applies to (empty: all)."""
    tier: tuple[RiskLevel, ...] = ()
    """Final risk tiers it applies to (empty: all)."""
    note: str = ""
    """The administrator's words, shown with the decision."""
    source: str = ""
    """``FILE:LINE`` of its ``[[rule]]`` header."""
    origin: Origin = "admin"
    """Whose file it comes from."""

    def mark(self, action: PolicyAction, note: str = "") -> PolicyMark:
        """This rule as the mark a plan item carries."""
        return PolicyMark(action=action, rule=self.id, source=self.source,
                          note=note or self.note)


class Policy(BaseModel):
    """The rules in force, in order, and what loading them had to say."""

    model_config = _MODEL

    rules: tuple[Rule, ...] = ()
    """Administrator rules first, then the user's."""
    sources: tuple[str, ...] = ()
    """The files read."""
    notes: tuple[str, ...] = ()
    """Things the person should see (a user ``allow`` that was ignored)."""


class Decision(BaseModel):
    """What the policy says about one command."""

    model_config = _MODEL

    action: PolicyAction
    """``deny``, ``ask``, ``allow`` or ``default`` (the tier decides alone)."""
    rule: Rule | None = None
    """The rule that decided (None: no rule matched)."""
    note: str = ""
    """Why, beyond the rule (an unseen part, an allow above LOW)."""
    tier: RiskLevel = RiskLevel.INFO
    """The tier the decision was made at."""

    def mark(self) -> PolicyMark | None:
        """The mark a plan item carries (None when no rule matched)."""
        return None if self.rule is None else self.rule.mark(self.action, self.note)


# ---------------------------------------------------------------------- parsing

def parse(text: str, *, source: str, origin: Origin = "admin") -> Policy:
    """The rules of one file. Raises :class:`PolicyError` naming ``source`` and the line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        last = max(len(text.splitlines()), 1)  # "at end of document": the last line
        raise _error(source, int(found.group(1)) if found else last, f"not valid TOML: {exc}") \
            from None
    headers = [i + 1 for i, line in enumerate(text.splitlines())
               if re.match(r"^\s*\[\[\s*rule\s*\]\]", line)]
    for key, value in data.items():
        if key == "version" and value != 1:
            raise _error(source, _key_line(text, 0, key), "version must be 1")
        if key not in ("version", "rule"):
            raise _error(source, _key_line(text, 0, key), f"unknown key {key!r} (expected "
                         "[[rule]] tables and an optional version = 1)")
    raw = data.get("rule", [])
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        raise _error(source, _key_line(text, 0, "rule"), "rule must be [[rule]] tables")
    if len(raw) > MAX_RULES:
        raise _error(source, 1, f"more than {MAX_RULES} rules")
    rules: list[Rule] = []
    notes: list[str] = []
    for index, table in enumerate(raw):
        line = headers[index] if index < len(headers) else 1
        rule = _rule(table, text, source, line, origin)
        if origin == "user" and rule.action == "allow":
            notes.append(f"{rule.source}: rule {rule.id!r} is an allow in a user policy, "
                         "which may only add restrictions: ignored")
            continue
        rules.append(rule)
    return Policy(rules=tuple(rules), sources=(source,), notes=tuple(notes))


def combine(admin: Policy, user: Policy | None) -> Policy:
    """The administrator's policy followed by the user's (its allow rules already gone)."""
    if user is None:
        return admin
    return Policy(rules=admin.rules + tuple(r for r in user.rules if r.action != "allow"),
                  sources=admin.sources + user.sources, notes=admin.notes + user.notes)


def _error(source: str, line: int, message: str) -> PolicyError:
    return PolicyError(f"{source}:{line}: {message}", detail={"file": source, "line": line},
                       hint="fix the policy file; annad does not start with a malformed policy")


def _key_line(text: str, header: int, key: str) -> int:
    """The line of ``key =`` at or after line ``header`` (the header itself when not found)."""
    lines = text.splitlines()
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
    for number in range(max(header, 1), len(lines) + 1):
        if number > header and header and re.match(r"^\s*\[", lines[number - 1]):
            break
        if pattern.match(lines[number - 1]):
            return number
    return max(header, 1)


def _rule(table: dict[str, Any], text: str, source: str, line: int, origin: Origin) -> Rule:
    def fail(key: str, message: str) -> PolicyError:
        return _error(source, _key_line(text, line, key) if key else line, message)

    for key in table:
        if key not in _KEYS:
            raise fail(key, f"unknown key {key!r} in a rule (known: {', '.join(sorted(_KEYS))})")
    action = table.get("action")
    if action not in ("deny", "ask", "allow"):
        raise fail("action" if "action" in table else "", f"action must be deny, ask or allow, "
                   f"not {action!r}")
    ident = table.get("id", f"{source.rsplit('/', 1)[-1]}:{line}")
    if not isinstance(ident, str) or not _ID.match(ident):
        raise fail("id", "id must be 1-64 letters, digits, '.', '_', ':' or '-'")
    fields: dict[str, Any] = {"id": ident, "action": action, "source": f"{source}:{line}",
                              "origin": origin}
    for key in ("program", "argv", "path", "scope", "tier"):
        if key in table:
            fields[key] = _strings(table[key], lambda m, k=key: fail(k, m), key)
    fields["program"] = tuple(p.rsplit("/", 1)[-1] or p for p in fields.get("program", ()))
    for pattern in fields.get("path", ()):
        if not is_valid_glob(pattern):
            raise fail("path", f"bad path glob {pattern!r}: absolute (/…) or home (~/…), "
                       "brackets closed, ** only as a whole component")
    for key, allowed in (("scope", {"user", "system"}),
                         ("tier", {"INFO", "LOW", "MEDIUM", "HIGH"})):
        bad = [v for v in fields.get(key, ()) if v not in allowed]
        if bad:
            raise fail(key, f"{key} must be among {', '.join(sorted(allowed))}, not {bad[0]!r}")
    for key in ("access", "note"):
        if key in table and not isinstance(table[key], str):
            raise fail(key, f"{key} must be a string")
    if table.get("access", "write") not in ("write", "any"):
        raise fail("access", "access must be 'write' or 'any'")
    return Rule(**fields, access=table.get("access", "write"), note=table.get("note", ""))


def _strings(value: object, fail: Any, key: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(
            isinstance(v, str) and v.strip() for v in items):
        raise fail(f"{key} must be a non-empty string or list of non-empty strings")
    return tuple(items)


# ---------------------------------------------------------------------- deciding

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
            any(_arg(a, p) for a in part.args) for p in rule.argv))
    if ok and rule.path:
        places = part.writes if rule.access == "write" else part.paths
        ok = any(_in_area(rule, place, subj, cautious=True) for place in places)
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
                any(_arg(a, p) for a in part.args) for p in rule.argv)):
            return False
    if rule.path:
        return bool(writes) and all(_in_area(rule, w, subj, cautious=False) for w in writes)
    return True


def _named(names: tuple[str, ...], pattern: str) -> bool:
    if not _GLOBBY.search(pattern):
        return pattern in names
    return any(fnmatchcase(n, pattern) for n in names)


def _arg(arg: str, pattern: str) -> bool:
    if arg == pattern or (_GLOBBY.search(pattern) and fnmatchcase(arg, pattern)):
        return True
    # "-R" names the short option R, wherever it stands in a cluster ("-Rns", "-sR")
    return bool(_SHORT.match(pattern)) and arg.startswith("-") and not arg.startswith(
        "--") and pattern[1] in arg[1:]


def _mentions(text: str, pattern: str) -> bool:
    core = re.sub(r"[*?\[\]]", "", pattern)
    if not core or core != pattern:
        return True  # a glob: Anna cannot tell what interpreter code builds, match
    return re.search(rf"(?<![\w.-]){re.escape(core)}(?![\w.-])", text) is not None


def _in_area(rule: Rule, place: str, subj: Subject, *, cautious: bool) -> bool:
    """``place`` (a resolved path, maybe a pattern) is in the rule's area. Cautious (deny,
    ask): some path it may name is in or below… the area, or above it. Strict (allow): a
    literal path inside the area."""
    if not cautious and (place == ANYWHERE or any(c in place for c in "*?[")):
        return False
    for candidate, head in _forms(place, subj.home, subj.nocase):
        for area, area_head in _areas(rule.path, subj.home, subj.nocase):
            # the literal heads must agree as far as both go (cheap; most pairs end here)
            common = min(len(head), len(area_head))
            if head[:common] != area_head[:common]:
                continue
            if under(area, candidate) if cautious else intersects(area, candidate):
                return True
    return False


@lru_cache(maxsize=4096)
def _areas(globs: tuple[str, ...], home: str | None, nocase: bool
           ) -> tuple[tuple[str, str], ...]:
    """Every form of a rule's globs (``/**/`` as ``/``, ``~`` as the home), with its
    literal head."""
    return tuple((form, literal_prefix(form)) for glob in globs for variant in
                 rule_variants(glob) for form in _forms_of(variant, home, nocase))


@lru_cache(maxsize=16384)
def _forms(place: str, home: str | None, nocase: bool) -> tuple[tuple[str, str], ...]:
    return tuple((form, literal_prefix(form)) for form in _forms_of(place, home, nocase))


def _forms_of(path: str, home: str | None, nocase: bool) -> tuple[str, ...]:
    """``~/x`` is also ``HOME/x`` when the owner's home is known; lower case for
    ``nocaseglob``."""
    forms: tuple[str, ...] = (path,)
    if home and (path == "~" or path.startswith("~/")):
        forms = (path, home.rstrip("/") + path[1:])
    return tuple(f.lower() for f in forms) if nocase else forms
