"""Remembered preferences: a small whitelist of keys the user sets, kept in the state dir.

Only :data:`WHITELIST` keys are stored, whatever a sentence or a model says
(seed 004's memory whitelist). Values are short plain text. They go into the
user message as the user's own (trusted) settings, never into the system
message. ``parse_remember`` understands sentences like "remember my editor is
nvim" or "remember that I use paru as my AUR helper".
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path

from anna_common.errors import UsageError

log = logging.getLogger(__name__)

WHITELIST = frozenset({"wallpaper_backend", "editor", "aur_helper", "language"})
"""The only keys that can be remembered."""
FILE_NAME = "memory.json"
MAX_VALUE_CHARS = 64

_KEY_WORDS = {
    "wallpaper backend": "wallpaper_backend", "wallpaper tool": "wallpaper_backend",
    "wallpaper setter": "wallpaper_backend", "wallpaper program": "wallpaper_backend",
    "editor": "editor", "text editor": "editor", "aur helper": "aur_helper",
    "language": "language", "preferred language": "language",
}
_KEYS = "|".join(sorted((re.escape(k) for k in _KEY_WORDS), key=len, reverse=True))
_VALUE = r"([A-Za-z0-9][A-Za-z0-9 ._+-]{0,63}?)"
_IS = re.compile(rf"(?i)^remember(?: that)? my ({_KEYS}) is {_VALUE}[.! ]*$")
_USE = re.compile(rf"(?i)^remember(?: that)? i (?:use|prefer) {_VALUE} (?:as|for) my ({_KEYS})"
                  r"[.! ]*$")
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._+-]*$")


def parse_remember(text: str) -> tuple[str, str] | None:
    """(key, value) from a "remember ..." sentence about a whitelisted key, else None."""
    sentence = " ".join(text.split())
    found = _IS.match(sentence)
    if found:
        return _KEY_WORDS[found.group(1).lower()], found.group(2).strip()
    found = _USE.match(sentence)
    if found:
        return _KEY_WORDS[found.group(2).lower()], found.group(1).strip()
    return None


def check(key: str, value: str) -> str:
    """The value to store, or a usage error for a key outside the whitelist or an odd value."""
    if key not in WHITELIST:
        raise UsageError(f"{key!r} cannot be remembered",
                         hint=f"rememberable: {', '.join(sorted(WHITELIST))}")
    clean = value.strip()
    if not clean or len(clean) > MAX_VALUE_CHARS or not _SAFE.match(clean):
        raise UsageError(f"{clean[:40]!r} is not a plain short value for {key}",
                         hint="letters, digits, spaces and . _ + - only")
    return clean


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
        return {k: v for k, v in sorted(data.items())
                if k in WHITELIST and isinstance(v, str) and _SAFE.match(v)
                and len(v) <= MAX_VALUE_CHARS}

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
