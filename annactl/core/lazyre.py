"""Regular expressions compiled on first use, not at import.

Compiling a pattern is pure Python (``re._parser``, ``re._compiler``) and costs about as
much as importing a small module; a module imported on every planning path but whose
patterns only some requests reach (the model's claims, "remember …" sentences) would pay
for all of them on every start (``annactl "how is my system?"`` offline, bench/startup.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache


def lazy(pattern: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """A function returning ``re.compile(pattern, flags)``, compiled on its first call."""

    @cache
    def compiled() -> re.Pattern[str]:
        return re.compile(pattern, flags)

    return compiled
