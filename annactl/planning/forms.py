"""Request forms sized to the request (issue 24.3): what the model is asked to write.

Measured with two tiny models on 2 cores (shared/real-llm.md): under the full contract
schema both fill every list slot and run to the token cap (108 s and more, 0 of 10 closed);
a short system message with a small per-task schema closed 10 of 10 replies in 4–10 s. So:

* ``answer`` — a question ("how is my system", "what uses my memory"): one answer of at
  most :data:`ANSWER_CHARS` characters and up to :data:`MAX_CITATIONS` citations of the
  documents it was given (:mod:`annactl.planning.citations`); it may first ask for
  read-only checks, run without asking, and answer from their output in a second call, and
  a "how do I" question gets one command with Anna's reading of it, never run
  (:mod:`annactl.planning.question`).
* ``package`` / ``service`` / ``wallpaper`` — a request an offline template family covers:
  the model fills the family's values (which package, which unit, which image) and Anna
  writes the commands with that family's template. A value the template refuses is a
  finding like a schema error.
* ``plan`` — anything else: the full contract (per-position ids,
  :mod:`anna_common.positional`).

Each small form has its own static system message (prompt files ``system_answer`` and
``system_fill``, well under 1,000 tokens, byte-identical across requests of that form so a
server's prefix cache holds). Whatever form answered, :func:`to_plan` returns a contract
:class:`~anna_common.plan.ActionPlan`: validation, risk, digests and the daemon see nothing
new. A reply in the full contract shape is accepted in any form (it is validated as a plan).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from anna_common.findings import Finding, FindingCode
from annactl.planning.offrequest import action_verb

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.plan import ActionPlan
    from annactl.planning.templates.base import Context

FORMS = ("answer", "package", "service", "wallpaper", "plan")
"""Every form, smallest first."""
SMALL_FORMS = frozenset({"answer", "package", "service", "wallpaper"})
"""Forms with a short system message and a small schema."""
FAMILY_FORMS = frozenset({"package", "service", "wallpaper"})
"""Forms whose commands Anna writes from the model's values."""
ANSWER_CHARS = 600
"""Longest answer the answer form lets the model write."""
MAX_CITATIONS = 3
"""Citations the answer form allows (the model's choice within this maximum)."""
QUOTE_CHARS = 120
"""Longest quote in a citation."""
DOC_PATTERN = r"^(telemetry|memory|check):[A-Za-z0-9_.@:+-]{1,80}$"
"""A cited document: ``telemetry:memory.percent``, ``memory:editor``, ``check:c1``."""
_PACKAGE = r"^[a-z0-9@_+][a-z0-9@._+-]{0,99}$"
_UNIT = r"^[A-Za-z0-9_][A-Za-z0-9@._:-]{0,150}$"
_ASKING = frozenset({"show", "list", "tell", "explain", "display", "check", "describe"})
_WALLPAPER_WORDS = re.compile(r"(?i)\b(wallpaper|background|backdrop)\b")
_WORD = re.compile(r"\w")
"""A letter or digit, in any script: a value without one is punctuation, not a value."""


@dataclass(frozen=True)
class FormReply:
    """A reply turned into a contract plan, or the findings why it could not be."""

    plan: dict[str, Any] | None
    """The contract ActionPlan as JSON (validated by the caller like any reply)."""
    citations: list[dict[str, str]]
    """What the model cited (unverified)."""
    findings: list[Finding]
    """Why the reply is not usable in this form (empty when ``plan`` is set)."""
    built: bool = False
    """Anna wrote the plan with a family template from the model's values (so it does what
    the template does: "already installed" is an answer, not an off-request plan)."""


PACKAGE_FAMILIES = frozenset({"arch", "debian", "fedora", "suse"})
"""Distribution families the package form's templates speak: the keys of
:data:`annactl.planning.templates.managers.MANAGERS`, named here so the planner picks a form
without importing every template (``ask --no-templates`` never loads them)."""


def choose(request: str, *, arch: bool = True) -> str:
    """The form for ``request``: a question, a template family, or a free plan."""
    verb = action_verb(request)
    words = request.strip().lower().split()
    first = words[0].strip(",.:!?") if words else ""
    if verb is None:
        if _WALLPAPER_WORDS.search(request) and first in ("make", "use", "put"):
            return "wallpaper"
        if request.rstrip().endswith("?") or first in _ASKING or first in (
                "how", "what", "why", "which", "where", "when", "who", "is", "are", "does",
                "do", "am", "whats", "what's", "how's"):
            return "answer"
        return "plan"
    if verb in ("install", "setup", "remove", "uninstall") and arch:
        return "package"
    if verb in ("restart", "enable"):
        return "service"
    if verb in ("change", "set", "switch") and _WALLPAPER_WORDS.search(request):
        return "wallpaper"
    return "plan"


def _text(limit: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": limit}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "properties": properties,
            "required": list(properties)}


def schema(form: str) -> dict[str, Any]:
    """The model-facing JSON Schema of a small form (the same dict every call)."""
    if form == "answer":
        from annactl.planning.question import CHECK_CHARS, COMMAND_CHARS, MAX_CHECKS

        citation = _object({"doc": {"type": "string", "pattern": DOC_PATTERN},
                            "quote": _text(QUOTE_CHARS)})
        # checks first: a model decides to look before it writes an answer (a grammar emits
        # the properties in this order)
        return _object({"necessary_checks": {"type": "array", "items": _text(CHECK_CHARS),
                                             "maxItems": MAX_CHECKS},
                        "answer": _text(ANSWER_CHARS), "command": _text(COMMAND_CHARS),
                        "citations": {"type": "array", "items": citation,
                                      "maxItems": MAX_CITATIONS}})
    if form == "package":
        return _object({"action": {"enum": ["install", "remove"]},
                        "package": {"type": "string", "pattern": _PACKAGE, "maxLength": 100}})
    if form == "service":
        return _object({"action": {"enum": ["restart", "enable"]},
                        "unit": {"type": "string", "pattern": _UNIT, "maxLength": 150}})
    if form == "wallpaper":
        return _object({"path": _text(200)})
    raise ValueError(f"no small schema for form {form!r}")


def _finding(message: str, path: str = "") -> Finding:
    return Finding(code=FindingCode.SCHEMA_ERROR, message=message, path=path)


def _values(obj: dict[str, Any], names: tuple[str, ...]) -> list[str] | Finding:
    values: list[str] = []
    for name in names:
        value = obj.get(name)
        if not isinstance(value, str) or not value.strip():
            return _finding(f"{name} must be a non-empty string", name)
        # the form's own placeholder ("...") copied back: measured with the real Gemma 3
        # 270M, 8 of 8 closed answers were {"answer": "..."}, and the person got "..."
        if not _WORD.search(value):
            return _finding(f"{name} must say something in words, not a placeholder such "
                            "as ...", name)
        values.append(value.strip())
    return values


def _citations(obj: dict[str, Any]) -> list[dict[str, str]]:
    raw = obj.get("citations")
    if not isinstance(raw, list):
        return []
    return [{"doc": str(c.get("doc", "")), "quote": str(c.get("quote", ""))}
            for c in raw[:MAX_CITATIONS * 2] if isinstance(c, dict)]


def to_plan(form: str, obj: dict[str, Any], context: Callable[[], Context]) -> FormReply:
    """The contract plan a reply in ``form`` stands for (see the module docstring).
    ``context`` is called only for a reply that needs it (not a free plan: building it
    imports every offline template, ~10 ms of a planning request)."""
    citations = _citations(obj)
    if "command_plan" in obj or form == "plan":
        plan = {k: v for k, v in obj.items() if k != "citations"}
        return FormReply(plan, citations, [])
    ctx = context()
    if form == "answer":
        from annactl.planning.question import answer_plan

        answered = answer_plan(obj, ctx.request, ctx.assess_context)
        if isinstance(answered, str):
            return FormReply(None, citations, [_finding(answered, "answer")])
        return FormReply(answered, citations, [])
    built = _family_plan(form, obj, ctx)
    if isinstance(built, Finding):
        return FormReply(None, citations, [built])
    return FormReply(built.model_dump(mode="json"), citations, [], built=True)


def _family_plan(form: str, obj: dict[str, Any], ctx: Context) -> ActionPlan | Finding:
    """Run the family's template on the values the model filled in."""
    from dataclasses import replace

    from annactl.planning.templates.packages import install_package, remove_package
    from annactl.planning.templates.services import service_action
    from annactl.planning.templates.wallpaper import change_wallpaper

    if form == "wallpaper":
        got = _values(obj, ("path",))
        if isinstance(got, Finding):
            return got
        request, template = f"change my wallpaper to {got[0]}", change_wallpaper
    else:
        names = ("action", "package") if form == "package" else ("action", "unit")
        got = _values(obj, names)
        if isinstance(got, Finding):
            return got
        action, value = got
        if " " in value:
            return _finding(f"{names[1]} must be one name", names[1])
        allowed = ("install", "remove") if form == "package" else ("restart", "enable")
        if action not in allowed:
            return _finding(f"action must be one of {', '.join(allowed)}", "action")
        request = f"{action} {value}"
        template = ((install_package if action == "install" else remove_package)
                    if form == "package" else service_action)
    unnamed = unnamed_value(form, got[-1], ctx)
    if unnamed is not None:
        return unnamed
    asked = replace(ctx, request=request)
    found = template(asked)
    if found is not None and found.rejected:
        return _finding(found.rejected)  # the value itself is wrong: the model may repair it
    if found is None or found.plan is None:
        return _machine_lacks(form, asked, found)
    return found.plan


def _machine_lacks(form: str, ctx: Context, found: Any) -> ActionPlan | Finding:
    """The family's template does not act on this machine (no wallpaper backend, no package
    manager it speaks): that reason is the answer, never a bad reply to repair."""
    from annactl.planning.templates.base import PlanBuilder
    from annactl.planning.templates.nearmiss import near_miss

    why = near_miss(ctx, found)
    if why is None:
        return _finding(f"Anna's {form} template cannot act on these values here")
    builder = PlanBuilder(ctx, f"{form}_unavailable_v1", [f"Answer: {ctx.request}"[:150]])
    return builder.build(f"Anna cannot do this here: {why}.",
                         f"I cannot do this on this machine: {why.replace(' offline', '')}.")


_TOKEN = re.compile(r"[a-z0-9@_+][a-z0-9@._+-]*")


def unnamed_value(form: str, value: str, ctx: Context) -> ActionPlan | None:
    """A question instead of a plan when the model's package or unit is named nowhere in
    what it was shown (the request and the telemetry sent): a value it supplied itself, a
    copied example or a guess ("remove orphaned packages" answered with one installed
    package), is the person's to confirm. None when the value is named there."""
    if form == "wallpaper" or not ctx.sent:
        return None  # the wallpaper template refuses a path that is not a plain one
    from annactl.planning.templates.base import PlanBuilder
    from annactl.planning.templates.services import KNOWN_UNITS

    low = value.lower()
    stem = low.removesuffix(".service")
    shown = set(_TOKEN.findall(f"{ctx.request}\n{ctx.sent}".lower()))
    asked = set(_TOKEN.findall(ctx.request.lower()))
    aliases = {KNOWN_UNITS[w][0].lower() for w in asked if w in KNOWN_UNITS}
    if low in shown or stem in shown or low in aliases:
        return None
    what = "package" if form == "package" else "unit"
    builder = PlanBuilder(ctx, f"{form}_question_v1", [f"Ask which {what} is meant"])
    return builder.build(
        f"The model chose the {what} {value}, which the request does not name and the "
        "telemetry does not show; Anna plans only what the person named.",
        f"Which {what} do you mean? Your request names none, and I will not guess one. If "
        f"you meant {value}, ask again naming it.")
