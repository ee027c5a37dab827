"""The plan schema's digest kept between runs (annactl/planning/schemahash.py): the same value
as computing it, recomputed when what the schema is made of changes, never trusted blindly."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from anna_common import plan
from annactl.planning import schemahash


def _counting(value: str) -> tuple[list[int], Callable[[], str]]:
    calls: list[int] = []

    def compute() -> str:
        calls.append(1)
        return value

    return calls, compute


def test_cached_digest_is_computed_once_per_key(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "schema_sha256"
    calls, compute = _counting("a" * 64)
    assert schemahash.cached_digest(path, "k1", compute) == "a" * 64
    assert schemahash.cached_digest(path, "k1", compute) == "a" * 64
    assert len(calls) == 1 and path.read_text() == f"k1 {'a' * 64}\n"
    # another key (an edited plan.py, another pydantic): computed afresh and stored
    calls2, compute2 = _counting("b" * 64)
    assert schemahash.cached_digest(path, "k2", compute2) == "b" * 64
    assert len(calls2) == 1 and path.read_text().startswith("k2 ")
    assert [p.name for p in path.parent.iterdir()] == ["schema_sha256"]  # no partial left


def test_a_damaged_cache_is_never_believed(tmp_path: Path) -> None:
    path = tmp_path / "schema_sha256"
    for text in ("k1 " + "z" * 64, "k1 " + "a" * 63, "k1", "", "k1 a b", "\xff\xfe"):
        path.write_text(text, encoding="latin-1")
        calls, compute = _counting("c" * 64)
        assert schemahash.cached_digest(path, "k1", compute) == "c" * 64
        assert calls == [1], text


def test_an_unwritable_cache_still_answers(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    calls, compute = _counting("d" * 64)
    path = blocker / "anna" / "schema_sha256"
    assert schemahash.cached_digest(path, "k", compute) == "d" * 64
    assert schemahash.cached_digest(path, "k", compute) == "d" * 64
    assert calls == [1, 1]


def test_the_key_follows_the_schema_sources() -> None:
    key = schemahash.schema_key()
    assert len(key) == 64 and key == schemahash.schema_key()
    source = Path(str(plan.__file__)).read_bytes()
    assert source  # the key hashes plan.py's bytes: an edit to it changes the key


def test_the_cached_digest_is_anna_commons(tmp_path: Path) -> None:
    """In fresh processes (the first writes the cache, the second reads it), under this test's
    XDG_CACHE_HOME: both give anna_common.plan.schema_sha256()."""
    code = ("from annactl.planning.schemahash import schema_sha256, cache_dir; "
            "print(schema_sha256(), (cache_dir() / 'schema_sha256').exists())")
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout.split()
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.split()
    assert first == [plan.schema_sha256(), "True"] and second == first
    assert (schemahash.cache_dir() / "schema_sha256").read_text().split()[1] == first[0]
