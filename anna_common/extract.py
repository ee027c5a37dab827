"""Taking the one JSON object out of a model reply, strictly.

A reply is a plan only when it holds exactly one complete top-level JSON object.
The rules, and why each is strict:

- The whole reply is tried first (the normal case under a JSON-Schema grammar). A reply that
  is JSON but not an object (an array, a string) is not a plan: the object inside an array
  is never taken, because a *nested* object is never the plan.
- Closed ``<think>…</think>`` blocks are reasoning, dropped before scanning. An unclosed
  ``<think>`` ends the usable text: an object inside unfinished reasoning is not a plan.
- Otherwise the text is scanned for top-level bracketed segments, string- and escape-aware.
  A segment that never closes means the reply was cut off (or a brace is missing):
  ``PARSE_ERROR``. A segment that closes but is not JSON (``//`` comments, trailing commas,
  single quotes) is skipped *as a whole*: its nested objects are never candidates. The old
  scanner restarted at the next ``{`` and handed a nested check to the validator, which
  then reported a dozen misleading schema errors and misled the repair prompt.
- Prose and code fences around one object are tolerated; two objects are ambiguous (which
  one is the plan?) and refused.
- One leading byte-order mark is an encoding artefact and is removed; anywhere else it is
  not JSON whitespace and the object does not parse.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_REPLY_CHARS = 1_000_000
"""Longer model replies are refused outright."""

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_OPEN = "{["
_CLOSE = "}]"


class ExtractError(ValueError):
    """No single JSON object could be taken from the text (reported as ``PARSE_ERROR``)."""


def loads(text: str) -> Any:
    """``json.loads`` tolerating raw control characters inside strings.

    strict=False: a small model under schema-constrained decoding emits raw newlines and
    tabs in strings (measured); nothing else is relaxed.
    """
    return json.loads(text, strict=False)


@dataclass
class _Scan:
    objects: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False
    invalid: str = ""
    invalid_source: str = ""
    arrays: int = 0


def _segment_end(text: str, start: int) -> int | None:
    """Index just past the bracketed segment opening at ``start``; None when it never closes."""
    depth = 0
    in_string = escape = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _scan(text: str) -> _Scan:
    """Every top-level segment of ``text``; nested ones are never looked at."""
    found = _Scan()
    i = 0
    while True:
        starts = [p for p in (text.find(c, i) for c in _OPEN) if p != -1]
        if not starts:
            return found
        start = min(starts)
        end = _segment_end(text, start)
        if end is None:
            found.truncated = True
            return found
        try:
            value = loads(text[start:end])
        except (ValueError, RecursionError) as exc:
            if text[start] == "{" and len(text[start:end]) > len(found.invalid_source):
                found.invalid = _why(exc)
                found.invalid_source = text[start:end]
        else:
            if isinstance(value, dict):
                found.objects.append(value)
            else:
                found.arrays += 1
        i = end



def _why(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    return "nested too deeply"


def _visible(text: str) -> str:
    """The text outside reasoning blocks; an unclosed ``<think>`` hides everything after it."""
    closes = list(_THINK_CLOSE.finditer(text))
    if closes and not _THINK_OPEN.search(text[:closes[0].start()]):
        # the chat template opened the block in the prompt: the reply starts inside it
        text = text[closes[0].end():]
    visible = _THINK_BLOCK.sub(" ", text)
    opened = _THINK_OPEN.search(visible)
    if opened is None:
        return visible
    if not visible[:opened.start()].strip():
        raise ExtractError("the reply is an unfinished <think> block; reasoning is not a plan")
    return visible[:opened.start()]


def extract_json(text: str) -> dict[str, Any]:
    """The one top-level JSON object in a model reply; raises :class:`ExtractError`."""
    if not isinstance(text, str):
        raise ExtractError("the reply is not text")
    if len(text) > MAX_REPLY_CHARS:
        raise ExtractError(f"the reply is longer than {MAX_REPLY_CHARS} characters")
    body = text[1:] if text.startswith("\ufeff") else text
    try:
        value = loads(body.strip())
    except (ValueError, RecursionError):
        pass
    else:
        if isinstance(value, dict):
            return value
        raise ExtractError(f"the reply is a JSON {type(value).__name__}, not one object")
    found = _scan(_visible(body))
    if found.truncated:
        raise ExtractError("the reply ends before its JSON closes (cut off, or a bracket is "
                           "missing); send one complete JSON object")
    if len(found.objects) > 1:
        raise ExtractError(f"the reply holds {len(found.objects)} JSON objects; send exactly "
                           "one")
    if found.objects:
        return found.objects[0]
    if found.invalid:
        raise ExtractError(f"the reply's object is not valid JSON ({found.invalid}); comments, "
                           "trailing commas and single quotes are not JSON")
    if found.arrays:
        raise ExtractError("the reply holds a JSON array, not one object")
    raise ExtractError("no JSON object found in the reply")
