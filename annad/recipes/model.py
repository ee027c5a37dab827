"""Recipes: named, parameterised plan templates in ``/etc/anna/recipes.d/NAME.toml``.

A recipe file::

    description = "Keep the last 3 versions of every package in the cache"

    [params]
    keep = "3"

    [[steps]]
    id = "prune"
    description = "Remove older cached packages"
    command = "paccache -rk{keep}"
    risk = "LOW"            # the author's label; Anna's own analysis can only raise it
    rollback = ""           # optional undo command

    [[checks]]              # optional read-only checks
    id = "cache-size"
    command = "du -sh /var/cache/pacman/pkg"

``{name}`` in a command is replaced by the parameter's value as *one shell-quoted word*
(a value can never add words, operators or substitutions); an unknown ``{name}`` is an
error, and ``{{``/``}}`` stand for literal braces. A placeholder inside quotes, a
here-document, arithmetic or a comment is an error too (:mod:`annad.recipes.placement`):
there the quoted value would not stay one literal word. The file is the administrator's
(root-owned ``/etc``), but its text is still judged like any plan: the daemon
re-validates and classifies the plan it makes from it.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import RiskLevel
from anna_common.protocol.queue import RECIPE_NAME_PATTERN
from annad.recipes.placement import misplaced

_NAME = re.compile(RECIPE_NAME_PATTERN)
_PARAM = re.compile(r"[a-z_][a-z0-9_]{0,31}")
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
MAX_FILE = 64 * 1024
"""Largest recipe file read."""
MAX_VALUE = 256
"""Longest parameter value."""


@dataclass(frozen=True)
class RecipeStep:
    """One step (or check) of a recipe."""

    id: str
    description: str
    command: str
    risk: RiskLevel = RiskLevel.LOW
    rollback: str = ""


@dataclass(frozen=True)
class Recipe:
    """A parsed recipe file."""

    name: str
    description: str
    params: dict[str, str]
    steps: list[RecipeStep]
    checks: list[RecipeStep] = field(default_factory=list)

    def plan(self, values: dict[str, str] | None = None) -> dict[str, Any]:
        """ActionPlan JSON with the parameters filled in (``values`` override defaults)."""
        merged = dict(self.params)
        for key, value in (values or {}).items():
            if key not in self.params:
                raise _bad(self.name, f"unknown parameter {key!r}")
            if len(value) > MAX_VALUE or "\x00" in value:
                raise _bad(self.name, f"parameter {key!r} is too long or holds a NUL")
            merged[key] = value
        steps = [self._fill(s, merged) for s in self.steps]
        checks = [self._fill(c, merged) for c in self.checks]
        return {
            "analysis": f"Recipe {self.name}: {self.description}",
            "goals": [self.description or f"recipe {self.name}"],
            "necessary_checks": [
                {"id": c.id, "description": c.description, "command": c.command,
                 "risk_level": "INFO", "required": False} for c in checks],
            "command_plan": [
                {"id": s.id, "description": s.description, "command": s.command,
                 "risk_level": str(s.risk), "rollback_id": f"undo-{s.id}" if s.rollback else None,
                 "requires_confirmation": s.risk != RiskLevel.INFO} for s in steps],
            "rollback_plan": [
                {"id": f"undo-{s.id}", "description": f"undo {s.id}", "command": s.rollback}
                for s in steps if s.rollback],
            "notes_for_user": "",
            "meta": {"detection_results": {}, "template_used": f"recipe:{self.name}",
                     "llm_version": "anna_runtime_v3"},
        }

    def _fill(self, step: RecipeStep, values: dict[str, str]) -> RecipeStep:
        return RecipeStep(id=step.id, description=step.description,
                          command=fill(self.name, step.command, values), risk=step.risk,
                          rollback=fill(self.name, step.rollback, values) if step.rollback
                          else "")


def fill(recipe: str, template: str, values: dict[str, str]) -> str:
    """Replace ``{name}`` with the shell-quoted value; ``{{``/``}}`` are literal braces."""

    def one(match: re.Match[str]) -> str:
        text = match.group(0)
        if text in ("{{", "}}"):
            return text[0]
        name = match.group(1)
        if name is None or name not in values:
            raise _bad(recipe, f"{text!r} names no parameter (write {{{{ or }}}} for a brace)")
        spans.append((match.start(), match.end()))
        return shlex.quote(values[name])

    spans: list[tuple[int, int]] = []
    filled = _PLACEHOLDER.sub(one, template)
    why = misplaced(template, spans)
    if why is not None:
        raise _bad(recipe, f"a placeholder stands inside {why}, where its quoted value is not "
                   "one literal word (a $(...) in it could run): write it as a word of its own, "
                   "outside quotes (printf '%s\\n' {name}, --opt={name})")
    return filled


def _bad(name: str, why: str) -> AnnaError:
    return AnnaError(f"recipe {name!r}: {why}", code=ErrorCode.CONFIG_INVALID)


def recipe_path(directory: Path, name: str) -> Path:
    """``directory/NAME.toml``; a name that is not a plain recipe name is refused (it comes
    from a URL and from a systemd instance name: never a path)."""
    if not _NAME.fullmatch(name):
        raise AnnaError(f"not a recipe name: {name[:80]!r}", code=ErrorCode.BAD_REQUEST,
                        hint="lower-case letters, digits, - and _")
    return directory / f"{name}.toml"


def load(directory: Path, name: str) -> Recipe:
    """Read and check one recipe."""
    path = recipe_path(directory, name)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE + 1)
    except FileNotFoundError:
        raise AnnaError(f"no recipe {name!r} in {directory}", code=ErrorCode.BAD_REQUEST
                        ) from None
    except OSError as exc:
        raise _bad(name, f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE:
        raise _bad(name, f"{path} is larger than {MAX_FILE} bytes")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise _bad(name, f"{path}: {exc}") from None
    return parse(name, data)


def parse(name: str, data: dict[str, Any]) -> Recipe:
    """A recipe from parsed TOML (unknown keys are errors: a typo must not be ignored)."""
    _keys(name, data, {"description", "params", "steps", "checks"}, "the file")
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise _bad(name, "[params] must be a table")
    clean: dict[str, str] = {}
    for key, value in params.items():
        if not _PARAM.fullmatch(key) or not isinstance(value, str | int) or \
                isinstance(value, bool):
            raise _bad(name, f"parameter {key!r} needs a plain name and a string or integer")
        clean[key] = str(value)
    steps = [_step(name, s, "steps") for s in _tables(name, data.get("steps"), "steps")]
    checks = [_step(name, c, "checks") for c in _tables(name, data.get("checks", []), "checks")]
    if not steps:
        raise _bad(name, "a recipe needs at least one [[steps]] entry")
    recipe = Recipe(name=name, description=str(data.get("description", "")), params=clean,
                    steps=steps, checks=checks)
    recipe.plan()  # every placeholder names a parameter: fail at load, not at 3 a.m.
    return recipe


def _tables(name: str, value: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise _bad(name, f"[[{what}]] must be a list of tables")
    return value


def _keys(name: str, table: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise _bad(name, f"unknown key(s) {', '.join(map(repr, unknown))} in {where}")


def _step(name: str, table: dict[str, Any], what: str) -> RecipeStep:
    _keys(name, table, {"id", "description", "command", "risk", "rollback"}, f"[[{what}]]")
    sid, command = table.get("id"), table.get("command")
    if not isinstance(sid, str) or not sid or not isinstance(command, str) or not command:
        raise _bad(name, f"every [[{what}]] entry needs an id and a command")
    try:
        risk = RiskLevel(str(table.get("risk", "INFO" if what == "checks" else "LOW")).upper())
    except ValueError:
        raise _bad(name, f"step {sid!r}: risk must be INFO, LOW, MEDIUM or HIGH") from None
    return RecipeStep(id=sid, description=str(table.get("description", sid)),
                      command=command, risk=risk, rollback=str(table.get("rollback", "")))


def names(directory: Path) -> list[str]:
    """The recipes in ``directory`` (valid names only), sorted."""
    try:
        return sorted(p.stem for p in directory.glob("*.toml") if _NAME.fullmatch(p.stem))
    except OSError:
        return []
