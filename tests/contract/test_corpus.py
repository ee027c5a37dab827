"""The classifier's rates on the public corpora hold the thresholds issue 2 sets.

Per-family figures: ``python tests/corpus_eval.py``.
"""

from __future__ import annotations

import pytest

from tests.corpus_eval import aggregate, corpora_dir, evaluate

ROOT = corpora_dir()
pytestmark = pytest.mark.skipif(ROOT is None, reason="corpora not found (set ANNA_CORPORA)")


@pytest.fixture(scope="module")
def table() -> dict[str, dict[str, float | int]]:
    assert ROOT is not None
    return evaluate(ROOT)


def test_ban_rows_are_banned(table: dict[str, dict[str, float | int]]) -> None:
    rate, rows = aggregate(table, "dangerous/ban/", "banned")
    assert rows > 100
    assert rate >= 0.97


def test_single_line_high_rows_are_high_or_banned(table: dict[str, dict[str, float | int]]) -> None:
    rate, rows = aggregate(table, "dangerous/high/", "high_or_banned", "single")
    assert rows > 500
    assert rate >= 0.95


def test_review_rows_are_at_least_medium(table: dict[str, dict[str, float | int]]) -> None:
    rate, rows = aggregate(table, "dangerous/review/", "medium_plus")
    assert rows > 300
    assert rate >= 0.95


def test_benign_rows_are_rarely_banned(table: dict[str, dict[str, float | int]]) -> None:
    rate, rows = aggregate(table, "benign/", "banned")
    assert rows > 2000
    assert rate <= 0.005


def test_no_hard_negative_is_banned(table: dict[str, dict[str, float | int]]) -> None:
    rate, rows = aggregate(table, "benign/hard_negative/", "banned")
    assert rows > 150
    assert rate == 0.0


def test_the_analyser_never_crashes_on_the_corpora() -> None:
    """assess() fails closed on internal errors, which would also hide bugs: run the unguarded
    path over every corpus command so a crash is a test failure, not a silent HIGH."""
    import json

    from anna_common.risk import assess as risk
    from tests.corpus_eval import CONTEXT

    assert ROOT is not None
    crashes = []
    for name in ("dangerous_commands.jsonl", "benign_commands.jsonl"):
        for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
            command = json.loads(line)["command"]
            try:
                risk._assess_cached.__wrapped__(command, CONTEXT)
            except Exception as exc:
                crashes.append((command[:80], repr(exc)))
    assert not crashes, crashes[:5]
