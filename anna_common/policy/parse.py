"""Reading a policy file: TOML ``[[rule]]`` tables into a :class:`Policy`, or an error.

Anything malformed raises :class:`PolicyError` (``POLICY_INVALID``, ``detail = {file,
line}``) naming the line it is on: never a partial or empty policy in place of a bad one.
A user file may only add restrictions: its ``allow`` rules are dropped, with a note. The
public interface is re-exported by :mod:`anna_common.policy.decide`. Pure: no I/O.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from anna_common.policy.agents import parse_agents, restricted
from anna_common.policy.glob import glob_problem, size_problem
from anna_common.policy.model import Origin, Policy, PolicyError, Rule

MAX_RULES = 5000
"""Rules one file may hold."""
MAX_PATTERNS = 64
"""Programs, arguments or paths one rule key may list."""
_KEYS = frozenset({"id", "action", "program", "argv", "path", "access", "scope", "tier",
                   "note"})
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")


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
        if key not in ("version", "rule", "agents"):
            raise _error(source, _key_line(text, 0, key), f"unknown key {key!r} (expected "
                         "[[rule]] tables, an optional [agents] table and version = 1)")
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
    agents = None
    if "agents" in data:
        header = next((i + 1 for i, line in enumerate(text.splitlines())
                       if re.match(r"^\s*\[\s*agents\s*\]", line)), 1)
        agents = parse_agents(data["agents"], lambda key, message: _error(
            source, _key_line(text, header, key), message))
    return Policy(rules=tuple(rules), sources=(source,), notes=tuple(notes), agents=agents)


def combine(admin: Policy, user: Policy | None) -> Policy:
    """The administrator's policy followed by the user's (its allow rules already gone)."""
    if user is None:
        return admin
    return Policy(rules=admin.rules + tuple(r for r in user.rules if r.action != "allow"),
                  sources=admin.sources + user.sources, notes=admin.notes + user.notes,
                  agents=restricted(admin.agents, user.agents))


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
    for key in ("program", "argv", "path"):
        values = fields.get(key, ())
        if len(values) > MAX_PATTERNS:
            raise fail(key, f"{key} lists {len(values)} patterns; at most {MAX_PATTERNS}")
        for pattern in values:
            # bounded at parse time, so no rule can make matching slow (issue 21)
            problem = glob_problem(pattern) if key == "path" else size_problem(pattern)
            if problem is not None:
                raise fail(key, f"bad {key} glob {pattern[:80]!r}: {problem}")
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
