"""The model's citations, checked against the documents it was given (seed 001, issue 25.2).

The answer form lets the model cite what it used: a telemetry field by its path
(``telemetry:memory.percent``, ``telemetry:disks.0.free_gb``), a remembered setting
(``memory:editor``) or a necessary check's result (``check:c1``), each with a short quote.
Anna holds those documents, so Anna verifies every citation: the field must exist in the
request packet that was sent, and the quote must be in it (compared without case, spacing,
quotes or a trailing unit). A citation that fails is flagged exactly like a contradicted
fact (a :class:`~annactl.planning.facts.Contradiction` beside the answer); one that holds
is kept, with the document's own value, to be shown beside the answer and stored in the
response packet's ``assistant.citations``.

Every string here is untrusted (the model's quote and the documents alike): data only.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from annactl.planning.telemetry_trim import cut

if TYPE_CHECKING:
    from annactl.planning.facts import Contradiction

VALUE_CHARS = 160
"""Longest document value kept beside a citation."""
_UNIT = re.compile(r"\s*(%|percent|per cent|gib|gb|gigabytes?|mib|mb|megabytes?|°c|c|"
                   r"degrees?(?: c| celsius)?|h|hours?|s|seconds?|cores?|threads?)\s*$")
_NOISE = re.compile(r"[\"'`]")
_TOKEN = re.compile(r"[a-z0-9]+(?:[._:/-][a-z0-9]+)*")
UNCITED = "uncited"
"""``Contradiction.fact`` of an answer about the machine that cites nothing: unverified."""
_NO_CLAIM = re.compile(r"(?i)\b(do(?:es)? not|don't|doesn't|cannot|can't) (show|say|tell|hold|"
                       r"contain|know)\b")


@dataclass(frozen=True)
class Citation:
    """One citation and what Anna found."""

    doc: str
    """What the model cited (``telemetry:<path>``, ``memory:<key>``, ``check:<id>``)."""
    quote: str
    """What the model quoted (untrusted)."""
    verified: bool
    """The cited field exists and holds the quote."""
    value: str
    """The document's own value at that place (cut), or "" when there is none."""
    reason: str = ""
    """Why a citation failed."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the response packet's ``assistant.citations``)."""
        return asdict(self)


def _norm(text: str) -> str:
    text = _NOISE.sub("", " ".join(text.lower().split()))
    return _UNIT.sub("", text).strip()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           separators=(",", ":"))


def _walk(content: Any, path: str) -> tuple[bool, Any]:
    node = content
    for part in [p for p in path.split(".") if p]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def _lookup(doc: str, documents: list[dict[str, Any]]) -> tuple[bool, Any, str]:
    """(found, value, reason) for a cited document reference."""
    kind, _, where = doc.partition(":")
    by_kind = {d.get("kind"): d.get("content") for d in documents}
    if kind == "telemetry" and "telemetry" in by_kind:
        found, value = _walk(by_kind["telemetry"], where)
        return found, value, "" if found else "no such telemetry field was sent"
    memory, checks = by_kind.get("memory"), by_kind.get("check_results")
    if kind == "memory" and isinstance(memory, dict):
        return (where in memory, memory.get(where),
                "" if where in memory else "no such remembered setting")
    if kind == "check":
        rows = [r for d in documents if d.get("kind") == "check_results"
                and isinstance(d.get("content"), list) for r in d["content"]]
        for row in rows if checks is not None else []:
            if isinstance(row, dict) and row.get("id") == where:
                # the output as printed (tabs, newlines), not as JSON escapes it, then the rest
                rest = {k: v for k, v in row.items() if k != "output"}
                return True, f"{row.get('output') or ''} {_text(rest)}", ""
        return False, None, "no check with this id ran"
    return False, None, f"no {kind or 'such'} document was given"


def verify(cited: list[dict[str, str]], documents: list[dict[str, Any]]) -> list[Citation]:
    """Each citation checked against the request packet's documents."""
    results: list[Citation] = []
    for entry in cited:
        doc, quote = str(entry.get("doc", ""))[:100], str(entry.get("quote", ""))[:200]
        found, value, reason = _lookup(doc, documents)
        text = _text(value) if found else ""
        ok = found and bool(_norm(quote)) and (_norm(quote) in _norm(text)
                                               or paraphrase(quote, text))
        if found and not ok:
            reason = "the quote is not in the cited document"
        results.append(Citation(doc=doc, quote=quote, verified=ok, value=cut(text, VALUE_CHARS),
                                reason="" if ok else reason))
    return results


def paraphrase(quote: str, value: str) -> bool:
    """The quote restates the value in other order or with words left out: every word and
    number of the quote is in the value ("Debian 12" of "Debian GNU/Linux 12 (bookworm)",
    "28 percent" of ``28``), so a true value quoted loosely is not flagged as false."""
    said = set(_TOKEN.findall(_norm(quote)))
    return bool(said) and said <= set(_TOKEN.findall(_norm(value)))


def uncited(answer: str, citations: list[Citation]) -> list[Contradiction]:
    """An answer that cites nothing is unverified, unless it claims nothing ("the documents
    do not show this"): marked so, never printed as if Anna had checked it."""
    from annactl.planning.facts import Contradiction

    if citations or not answer.strip() or _NO_CLAIM.search(answer):
        return []
    return [Contradiction(fact=UNCITED, claim=cut(answer, 80),
                          telemetry="cites no document: unverified", where="notes_for_user")]


def flagged(citations: list[Citation]) -> list[Contradiction]:
    """The failed citations, as contradicted facts (shown and counted like them)."""
    from annactl.planning.facts import Contradiction

    return [Contradiction(fact=f"citation {c.doc}", claim=c.quote,
                          telemetry=c.value or c.reason, where="notes_for_user")
            for c in citations if not c.verified]
