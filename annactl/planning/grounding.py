"""Is a valid reply a plan for *this* request? Echoed examples and off-request plans.

A small model under a JSON grammar often returns the system prompt's example
word for word, whatever was asked; and a plan can be valid yet not do what was
asked ("install htop" answered with a health summary). Both are findings fed
to the repair round, like a schema error.

The echo check is generic over the prompt files: the example text is whatever
follows the marker ``annactl/planning/prompts/registry.json`` names (``examples``), and
the registry lists the examples' distinctive literals. Nothing here names an
example string. Long shared word runs are what an echo looks like; short ones
(``pacman -S htop``, "the user wants") are how any two plans talk.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from anna_common.findings import Finding, FindingCode

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan

PROSE_NGRAM = 8
"""Words in a row a prose field (analysis, goals, notes) may share with an example."""
COMMAND_NGRAM = 14
"""Words in a row a command may share with an example command (they share idioms)."""
PROSE_COVERAGE = 0.5
"""Share of the reply's prose words inside shared runs above which the prose is a copy."""
_WORD = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*")


def words(text: str) -> list[str]:
    """Lower-case word tokens (numbers and dotted names stay whole: ``14.4``, ``i7-9700k``)."""
    return _WORD.findall(text.lower())


def _grams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


@dataclass(frozen=True)
class Examples:
    """The example text of the prompt files, as the echo check sees it."""

    tokens: tuple[str, ...]
    """Every word of the examples."""
    literals: tuple[str, ...]
    """Distinctive literals the registry marks (as written; compared without case)."""


@cache
def examples() -> Examples:
    """The examples of every prompt the registry marks (read once per process)."""
    from annactl.planning.prompt import PROMPT_DIR, prompts

    registry = json.loads((PROMPT_DIR / "registry.json").read_text(encoding="utf-8"))
    marked = registry.get("examples", {})
    tokens: list[str] = []
    literals: list[str] = []
    texts = prompts().texts
    for prompt_id, entry in marked.items():
        if prompt_id not in texts or not isinstance(entry, dict):
            continue
        text = texts[prompt_id]
        start = text.find(str(entry.get("start", "")))
        tokens.extend(words(text[max(start, 0):]))
        literals.extend(str(x) for x in entry.get("literals", []))
    return Examples(tokens=tuple(tokens), literals=tuple(literals))


def shared_coverage(text: str, n: int, ex: Examples | None = None) -> tuple[int, float]:
    """(longest shared run counted in n-grams found, share of ``text``'s words inside them)."""
    ex = ex or examples()
    tokens = words(text)
    if len(tokens) < n:
        return 0, 0.0
    known = _grams(list(ex.tokens), n)
    covered = [False] * len(tokens)
    hits = 0
    for i in range(len(tokens) - n + 1):
        if tuple(tokens[i:i + n]) in known:
            hits += 1
            covered[i:i + n] = [True] * n
    return hits, sum(covered) / len(tokens)


def model_strings(value: object) -> list[str]:
    """Every string in a JSON-ready value, mapping keys included (depth-first)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        found: list[str] = []
        for key, item in value.items():
            found.append(str(key))
            found.extend(model_strings(item))
        return found
    if isinstance(value, list):
        return [s for item in value for s in model_strings(item)]
    return []


def echo_findings(plan: AnnotatedPlan, *, request: str, sent: str) -> list[Finding]:
    """Findings when the reply reproduces a prompt example.

    ``sent`` is the text the model was given about this machine (the user message): a
    literal that is there too (the person really has that CPU, or asked for that path)
    is not an echo.
    """
    ex = examples()
    p = plan.plan
    prose = " ".join([p.analysis, *p.goals, p.notes_for_user])
    commands = [s.command for s in [*plan.checks, *plan.steps, *plan.rollback]]
    # the literals are searched in every string the model wrote: descriptions, detection
    # results, memory_patch keys and values (a model proposed remembering the example's
    # image path), not only the prose and commands
    reply = "\n".join(model_strings(p.model_dump(mode="json"))).lower()
    context = (request + "\n" + sent).lower()
    found: list[str] = []
    for lit in sorted(ex.literals, key=len, reverse=True):
        low = lit.lower()
        # excused when the context holds it or a marked part of it ("~/besseggen.png"
        # asked for, "/home/user/besseggen.png" planned)
        excused = any(o.lower() in low and o.lower() in context for o in ex.literals)
        if low in reply and not excused and not any(low in f.lower() for f in found):
            found.append(lit)
    reasons: list[str] = []
    if found:
        reasons.append("it repeats the example's " + ", ".join(repr(x) for x in found[:3]))
    hits, coverage = shared_coverage(prose, PROSE_NGRAM, ex)
    if hits and coverage >= PROSE_COVERAGE:
        reasons.append(f"{coverage:.0%} of its analysis, goals and notes is copied from an "
                       "example")
    copied = [c for c in commands if shared_coverage(c, COMMAND_NGRAM, ex)[0]]
    if copied and (found or coverage >= PROSE_COVERAGE):
        reasons.append(f"{len(copied)} command(s) copied from an example")
    if not reasons:
        return []
    return [Finding(code=FindingCode.LLM_ECHOED_EXAMPLE,
                    message="the reply copies the prompt's example instead of planning this "
                            "request: " + "; ".join(reasons) + ". Plan the user's request "
                            "from its own telemetry.")]
