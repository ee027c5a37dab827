"""Remembered preferences: a small whitelist of keys, kept in the state dir (seeds 003/004).

Only :data:`WHITELIST` keys are stored, whatever a sentence or a model says
(seed 004's memory whitelist), each value checked by its key's rule (a program
name, a directory path, a language). The memory goes to the model in every mode
as an **untrusted** document of the user message (never the system message):
a value is text someone typed or a model proposed, so it is data, never an
instruction. ``parse_remember`` understands sentences like "remember my editor
is nvim" or "remember that I use paru as my AUR helper".

A model may propose a ``memory_patch``; :func:`review_patch` keeps the
whitelisted, valid entries and reports the rest (``SCOPE_VIOLATION``), and
:meth:`Memory.apply` writes the accepted ones only if the memory is still the
version the model saw (else ``VERSION_CONFLICT``). Applying is the caller's job
and always follows the person's yes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

from anna_common.errors import AnnaError, ErrorCode, UsageError
from anna_common.levels import canonical_json
from anna_common.positional import MEMORY_VALUE_CHARS
from annactl.core.lazyre import lazy

log = logging.getLogger(__name__)

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
_TEXT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._+-]{0,63}$")
_DIR = re.compile(r"^(?:~|/)[A-Za-z0-9 ._+/~-]{0,200}$")
RULES: dict[str, tuple[re.Pattern[str], str]] = {
    "editor": (_NAME, "a program name"),
    "aur_helper": (_NAME, "a program name"),
    "shell": (_NAME, "a program name"),
    "terminal": (_NAME, "a program name"),
    "wallpaper_backend": (_NAME, "a program name"),
    "wallpaper_dir": (_DIR, "a directory path starting with / or ~"),
    "language": (_TEXT, "letters, digits, spaces and . _ + -"),
}
"""Key → (the rule its value must match, how to say it)."""
WHITELIST = frozenset(RULES)
"""The only keys that can be remembered."""
FILE_NAME = "memory.json"
MAX_VALUE_CHARS = MEMORY_VALUE_CHARS
MAX_PATCH_KEYS = 8
"""A model proposal with more entries is not offered at all."""

_KEY_WORDS = {
    "wallpaper backend": "wallpaper_backend", "wallpaper tool": "wallpaper_backend",
    "wallpaper setter": "wallpaper_backend", "wallpaper program": "wallpaper_backend",
    "editor": "editor", "text editor": "editor", "aur helper": "aur_helper",
    "language": "language", "preferred language": "language",
    "shell": "shell", "login shell": "shell", "terminal": "terminal",
    "terminal emulator": "terminal",
}
_KEYS = "|".join(sorted((re.escape(k) for k in _KEY_WORDS), key=len, reverse=True))
_VALUE = r"([A-Za-z0-9][A-Za-z0-9 ._+-]{0,63}?)"
_IS = lazy(rf"(?i)^remember(?: that)? my ({_KEYS}) is {_VALUE}[.! ]*$")
_USE = lazy(rf"(?i)^remember(?: that)? i (?:use|prefer) {_VALUE} (?:as|for) my ({_KEYS})"
                  r"[.! ]*$")
_DIR_IS = lazy(r"(?i)^remember(?: that)? my wallpaper (?:directory|folder|dir) is "
                     r"((?:~|/)[A-Za-z0-9 ._+/~-]{0,200}?)[.! ]*$")


def parse_remember(text: str) -> tuple[str, str] | None:
    """(key, value) from a "remember ..." sentence about a whitelisted key, else None."""
    sentence = " ".join(text.split())
    found = _DIR_IS().match(sentence)
    if found:
        return "wallpaper_dir", found.group(1).strip()
    found = _IS().match(sentence)
    if found:
        return _KEY_WORDS[found.group(1).lower()], found.group(2).strip()
    found = _USE().match(sentence)
    if found:
        return _KEY_WORDS[found.group(2).lower()], found.group(1).strip()
    return None


def check(key: str, value: str) -> str:
    """The value to store, or a usage error for a key outside the whitelist or an odd value."""
    if key not in WHITELIST:
        raise UsageError(f"{key!r} cannot be remembered",
                         hint=f"rememberable: {', '.join(sorted(WHITELIST))}")
    clean = value.strip()
    rule, says = RULES[key]
    if not clean or len(clean) > MAX_VALUE_CHARS or not rule.match(clean) or \
            "/../" in f"{clean}/":
        raise UsageError(f"{clean[:40]!r} is not a valid {key}", hint=f"{key} is {says}")
    return clean


def valid(key: str, value: object) -> bool:
    """``value`` is acceptable for the whitelisted ``key``."""
    if key not in WHITELIST or not isinstance(value, str):
        return False
    try:
        check(key, value)
    except UsageError:
        return False
    return True


def version_of(memory: dict[str, str] | None) -> str:
    """A short digest of a memory's contents."""
    return hashlib.sha256(canonical_json(dict(memory or {}))).hexdigest()[:16]


@dataclass
class PatchReview:
    """A model's ``memory_patch`` sorted into what may be offered and what may not."""

    changes: dict[str, str]
    """Whitelisted keys with valid values that differ from the memory (``""`` = forget)."""
    refused: dict[str, str]
    """Key → why it is not offered (``SCOPE_VIOLATION``: not whitelisted; or a bad value)."""
    base_version: str
    """:meth:`Memory.version` the proposal is judged against."""


def review_patch(patch: dict[str, str], current: dict[str, str],
                 base_version: str) -> PatchReview:
    """Sort a proposal; nothing is written here."""
    changes: dict[str, str] = {}
    refused: dict[str, str] = {}
    if len(patch) > MAX_PATCH_KEYS:
        return PatchReview({}, {"*": f"{len(patch)} entries; at most {MAX_PATCH_KEYS}"},
                           base_version)
    for key, value in sorted(patch.items()):
        if key not in WHITELIST:
            refused[key] = f"{ErrorCode.SCOPE_VIOLATION}: not a rememberable key"
        elif value == "":
            if key in current:
                changes[key] = ""
        elif not valid(key, value):
            refused[key] = f"not a valid {key} ({RULES[key][1]})"
        elif current.get(key) != value.strip():
            changes[key] = value.strip()
    return PatchReview(changes, refused, base_version)


class Memory:
    """Preferences in ``state_dir/memory.json`` (0600)."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / FILE_NAME
        """The JSON file."""

    def all(self) -> dict[str, str]:
        """Every remembered preference (unknown keys and bad values in the file are ignored)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable %s: %s", self.path, exc)
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in sorted(data.items()) if valid(k, v)}

    def version(self) -> str:
        """A short digest of the current memory (what a proposal was made against)."""
        return version_of(self.all())

    def apply(self, changes: dict[str, str], base_version: str) -> None:
        """Write accepted ``changes`` (``""`` forgets) if the memory is still ``base_version``."""
        data = self.all()
        if self.version() != base_version:
            raise AnnaError("the memory changed since the model proposed this; nothing was "
                            "remembered", code=ErrorCode.VERSION_CONFLICT,
                            hint="ask again, or use annactl memory set")
        for key, value in changes.items():
            if value == "":
                data.pop(key, None)
            else:
                data[key] = check(key, value)
        self._write(data)

    def get(self, key: str) -> str | None:
        """One preference."""
        return self.all().get(key)

    def set(self, key: str, value: str) -> None:
        """Remember ``key`` (whitelisted) as ``value``."""
        data = self.all()
        data[key] = check(key, value)
        self._write(data)

    def forget(self, key: str) -> bool:
        """Forget ``key``; True when it was remembered."""
        data = self.all()
        if data.pop(key, None) is None:
            return False
        self._write(data)
        return True

    def _write(self, data: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
        tmp.replace(self.path)
