"""The prose of a reply while the model is still writing it (issue 36.1).

The model answers in JSON (a structured-output schema), so the words a person reads are one
string field inside an object that is not closed yet: ``answer`` in the answer form,
``analysis`` in a full plan. :func:`prose` decodes the reply so far with pydantic-core's
partial JSON mode (a string cut mid-way, even mid-escape, is read up to where it is
complete) and returns that field. Family forms (package, service, wallpaper) have no prose.

The planner's thread appends pieces to a :class:`StreamedReply` (the provider's
``on_text``) and hands it on with every :class:`~annactl.planning.outcome.Progress`; the
front end reads it between spinner frames (:mod:`annactl.ui.streamed`). The text is
untrusted: nothing here prints it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PROSE_FIELDS = {"answer": "answer", "plan": "analysis"}
"""The field a person reads first, per request form."""
MAX_PROSE_CHARS = 4000
"""Longest prose shown while it streams (the plan view caps its analysis at 2,000)."""


@dataclass
class StreamedReply:
    """One model call's reply text, piece by piece, as the provider receives it."""

    form: str
    """The request form (:mod:`annactl.planning.forms`): which field is prose."""
    call: int
    """The model call's number in its request (a repair or refinement is a new reply)."""
    pieces: list[str] = field(default_factory=list)
    """Appended by the planner's thread only; readers take a snapshot (``list(pieces)``)."""

    def append(self, piece: str) -> None:
        """The provider's ``on_text``."""
        self.pieces.append(piece)

    def prose(self) -> str | None:
        """The prose written so far (None: this form has none, or it is not JSON)."""
        name = PROSE_FIELDS.get(self.form)
        if name is None:
            return None
        return prose("".join(list(self.pieces)), name)


def prose(text: str, name: str) -> str | None:
    """Field ``name`` of the partial JSON object ``text`` (a code fence before it allowed);
    None when ``text`` is not the start of an object or the field is not a string yet."""
    from pydantic_core import from_json

    start = text.lstrip()
    if start.startswith("```"):
        start = start.partition("\n")[2].lstrip()
    if not start.startswith("{"):
        return None
    try:
        value = from_json(start, allow_partial="trailing-strings")
    except ValueError:
        return None
    found = value.get(name) if isinstance(value, dict) else None
    return found[:MAX_PROSE_CHARS] if isinstance(found, str) else None
