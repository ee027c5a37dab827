"""The plan schema's sha256, kept on disk between runs (keyed by what the schema is made of).

Every planning run records :func:`anna_common.plan.schema_sha256` (its request packet, its
audit record), even one a template answers offline; generating the JSON Schema to hash it
cost ~35M instructions, a tenth of that answer's budget over a bare interpreter
(``bench/startup.py``, issue 23.7). The schema is a function of ``anna_common/plan.py``,
``anna_common/levels.py`` (its enums), pydantic and Python: the digest is stored under
``$XDG_CACHE_HOME/anna/`` with a key hashed from those files' bytes and those versions, so an
edited model or another pydantic computes it afresh. A cache that cannot be read or written
only costs the computation.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

FILE_NAME = "schema_sha256"


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/anna`` (default ``~/.cache/anna``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "anna"


def schema_key() -> str:
    """What the schema is made of, hashed: the sources of its models and the versions of
    pydantic, pydantic-core and Python."""
    import pydantic_core
    from pydantic.version import VERSION

    from anna_common import levels, plan

    digest = hashlib.sha256()
    for part in (VERSION, pydantic_core.__version__, sys.version):
        digest.update(part.encode() + b"\0")
    for module in (plan, levels):
        digest.update(Path(str(module.__file__)).read_bytes() + b"\0")
    return digest.hexdigest()


def cached_digest(path: Path, key: str, compute: Callable[[], str]) -> str:
    """``compute()``, or the digest stored in ``path`` under the same ``key``; a fresh one is
    stored (atomically: a reader never sees half a file)."""
    try:
        stored_key, digest = path.read_text(encoding="ascii").split()
        if stored_key == key and len(digest) == 64 and set(digest) <= set("0123456789abcdef"):
            return digest
    except (OSError, ValueError, UnicodeError):
        pass  # absent, unreadable or not ours: computed again
    digest = compute()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(f"{key} {digest}\n", encoding="ascii")
        partial.replace(path)
    except OSError:
        pass  # a read-only home: computed on every run, as before
    return digest


@cache
def schema_sha256() -> str:
    """:func:`anna_common.plan.schema_sha256`, from the cache when its sources are unchanged."""
    from anna_common import plan

    return cached_digest(cache_dir() / FILE_NAME, schema_key(), plan.schema_sha256)
